/* libfcclock: shifts the wall clock (CLOCK_REALTIME and CLOCK_REALTIME_COARSE, through
 * clock_gettime, gettimeofday and time) of one process by an offset that the controller
 * changes at run time. Every other clock is left alone: CLOCK_MONOTONIC stays the host's,
 * so history times and timeouts are not disturbed.
 *
 * Loaded with LD_PRELOAD into every process of a node (Runtime's spec decorator). The
 * offset lives in the first 8 bytes of the file named by FENCECHECK_CLOCK_FILE: a signed
 * number of nanoseconds, read atomically on every call from a shared read-only mapping.
 *
 * Why so little: libfaketime deadlocks redis-server at start-up because its dlsym() calls
 * re-enter jemalloc. This library never calls dlsym, never allocates and takes no lock:
 * the real clocks are read through the kernel's vDSO, found by walking its ELF symbol
 * table from getauxval(AT_SYSINFO_EHDR) (a raw system call when there is none), the file
 * is opened and mapped on the first call only (open/mmap are system calls too), and a
 * missing or unreadable file means an offset of zero, never a failure of the host
 * program.
 *
 * Why the vDSO: redis-server reads the clock about 9 times per command and a worker twice
 * per op. As a system call each read cost 1.2 us on the 2-core test VM, against 28 ns
 * through the vDSO; that made the shim a large share of every op's CPU. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* glibc declares the pointers below nonnull, but a program may pass NULL anyway (the
 * kernel answers EFAULT); this library must not crash where libc would not. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"

#define NOT_MAPPED ((const int64_t*)1)

static const int64_t* volatile offset_page = NOT_MAPPED; /* NULL: no file */

static const int64_t* page(void) {
  const int64_t* p = __atomic_load_n(&offset_page, __ATOMIC_ACQUIRE);
  if (p != NOT_MAPPED) return p;
  const int64_t* mapped = NULL;
  const char* path = getenv("FENCECHECK_CLOCK_FILE");
  if (path != NULL && path[0] != '\0') {
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      void* m = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
      if (m != MAP_FAILED) mapped = (const int64_t*)m;
      syscall(SYS_close, fd);
    }
  }
  /* Two threads may race to map it; the loser's extra mapping is harmless. */
  __atomic_store_n(&offset_page, mapped, __ATOMIC_RELEASE);
  return mapped;
}

static int64_t offset_ns(void) {
  const int64_t* p = page();
  return p == NULL ? 0 : __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void shift(struct timespec* ts, int64_t ns) {
  int64_t total = (int64_t)ts->tv_nsec + ns % 1000000000LL;
  ts->tv_sec += (time_t)(ns / 1000000000LL + total / 1000000000LL);
  total %= 1000000000LL;
  if (total < 0) {
    total += 1000000000LL;
    ts->tv_sec -= 1;
  }
  ts->tv_nsec = (long)total;
}

/* p, with its origin hidden from the optimiser: glibc declares the pointers of
 * clock_gettime and gettimeofday nonnull, so GCC would drop a NULL test on them. */
static void* opaque(void* p) {
  __asm__("" : "+r"(p));
  return p;
}

typedef int (*clock_fn)(clockid_t, struct timespec*);

#define NOT_LOOKED_UP ((clock_fn)1)

static clock_fn volatile vdso_clock = NOT_LOOKED_UP; /* NULL: no vDSO, use the system call */

static int same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

/* The vDSO's __vdso_clock_gettime, or NULL. Reads only the vDSO image the kernel mapped
 * into every process: its program headers give the load offset and the dynamic section,
 * the dynamic section the symbol and string tables, and DT_HASH the number of symbols. */
static clock_fn find_vdso_clock(void) {
  const ElfW(Ehdr)* eh = (const ElfW(Ehdr)*)getauxval(AT_SYSINFO_EHDR);
  if (eh == NULL) return NULL;
  const char* image = (const char*)eh;
  const ElfW(Phdr)* ph = (const ElfW(Phdr)*)(image + eh->e_phoff);
  const ElfW(Dyn)* dyn = NULL;
  ElfW(Addr) load_offset = 0;
  int loaded = 0;
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type == PT_LOAD && !loaded) {
      load_offset = (ElfW(Addr))image + ph[i].p_offset - ph[i].p_vaddr;
      loaded = 1;
    } else if (ph[i].p_type == PT_DYNAMIC) {
      dyn = (const ElfW(Dyn)*)(image + ph[i].p_offset);
    }
  }
  if (!loaded || dyn == NULL) return NULL;
  const ElfW(Sym)* symbols = NULL;
  const char* names = NULL;
  const ElfW(Word)* hash = NULL;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    const ElfW(Addr) at = dyn->d_un.d_ptr + load_offset;
    if (dyn->d_tag == DT_SYMTAB) symbols = (const ElfW(Sym)*)at;
    if (dyn->d_tag == DT_STRTAB) names = (const char*)at;
    if (dyn->d_tag == DT_HASH) hash = (const ElfW(Word)*)at;
  }
  if (symbols == NULL || names == NULL || hash == NULL) return NULL;
  for (ElfW(Word) i = 0; i < hash[1]; ++i) { /* hash[1]: the number of symbols */
    const ElfW(Sym)* sym = &symbols[i];
    if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF) continue;
    if (same_name(names + sym->st_name, "__vdso_clock_gettime")) return (clock_fn)(sym->st_value + load_offset);
  }
  return NULL;
}

static int real_clock_gettime(clockid_t clock, struct timespec* ts) {
  clock_fn fn = __atomic_load_n(&vdso_clock, __ATOMIC_ACQUIRE);
  if (fn == NOT_LOOKED_UP) {
    fn = find_vdso_clock(); /* two threads may both look: same answer */
    __atomic_store_n(&vdso_clock, fn, __ATOMIC_RELEASE);
  }
  /* The vDSO writes through ts directly; NULL must give EFAULT as the system call does. */
  struct timespec* out = opaque(ts);
  if (fn == NULL || out == NULL) return (int)syscall(SYS_clock_gettime, clock, out);
  int rc = fn(clock, out); /* like the kernel, -errno on failure (an unknown clock) */
  if (rc < 0) {
    errno = -rc;
    return -1;
  }
  return rc;
}

/* Called by the exported functions below directly, not through the exported name, so that each is the
 * shim's own wherever the library sits in the lookup order. */
static int shifted_clock_gettime(clockid_t clock, struct timespec* ts) {
  int rc = real_clock_gettime(clock, ts);
  if (rc == 0 && ts != NULL && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
    shift(ts, offset_ns());
  }
  return rc;
}

int clock_gettime(clockid_t clock, struct timespec* ts) { return shifted_clock_gettime(clock, ts); }

int gettimeofday(struct timeval* tv, void* tz) {
  struct timespec ts;
  if (tz != NULL) {
    struct timezone* z = (struct timezone*)tz;
    z->tz_minuteswest = 0;
    z->tz_dsttime = 0;
  }
  if (opaque(tv) == NULL) return 0;
  int rc = shifted_clock_gettime(CLOCK_REALTIME, &ts);
  if (rc == 0) {
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  return rc;
}

time_t time(time_t* out) {
  struct timespec ts;
  if (shifted_clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
