// The quantized weights' kernels timed one at a time for attention_bench (quantized-kernels.cpp).
#pragma once

// Prints the one-row kernel's weight bytes streamed per second and the prompt kernel's GFLOP/s for
// each kept GGUF format, and the float32 / BF16 paths, on 1 and 2 threads.
void bench_quantized_kernels();
