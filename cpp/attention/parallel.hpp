// Threads for the kernels: a fixed split of a range of independent items (a matmul's column
// panels) over a small pool, so that which thread computes an item never changes its value.
#pragma once

#include <cstddef>
#include <functional>

namespace attn {

// How many threads the kernels use now (1: the calling thread alone, the default).
std::size_t thread_count();
// The most this build can use: 1 without thread support (ATTN_THREADS=0, the single-threaded
// wasm build), else kMaxThreads.
std::size_t max_threads();
inline constexpr std::size_t kMaxThreads = 16;
// Uses `count` threads from now on (the caller and count - 1 workers, started or stopped here);
// 0 or more than max_threads() throws attn::Error naming the limit.
void set_thread_count(std::size_t count);

// The least work (multiply-adds) worth handing to another thread: handing a part over and waiting
// for it costs tens of microseconds in wasm, so a compute-bound part (a product of many rows, a
// group of heads) must hold about as much; a one-row product reads a weight per multiply-add
// (memory-bound, ~8× slower per multiply-add), so its parts can be smaller.
inline constexpr std::size_t kParallelMultiplyAdds = std::size_t{1} << 21;
inline constexpr std::size_t kParallelRowMultiplyAdds = std::size_t{1} << 17;

// Runs body(begin, end) over [0, items) split into at most thread_count() contiguous parts of at
// least min_items each, one per thread, the calling thread taking the first; returns when all are
// done. Each item is in exactly one part, so a body whose items are independent computes the same
// values for any thread count. Called from inside a body (or with one part) it runs inline.
void parallel_for(std::size_t items, std::size_t min_items,
                  const std::function<void(std::size_t begin, std::size_t end)>& body);

}  // namespace attn
