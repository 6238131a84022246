// The free functions bound for JS: the catalog, tokenize, readInAlphabet, numpyRandn, build facts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bindings/common.hpp"

namespace attn::bindings {

// The step catalog, the option names, the defaults and the limits (lens.catalog).
val catalog();

// np.random.RandomState(seed).randn(count): a view the JS API copies at once.
val numpyRandn(std::uint32_t seed, std::size_t count);

// {tokens: string[], ids: number[]}.
val tokenize(const std::string& text, const std::string& mode);

// A character model's text in its alphabet: { ids: Int32Array (a copy), tokens, mapped:
// [{ position, typed, read, how }], note }.
val readInAlphabet(const std::string& text, const std::string& alphabet, const std::string& owner,
                   const std::string& unknown);

// The SIMD architecture the kernels were built for (simd::arch_name).
std::string simdArch();
// Bytes of the wasm heap in use (mallinfo).
std::size_t heapInUse();
// The core's thread pool (attn::set_thread_count: count threads in all; {error} beyond the build's
// limit) and its size now.
val setThreads(std::size_t count);
std::size_t threadCount();

}  // namespace attn::bindings
