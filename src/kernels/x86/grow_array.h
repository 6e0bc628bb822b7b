// An array grown to the largest size asked for (a tile's per-thread terms, an attention call's
// rotated queries): no allocation once warm. Internal linkage (an unnamed namespace), like
// every helper the x86/ files share: each file compiles its own copy with its own ISA flags
// (see simd_avx512.h on why that matters).
#pragma once

#include <cstddef>

namespace cohort::kernels {
namespace {

template <typename T>
class GrowArray {
 public:
  GrowArray() = default;
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  ~GrowArray() { delete[] p_; }
  // At least n elements (their values undefined after a growth).
  T* reserve(size_t n) {
    if (n > capacity_) {
      delete[] p_;
      p_ = new T[n];
      capacity_ = n;
    }
    return p_;
  }
  const T* data() const { return p_; }

 private:
  T* p_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace
}  // namespace cohort::kernels
