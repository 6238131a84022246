// Shapes, row-major matrix views and 64-byte-aligned owning buffers shared by every op.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace attn {

inline constexpr std::size_t kAlignment = 64;

// std::allocator replacement that aligns every buffer to kAlignment bytes.
template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() noexcept = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
  T* allocate(std::size_t count) {
    return static_cast<T*>(::operator new (count * sizeof(T), std::align_val_t{kAlignment}));
  }
  void deallocate(T* ptr, std::size_t) noexcept {
    ::operator delete (ptr, std::align_val_t{kAlignment});
  }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

// A row-major view: element (r, c) lives at data[r * stride + c]. Does not own its data.
template <class T>
struct MatrixView {
  T* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t stride = 0;  // elements between the starts of consecutive rows (>= cols)

  MatrixView() = default;
  MatrixView(T* d, std::size_t r, std::size_t c) : data(d), rows(r), cols(c), stride(c) {}
  MatrixView(T* d, std::size_t r, std::size_t c, std::size_t s)
      : data(d), rows(r), cols(c), stride(s) {}
  // A mutable view converts to a read-only one.
  template <class U>
  MatrixView(const MatrixView<U>& other)  // NOLINT(google-explicit-constructor)
      : data(other.data), rows(other.rows), cols(other.cols), stride(other.stride) {}

  T& operator()(std::size_t r, std::size_t c) const {
    assert(r < rows && c < cols);
    return data[r * stride + c];
  }
  T* row(std::size_t r) const { return data + r * stride; }
  // Columns [first, first + count) of every row: e.g. one head's slice of Q.
  MatrixView col_block(std::size_t first, std::size_t count) const {
    assert(first + count <= cols);
    return MatrixView(data + first, rows, count, stride);
  }
  // Rows [first, first + count).
  MatrixView row_block(std::size_t first, std::size_t count) const {
    assert(first + count <= rows);
    return MatrixView(data + first * stride, count, cols, stride);
  }
  std::size_t size() const { return rows * cols; }
};

using MatView = MatrixView<float>;
using ConstMatView = MatrixView<const float>;

// An owning, dense (stride == cols), aligned row-major float matrix.
class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols, float fill = 0.0f)
      : rows_(rows), cols_(cols), data_(rows * cols, fill) {}

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t size() const { return data_.size(); }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  float& operator()(std::size_t r, std::size_t c) { return data_[r * cols_ + c]; }
  float operator()(std::size_t r, std::size_t c) const { return data_[r * cols_ + c]; }
  float* row(std::size_t r) { return data_.data() + r * cols_; }
  const float* row(std::size_t r) const { return data_.data() + r * cols_; }

  MatView view() { return MatView(data_.data(), rows_, cols_); }
  ConstMatView view() const { return ConstMatView(data_.data(), rows_, cols_); }
  operator MatView() { return view(); }             // NOLINT(google-explicit-constructor)
  operator ConstMatView() const { return view(); }  // NOLINT(google-explicit-constructor)

  // Reshapes without preserving contents; reuses the allocation when it is large enough.
  void resize(std::size_t rows, std::size_t cols) {
    rows_ = rows;
    cols_ = cols;
    data_.resize(rows * cols);
  }
  void fill(float value) { std::fill(data_.begin(), data_.end(), value); }

 private:
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  AlignedVector<float> data_;
};

}  // namespace attn
