// attention_bench --quantized's table as a program of its own, for the wasm build (the kernels as
// the page runs them): node build/wasm-release/quantized-kernels.cjs (built by scripts/build.sh).
#include "quantized-kernels.hpp"

int main() {
  bench_quantized_kernels();
}
