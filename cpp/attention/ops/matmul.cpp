// Packed, cache-blocked, register-tiled matrix product (xsimd), see matmul.hpp.
#include "attention/ops/matmul.hpp"

#include <algorithm>
#include <cassert>
#include <type_traits>

#include "attention/ops/half.hpp"
#include "attention/parallel.hpp"

namespace attn {

namespace {

constexpr std::size_t NR = kPanelWidth;
constexpr std::size_t MR = kTileRows;
// Cache blocking: a [kKBlock, NR] slice of one B panel stays in cache while the kernel walks
// down kRowBlock rows of A, packed ([kRowBlock, kKBlock]). Every model here has k <= 4096 (up
// to 5632 in TinyLlama's MLP), so C is written once: on a 2-core x86 with 1 MB of L2, a
// GPT-2-small forward (k = 768 and 3072) runs 1.07× faster than with k blocks of 512, which
// kept the panel slice in L1 but reloaded C for every block. The scalar build sums each value
// in double over all of k at once (no k blocks), as the reference does.
constexpr std::size_t kKBlock = kMatmulDepthBlock;
constexpr std::size_t kRowBlock = 64 / MR * MR;  // whole row tiles (see pack_row_tiles)

// A panel's rows as the kernels read them: float, or BF16 widened on load (see PackedBf16Matrix).
struct FloatPanel {
  const float* p;
  float value(std::size_t k, std::size_t j) const { return p[k * NR + j]; }
  FloatPanel from(std::size_t k) const { return {p + k * NR}; }
};
struct Bf16Panel {
  const std::uint16_t* p;
#if ATTN_SIMD
  float value(std::size_t k, std::size_t j) const = delete;
#else
  float value(std::size_t k, std::size_t j) const {
    return bf16_to_f32(p[k * NR + j]);
  }
#endif
  Bf16Panel from(std::size_t k) const {
    return {p + k * NR};
  }
};

#if ATTN_SIMD
using simd::Floats;
constexpr std::size_t W = simd::kWidth;
constexpr std::size_t NV = NR / W;  // vectors per tile row
static_assert(NV == 2, "a BF16 panel row interleaves two vectors");
using Lanes = xsimd::batch<std::uint32_t, Floats::arch_type>;

inline void load_row(FloatPanel panel, std::size_t k, Floats* b) {
  for (std::size_t v = 0; v < NV; ++v) b[v] = Floats::load_aligned(panel.p + k * NR + v * W);
}
inline void load_row(Bf16Panel panel, std::size_t k, Floats* b) {
  const Lanes lanes = Lanes::load_aligned(reinterpret_cast<const std::uint32_t*>(panel.p + k * NR));
  b[0] = xsimd::bitwise_cast<float>(lanes << 16);                 // columns 0 … W-1
  b[1] = xsimd::bitwise_cast<float>(lanes & Lanes(0xFFFF0000u));  // columns W … 2W-1
}

// C[ROWS, cols] (+)= A[ROWS, kc] · P[kc, NR] for one panel slice P (cols <= NR valid columns),
// A given as a row tile packed [kc, ROWS] (pack_row_tiles): step k's ROWS values side by side.
// The ROWS × NV accumulators live in registers for the whole k loop; per k step: NV aligned
// loads of P and ROWS broadcast loads of A, each at a fixed offset from a pointer that steps
// (V8 then computes no address per load: ~1.06–1.3× faster than rows of A at a stride), ROWS·NV
// mul + add.
template <std::size_t ROWS, class Panel>
inline void kernel(const float* a, Panel p, std::size_t kc, float* c, std::size_t ldc,
                   std::size_t cols, const float* bias, bool accumulate) {
  alignas(64) float edge[ROWS][NR];  // for a partial panel: C's columns staged here
  Floats acc[ROWS][NV];
  if (accumulate) {
    for (std::size_t r = 0; r < ROWS; ++r) {
      const float* from = c + r * ldc;
      if (cols < NR) {
        std::fill(edge[r], edge[r] + NR, 0.0f);
        std::copy(from, from + cols, edge[r]);
        from = edge[r];
      }
      for (std::size_t v = 0; v < NV; ++v) acc[r][v] = Floats::load_unaligned(from + v * W);
    }
  } else {
    alignas(64) float bias_edge[NR] = {};
    if (bias && cols < NR) {
      std::copy(bias, bias + cols, bias_edge);
      bias = bias_edge;
    }
    for (std::size_t v = 0; v < NV; ++v) {
      const Floats init = bias ? Floats::load_unaligned(bias + v * W) : Floats(0.0f);
      for (std::size_t r = 0; r < ROWS; ++r) acc[r][v] = init;
    }
  }
  for (std::size_t k = 0; k < kc; ++k, a += ROWS, p.p += NR) {
    Floats b[NV];
    load_row(p, 0, b);
    for (std::size_t r = 0; r < ROWS; ++r) {
      const Floats a_rk(a[r]);
      for (std::size_t v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(a_rk, b[v], acc[r][v]);
    }
  }
  for (std::size_t r = 0; r < ROWS; ++r) {
    float* to = cols < NR ? edge[r] : c + r * ldc;
    for (std::size_t v = 0; v < NV; ++v) acc[r][v].store_unaligned(to + v * W);
    if (cols < NR) std::copy(edge[r], edge[r] + cols, c + r * ldc);
  }
}

// One row of C over PANELS whole panels at once (a generation step's matrix–vector product):
// c[0, PANELS·NR) (+)= a[0, kc) · P_0 … P_{PANELS-1}, panel q starting q·stride rows after p.
// The same sums as kernel<1> on each panel (each value in order over k), with PANELS·NV
// independent accumulators instead of NV, so the adds' latency no longer bounds the loop.
template <std::size_t PANELS, class Panel>
inline void row_kernel(const float* a, Panel p, std::size_t stride, std::size_t kc, float* c,
                       const float* bias, bool accumulate) {
  Floats acc[PANELS][NV];
  for (std::size_t q = 0; q < PANELS; ++q) {
    for (std::size_t v = 0; v < NV; ++v) {
      const float* from = accumulate ? c + q * NR + v * W : bias ? bias + q * NR + v * W : nullptr;
      acc[q][v] = from ? Floats::load_unaligned(from) : Floats(0.0f);
    }
  }
  Panel panels[PANELS];
  for (std::size_t q = 0; q < PANELS; ++q) panels[q] = p.from(q * stride);
  for (std::size_t k = 0; k < kc; ++k) {  // each panel's pointer steps (see kernel)
    const Floats a_k(a[k]);
    for (std::size_t q = 0; q < PANELS; ++q) {
      Floats b[NV];
      load_row(panels[q], 0, b);
      panels[q].p += NR;
      for (std::size_t v = 0; v < NV; ++v) acc[q][v] = xsimd::fma(a_k, b[v], acc[q][v]);
    }
  }
  for (std::size_t q = 0; q < PANELS; ++q) {
    for (std::size_t v = 0; v < NV; ++v) acc[q][v].store_unaligned(c + q * NR + v * W);
  }
}
// Panels a one-row product streams at once. More streams keep more of memory's bandwidth busy:
// on one thread of a 2-core x86, 6 F32 / 8 BF16 panels decode 1.12× / 1.16× faster than 4
// (more accumulators than registers only from 8 on); two threads are bound by bandwidth either way.
template <class Panel>
constexpr std::size_t kRowPanels = std::is_same_v<Panel, Bf16Panel> ? 8 : 6;
#else
// The same contract without SIMD: plain loops, double accumulation (the reference's way).
template <std::size_t ROWS, class Panel>
inline void kernel(const float* a, Panel p, std::size_t kc, float* c, std::size_t ldc,
                   std::size_t cols, const float* bias, bool accumulate) {
  for (std::size_t r = 0; r < ROWS; ++r) {
    for (std::size_t j = 0; j < cols; ++j) {
      double sum = accumulate ? c[r * ldc + j] : (bias ? bias[j] : 0.0);
      for (std::size_t k = 0; k < kc; ++k) sum += double(a[k * ROWS + r]) * double(p.value(k, j));
      c[r * ldc + j] = static_cast<float>(sum);
    }
  }
}
template <class Panel>
constexpr std::size_t kRowPanels = 1;
#endif

// Rows left over below a whole tile (0 < left < MR): the kernel for exactly `left` rows.
template <std::size_t ROWS, class Panel>
inline void tail_rows(std::size_t left, const float* a, Panel p, std::size_t kc, float* c,
                      std::size_t ldc, std::size_t cols, const float* bias, bool accumulate) {
  if constexpr (ROWS > 0) {
    if (left == ROWS) {
      kernel<ROWS>(a, p, kc, c, ldc, cols, bias, accumulate);
    } else {
      tail_rows<ROWS - 1>(left, a, p, kc, c, ldc, cols, bias, accumulate);
    }
  }
}

// A BF16 panel slice [kc, NR] widened into floats (exact: a BF16 value is a float's top half),
// for a product whose row tiles would each widen it again.
inline void widen_panel(Bf16Panel panel, std::size_t kc, AlignedVector<float>& out) {
  out.resize(kc * NR);
  for (std::size_t k = 0; k < kc; ++k) {
#if ATTN_SIMD
    Floats b[NV];
    load_row(panel, k, b);
    for (std::size_t v = 0; v < NV; ++v) b[v].store_aligned(out.data() + k * NR + v * W);
#else
    for (std::size_t j = 0; j < NR; ++j) out[k * NR + j] = panel.value(k, j);
#endif
  }
}

// matmul_packed's loops for either kind of packed B.
template <class Packed>
void multiply_packed(ConstMatView a, const Packed& b, std::size_t k_first, std::size_t col_first,
                     MatView c, const float* bias, bool accumulate) {
  using Panel = std::conditional_t<std::is_same_v<Packed, PackedMatrix>, FloatPanel, Bf16Panel>;
  assert(col_first % NR == 0);
  assert(k_first + a.cols <= b.rows && col_first + c.cols <= b.panels() * NR);
  assert(a.rows == c.rows);
  const std::size_t depth = a.cols;
  if (depth == 0 && !accumulate) {
    for (std::size_t i = 0; i < c.rows; ++i) {
      for (std::size_t j = 0; j < c.cols; ++j) c(i, j) = bias ? bias[j] : 0.0f;
    }
    return;
  }
  const std::size_t first_panel = col_first / NR;
  const std::size_t panels = (c.cols + NR - 1) / NR;
  // Threads take contiguous runs of panels (parallel_for): each C value is computed by one
  // thread, in the same order, so the thread count never changes a bit. A part gets at least
  // kParallelRowMultiplyAdds (one row) or kParallelMultiplyAdds (more) of work.
  const std::size_t panel_flops = std::max<std::size_t>(1, c.rows * depth * NR);
  constexpr std::size_t kGroup = kRowPanels<Panel>;
  if (c.rows == 1 && kGroup > 1) {  // one row: every panel streamed once, over all of k
    const std::size_t groups = (panels + kGroup - 1) / kGroup;
    parallel_for(groups, kParallelRowMultiplyAdds / (panel_flops * kGroup) + 1,
                 [&](std::size_t group_begin, std::size_t group_end) {
                   const std::size_t end = std::min(c.cols, group_end * kGroup * NR);
                   std::size_t j = group_begin * kGroup * NR, p = first_panel + j / NR;
#if ATTN_SIMD
                   for (; j + kGroup * NR <= end; j += kGroup * NR, p += kGroup) {
                     row_kernel<kGroup>(a.row(0), Panel{b.panel(p, k_first)}, b.rows, depth,
                                        c.row(0) + j, bias ? bias + j : nullptr, accumulate);
                   }
#endif
                   for (; j < end; j += NR, ++p) {
                     kernel<1>(a.row(0), Panel{b.panel(p, k_first)}, depth, c.row(0) + j, c.stride,
                               std::min(NR, c.cols - j), bias ? bias + j : nullptr, accumulate);
                   }
                 });
    return;
  }
  // One row is already a [k, 1] tile; more are packed into row tiles first, by this thread
  // (its own buffer: calls on other threads never share it).
  thread_local AlignedVector<float> row_tiles;
  pack_row_tiles(a, row_tiles);
  const float* tiles = row_tiles.data();
  parallel_for(
      panels, kParallelMultiplyAdds / panel_flops + 1, [&](std::size_t begin, std::size_t end) {
        for (std::size_t k0 = 0; k0 < depth; k0 += kKBlock) {
          const std::size_t kc = std::min(kKBlock, depth - k0);
          const bool add = accumulate || k0 > 0;
          for (std::size_t i0 = 0; i0 < c.rows; i0 += kRowBlock) {
            const std::size_t i1 = std::min(i0 + kRowBlock, c.rows);
            for (std::size_t q = begin; q < end; ++q) {
              const std::size_t j = q * NR, p = first_panel + q;
              const std::size_t cols = std::min(NR, c.cols - j);
              const float* bias_j = bias ? bias + j : nullptr;
              const auto down_the_rows = [&](auto panel) {
                std::size_t i = i0;
                for (; i + MR <= i1; i += MR) {
                  kernel<MR>(tiles + i * depth + k0 * MR, panel, kc, c.row(i) + j, c.stride, cols,
                             bias_j, add);
                }
                if (i < i1) {
                  const std::size_t left = i1 - i;
                  tail_rows<MR - 1>(left, tiles + i * depth + k0 * left, panel, kc, c.row(i) + j,
                                    c.stride, cols, bias_j, add);
                }
              };
              const Panel panel{b.panel(p, k_first + k0)};
              if constexpr (std::is_same_v<Panel, Bf16Panel>) {
                if (i1 - i0 > MR) {  // more than one row tile: the slice widened once, not per tile
                  thread_local AlignedVector<float> widened;
                  widen_panel(panel, kc, widened);
                  down_the_rows(FloatPanel{widened.data()});
                  continue;
                }
              }
              down_the_rows(panel);
            }
          }
        }
      });
}

}  // namespace

// MR × W blocks are transposed in registers; the rest is copied one value at a time.
void pack_row_tiles(ConstMatView a, AlignedVector<float>& packed) {
  const std::size_t depth = a.cols;
  packed.resize(a.rows * depth);
  for (std::size_t i = 0; i < a.rows; i += MR) {
    const std::size_t rows = std::min(MR, a.rows - i);
    float* tile = packed.data() + i * depth;
    std::size_t k0 = 0;
#if ATTN_SIMD
    if constexpr (MR == W) {
      if (rows == MR) {
        for (; k0 + W <= depth; k0 += W) {
          Floats block[W];
          for (std::size_t r = 0; r < W; ++r) block[r] = Floats::load_unaligned(a.row(i + r) + k0);
          simd::transpose(block);
          for (std::size_t t = 0; t < W; ++t) block[t].store_unaligned(tile + (k0 + t) * MR);
        }
      }
    }
#endif
    for (std::size_t k = k0; k < depth; ++k) {
      for (std::size_t r = 0; r < rows; ++r) tile[k * rows + r] = a(i + r, k);
    }
  }
}

void multiply_panel(const float* row_tiles, std::size_t rows, std::size_t depth,
                    std::size_t k_first, std::size_t kc, const float* panel, float* c,
                    std::size_t ldc, std::size_t cols, const float* bias, bool accumulate) {
  const FloatPanel p{panel};
  std::size_t i = 0;
  for (; i + MR <= rows; i += MR) {
    kernel<MR>(row_tiles + i * depth + k_first * MR, p, kc, c + i * ldc, ldc, cols, bias,
               accumulate);
  }
  if (i < rows) {
    const std::size_t left = rows - i;
    tail_rows<MR - 1>(left, row_tiles + i * depth + k_first * left, p, kc, c + i * ldc, ldc, cols,
                      bias, accumulate);
  }
}

void pack_matrix(ConstMatView b, PackedMatrix& packed) {
  packed.rows = b.rows;
  packed.cols = b.cols;
  packed.data.resize(packed.panels() * b.rows * NR);
  for (std::size_t p = 0; p < packed.panels(); ++p) {
    const std::size_t first = p * NR;
    const std::size_t width = std::min(NR, b.cols - first);
    float* to = packed.data.data() + p * b.rows * NR;
    if (width == NR) {  // whole panels: NR floats per row, as vectors
      for (std::size_t k = 0; k < b.rows; ++k, to += NR) {
        const float* from = b.row(k) + first;
#if ATTN_SIMD
        for (std::size_t v = 0; v < NV; ++v) {
          Floats::load_unaligned(from + v * W).store_aligned(to + v * W);
        }
#else
        for (std::size_t c = 0; c < NR; ++c) to[c] = from[c];
#endif
      }
      continue;
    }
    for (std::size_t k = 0; k < b.rows; ++k, to += NR) {
      const float* from = b.row(k) + first;
      for (std::size_t c = 0; c < NR; ++c) to[c] = c < width ? from[c] : 0.0f;
    }
  }
}

void pack_transposed(ConstMatView b, PackedMatrix& packed) {
  packed.rows = b.cols;
  packed.cols = b.rows;
  packed.data.resize(packed.panels() * b.cols * NR);
  const std::size_t depth = b.cols;
  for (std::size_t p = 0; p < packed.panels(); ++p) {
    const std::size_t first = p * NR;
    const std::size_t width = std::min(NR, b.rows - first);
    float* panel = packed.data.data() + p * depth * NR;
    std::size_t k0 = 0;
#if ATTN_SIMD
    if (width == NR) {  // W × W blocks: W rows of B, W values each, transposed in registers
      for (; k0 + W <= depth; k0 += W) {
        for (std::size_t v = 0; v < NV; ++v) {
          Floats block[W];
          for (std::size_t i = 0; i < W; ++i) {
            block[i] = Floats::load_unaligned(b.row(first + v * W + i) + k0);
          }
          simd::transpose(block);
          for (std::size_t t = 0; t < W; ++t) block[t].store_aligned(panel + (k0 + t) * NR + v * W);
        }
      }
    }
#endif
    for (std::size_t c = 0; c < NR; ++c) {  // the rest, one value at a time
      const float* from = c < width ? b.row(first + c) : nullptr;
      for (std::size_t k = k0; k < depth; ++k) panel[k * NR + c] = from ? from[k] : 0.0f;
    }
  }
}

void matmul_packed(ConstMatView a, const PackedMatrix& b, std::size_t k_first,
                   std::size_t col_first, MatView c, const float* bias, bool accumulate) {
  multiply_packed(a, b, k_first, col_first, c, bias, accumulate);
}

void matmul_packed(ConstMatView a, const PackedBf16Matrix& b, MatView c, const float* bias) {
  multiply_packed(a, b, 0, 0, c, bias, false);
}

void pack_transposed_bf16(const std::uint16_t* b, std::size_t n, std::size_t k,
                          PackedBf16Matrix& packed) {
  packed.rows = k;
  packed.cols = n;
  packed.data.assign(packed.panels() * k * NR, 0);  // zero: BF16 0.0 past column n
  for (std::size_t p = 0; p < packed.panels(); ++p) {
    const std::size_t first = p * NR, width = std::min(NR, n - first);
    std::uint16_t* panel = packed.data.data() + p * k * NR;
    for (std::size_t c = 0; c < width; ++c) {
#if ATTN_SIMD
      // column c of the panel: lane c mod W, low half for the first vector, high for the second
      const std::size_t slot = 2 * (c % simd::kWidth) + c / simd::kWidth;
#else
      const std::size_t slot = c;
#endif
      const std::uint16_t* from = b + (first + c) * k;
      for (std::size_t i = 0; i < k; ++i) panel[i * NR + slot] = from[i];
    }
  }
}

void matmul(ConstMatView a, ConstMatView b, MatView c, PackedMatrix& packed, const float* bias) {
  assert(a.cols == b.rows && c.rows == a.rows && c.cols == b.cols);
  pack_matrix(b, packed);
  matmul_packed(a, packed, c, bias);
}

void matmul(ConstMatView a, ConstMatView b, MatView c, const float* bias) {
  PackedMatrix packed;
  matmul(a, b, c, packed, bias);
}

void transpose(ConstMatView in, MatView out) {
  assert(out.rows == in.cols && out.cols == in.rows);
  constexpr std::size_t kBlock = 16;  // cache blocking; the compiler vectorizes the inner copy
  for (std::size_t r0 = 0; r0 < in.rows; r0 += kBlock) {
    const std::size_t r1 = std::min(r0 + kBlock, in.rows);
    for (std::size_t c0 = 0; c0 < in.cols; c0 += kBlock) {
      const std::size_t c1 = std::min(c0 + kBlock, in.cols);
      for (std::size_t r = r0; r < r1; ++r) {
        for (std::size_t col = c0; col < c1; ++col) out(col, r) = in(r, col);
      }
    }
  }
}

void matmul_transposed(ConstMatView a, ConstMatView b, MatView c, PackedMatrix& packed) {
  assert(a.cols == b.cols && c.rows == a.rows && c.cols == b.rows);
  pack_transposed(b, packed);
  matmul_packed(a, packed, c);
}

}  // namespace attn
