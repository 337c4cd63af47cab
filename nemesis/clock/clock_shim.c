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
 * the real clocks are read with raw system calls, the file is opened and mapped on the
 * first call only (open/mmap are system calls too), and a missing or unreadable file
 * means an offset of zero, never a failure of the host program. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
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

int clock_gettime(clockid_t clock, struct timespec* ts) {
  int rc = (int)syscall(SYS_clock_gettime, clock, ts);
  if (rc == 0 && ts != NULL && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
    shift(ts, offset_ns());
  }
  return rc;
}

int gettimeofday(struct timeval* tv, void* tz) {
  struct timespec ts;
  if (tz != NULL) {
    struct timezone* z = (struct timezone*)tz;
    z->tz_minuteswest = 0;
    z->tz_dsttime = 0;
  }
  if (tv == NULL) return 0;
  int rc = clock_gettime(CLOCK_REALTIME, &ts);
  if (rc == 0) {
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  return rc;
}

time_t time(time_t* out) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
