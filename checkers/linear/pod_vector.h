// A growable array of trivially copyable values (partition ops, memo nodes) that grows
// with realloc.
//
// What it promises over std::vector: growing never copies element by element into a new
// block. realloc grows a block in place when it can, and glibc moves a block it got from
// mmap with mremap, without copying or paging in anything; only the elements actually
// written are paged in. (std::vector allocates the new block and copies into it, touching
// about twice the final size; on the shared dev box a page fault costs 13-30 us, more than
// a hundred search steps.) Elsewhere realloc copies, as std::vector would.
//
// reserve() does not initialize elements; push_back() writes them. Throws std::bad_alloc
// when memory runs out. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace fencecheck::linear {

template <class T>
class PodVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  PodVector() = default;
  ~PodVector() { std::free(data_); }
  PodVector(const PodVector& o) { *this = o; }
  PodVector(PodVector&& o) noexcept { swap(o); }
  PodVector& operator=(const PodVector& o) {
    if (this != &o) {
      clear();
      reserve(o.size_);
      if (o.size_ > 0) std::memcpy(static_cast<void*>(data_), o.data_, o.size_ * sizeof(T));
      size_ = o.size_;
    }
    return *this;
  }
  PodVector& operator=(PodVector&& o) noexcept {
    PodVector(std::move(o)).swap(*this);
    return *this;
  }
  void swap(PodVector& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void push_back(const T& v) {
    if (size_ == capacity_) reserve(capacity_ < 16 ? 16 : 2 * capacity_);
    new (data_ + size_++) T(v);
  }
  void clear() { size_ = 0; }  // keeps the capacity

  // Room for `n` elements in all; never shrinks.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    void* grown = std::realloc(static_cast<void*>(data_), n * sizeof(T));
    if (grown == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(grown);
    capacity_ = n;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace fencecheck::linear
