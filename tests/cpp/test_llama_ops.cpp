// The Llama family's ops: RMSNorm and SwiGLU (float against their scalar references and against
// the formulas written out), grouped-query causal attention with a sliding window (float against
// the reference, the reference's backward against finite differences), rotate_half RoPE on the
// grouped layout, and weights kept 2-byte in the linear layer and the embedding.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "approx.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/half.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/rmsnorm.hpp"
#include "attention/ops/rope.hpp"
#include "attention/ops/swiglu.hpp"

namespace {

std::vector<double> as_double(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

// float → bf16 by truncation (any 2-byte value will do: the kernels must widen it exactly).
std::uint16_t bf16_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return std::uint16_t(bits >> 16);
}

}  // namespace

TEST_CASE("RMSNorm: x · rsqrt(mean(x²) + ε) ⊙ w, float against the reference", "[llama_ops]") {
  const std::size_t rows = 5, d = 37;
  const auto x = random_floats(rows * d, 1, 3.0);
  const auto w = random_floats(d, 2);
  std::vector<float> got(rows * d), want(rows * d);
  attn::rmsnorm_forward(x.data(), w.data(), got.data(), rows, d, 1e-6f);
  attn::reference::rmsnorm_forward(x.data(), w.data(), want.data(), rows, d, 1e-6);
  require_close(got, want, 1e-6, 1e-5, "rmsnorm");
  // The formula by hand for row 2, element 7.
  double squares = 0.0;
  for (std::size_t i = 0; i < d; ++i) squares += double(x[2 * d + i]) * x[2 * d + i];
  const double expected = x[2 * d + 7] / std::sqrt(squares / d + 1e-6) * w[7];
  CHECK(std::abs(got[2 * d + 7] - expected) < 1e-5 * std::abs(expected) + 1e-7);
}

TEST_CASE("SwiGLU: silu(gate) ⊙ up from one gate|up row, float against the reference",
          "[llama_ops]") {
  const std::size_t rows = 4, width = 19;
  const auto gate_up = random_floats(rows * 2 * width, 3, 4.0);
  std::vector<float> got(rows * width), want(rows * width);
  attn::swiglu_forward(gate_up.data(), got.data(), rows, width);
  attn::reference::swiglu_forward(gate_up.data(), want.data(), rows, width);
  require_close(got, want, 1e-6, 1e-5, "swiglu");
  const double g = gate_up[3 * 2 * width + 5], u = gate_up[3 * 2 * width + width + 5];
  CHECK(std::abs(got[3 * width + 5] - g / (1 + std::exp(-g)) * u) < 1e-5);
}

TEST_CASE("grouped-query causal attention with a sliding window: float against the reference",
          "[llama_ops]") {
  for (const std::size_t kv : {1, 2, 6}) {
    for (const std::size_t window : {0, 4}) {
      INFO("kv heads " << kv << ", window " << window);
      const attn::AttentionShape shape{6, kv, 10, window};
      const std::size_t batch = 2, n = 11;
      const auto qkv = random_floats(batch * n * shape.row(), 5);
      std::vector<float> att_ref(batch * 6 * n * n), ctx_ref(batch * n * shape.q_width());
      std::vector<float> att(att_ref.size()), ctx(ctx_ref.size());
      attn::reference::causal_attention_forward(qkv.data(), att_ref.data(), ctx_ref.data(), batch,
                                                n, shape);
      attn::AttentionScratch scratch;
      attn::causal_attention_forward(qkv.data(), att.data(), ctx.data(), batch, n, shape, scratch);
      require_close(att, att_ref, 1e-6, 1e-5, "weights");
      require_close(ctx, ctx_ref, 1e-5, 1e-5, "context");
      // The mask: query i sees i − window < j ≤ i, each row sums to 1.
      for (std::size_t r = 0; r < batch * 6; ++r) {
        for (std::size_t i = 0; i < n; ++i) {
          double sum = 0.0;
          for (std::size_t j = 0; j < n; ++j) {
            const float a = att[(r * n + i) * n + j];
            const bool seen = j <= i && (window == 0 || j + window > i);
            CHECK((seen ? a > 0.0f : a == 0.0f));
            sum += a;
          }
          CHECK(std::abs(sum - 1.0) < 1e-5);
        }
      }
      // Query head 5 reads K/V head 5 / (6 / kv): its weights equal a plain two-head run on
      // those columns.
      const std::size_t g = shape.kv_head(5);
      std::vector<float> single(batch * n * 3 * 10);
      for (std::size_t t = 0; t < batch * n; ++t) {
        const float* row = &qkv[t * shape.row()];
        std::copy_n(row + shape.q_offset(5), 10, &single[t * 30]);
        std::copy_n(row + shape.q_width() + g * 10, 10, &single[t * 30 + 10]);
        std::copy_n(row + shape.q_width() + shape.kv_width() + g * 10, 10, &single[t * 30 + 20]);
      }
      std::vector<float> att1(batch * n * n), ctx1(batch * n * 10);
      attn::reference::causal_attention_forward(single.data(), att1.data(), ctx1.data(), batch, n,
                                                attn::AttentionShape{1, 1, 10, window});
      for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t i = 0; i < n * n; ++i) {
          CHECK(att_ref[(b * 6 + 5) * n * n + i] == att1[b * n * n + i]);
        }
      }
      // The backward, float against the reference (K/V heads gather their group's gradients).
      const auto dctx = random_floats(batch * n * shape.q_width(), 6);
      std::vector<float> d_ref(qkv.size(), 0.5f), d_f(qkv.size(), 0.5f);
      attn::reference::causal_attention_backward(dctx.data(), qkv.data(), att_ref.data(),
                                                 d_ref.data(), batch, n, shape);
      attn::causal_attention_backward(dctx.data(), qkv.data(), att.data(), d_f.data(), batch, n,
                                      shape, scratch);
      require_close(d_f, d_ref, 1e-5, 1e-4, "dqkv");
    }
  }
}

TEST_CASE("the grouped-query reference's backward matches finite differences", "[llama_ops]") {
  const attn::AttentionShape shape{4, 2, 3, 3};
  const std::size_t batch = 1, n = 6;
  auto qkv = as_double(random_floats(batch * n * shape.row(), 7));
  const auto r = as_double(random_floats(batch * n * shape.q_width(), 8));
  std::vector<double> att(batch * 4 * n * n), ctx(batch * n * shape.q_width());
  const auto loss = [&] {
    attn::reference::causal_attention_forward(qkv.data(), att.data(), ctx.data(), batch, n, shape);
    double sum = 0.0;
    for (std::size_t i = 0; i < ctx.size(); ++i) sum += ctx[i] * r[i];
    return sum;
  };
  loss();
  std::vector<double> dqkv(qkv.size());
  attn::reference::causal_attention_backward(r.data(), qkv.data(), att.data(), dqkv.data(), batch,
                                             n, shape);
  for (std::size_t i = 0; i < qkv.size(); ++i) {
    const double keep = qkv[i];
    qkv[i] = keep + 1e-6;
    const double up = loss();
    qkv[i] = keep - 1e-6;
    const double down = loss();
    qkv[i] = keep;
    INFO("value " << i);
    CHECK(std::abs((up - down) / 2e-6 - dqkv[i]) < 1e-6);
  }
}

TEST_CASE("rotate_half RoPE on the grouped layout turns each query and K/V head once",
          "[llama_ops]") {
  const attn::AttentionShape shape{4, 2, 8, 0};
  const attn::RopeSpec spec{attn::RopePairing::RotateHalf, 500000.0, {}};
  const std::size_t n = 5;
  const auto qkv = random_floats(n * shape.row(), 9);
  auto got = qkv;
  attn::rope_forward(got.data(), 1, n, shape, spec);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t h = 0; h < shape.heads + shape.kv_heads; ++h) {  // q heads, then k heads
      for (std::size_t i = 0; i < 4; ++i) {
        const double angle = double(t) * std::pow(500000.0, -2.0 * i / 8.0);
        const float x0 = qkv[t * shape.row() + h * 8 + i],
                    x1 = qkv[t * shape.row() + h * 8 + i + 4];
        CHECK(std::abs(got[t * shape.row() + h * 8 + i] -
                       (x0 * std::cos(angle) - x1 * std::sin(angle))) < 1e-5);
        CHECK(std::abs(got[t * shape.row() + h * 8 + i + 4] -
                       (x0 * std::sin(angle) + x1 * std::cos(angle))) < 1e-5);
      }
    }
    // V is not turned.
    for (std::size_t c = shape.q_width() + shape.kv_width(); c < shape.row(); ++c) {
      CHECK(got[t * shape.row() + c] == qkv[t * shape.row() + c]);
    }
  }
  // From a later first position: the same as the rows of a longer run.
  std::vector<float> later(qkv.begin() + 2 * shape.row(), qkv.end());
  attn::rope_forward(later.data(), 1, n - 2, shape, spec, 2);
  CHECK(std::equal(later.begin(), later.end(), got.begin() + 2 * shape.row()));
}

TEST_CASE(
    "a 2-byte weight in the linear layer and the embedding: the float path's numbers on "
    "the widened values, a vocabulary-sized W packed in blocks",
    "[llama_ops]") {
  const std::size_t m = 3, in = 300, out = 5000;  // out·in > kLinearPackValues: several blocks
  static_assert(300 * 5000 > attn::kLinearPackValues);
  const auto x = random_floats(m * in, 10);
  const auto w = random_floats(out * in, 11, 0.1);
  const auto b = random_floats(out, 12);
  std::vector<std::uint16_t> half(w.size());
  std::vector<float> widened(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    half[i] = bf16_bits(w[i]);
    widened[i] = attn::bf16_to_f32(half[i]);
  }
  attn::LinearScratch scratch;
  std::vector<float> from_half(m * out), from_float(m * out), reference(m * out);
  attn::linear_forward(x.data(), attn::StoredWeights(half.data(), attn::HalfKind::BF16), b.data(),
                       from_half.data(), m, in, out, scratch);
  attn::linear_forward(x.data(), widened.data(), b.data(), from_float.data(), m, in, out, scratch);
  CHECK(from_half == from_float);  // bit-identical
  attn::reference::linear_forward(x.data(), widened.data(), b.data(), reference.data(), m, in, out);
  require_close(from_float, reference, 1e-5, 1e-5, "blocked linear vs reference");
  CHECK(scratch.packed_weight.data.size() < std::size_t(out * in));  // never all of Wᵀ at once
  // The embedding's rows widened as they are looked up.
  const std::vector<std::int32_t> ids{4, 0, 4999 % 300};
  std::vector<float> rows_half(3 * in), rows_float(3 * in);
  attn::input_embedding_forward(ids.data(), attn::StoredWeights(half.data(), attn::HalfKind::BF16),
                                nullptr, rows_half.data(), 1, 3, in);
  attn::input_embedding_forward(ids.data(), widened.data(), nullptr, rows_float.data(), 1, 3, in);
  CHECK(rows_half == rows_float);
  // F16 widening: exact for normals, subnormals and the largest value.
  CHECK(attn::half_to_f32(0x3C00, attn::HalfKind::F16) == 1.0f);
  CHECK(attn::half_to_f32(0x0001, attn::HalfKind::F16) == std::ldexp(1.0f, -24));
  CHECK(attn::half_to_f32(0x7BFF, attn::HalfKind::F16) == 65504.0f);
  CHECK(attn::half_to_f32(0x3F80, attn::HalfKind::BF16) == 1.0f);
}

TEST_CASE(
    "weights packed once (PackedLinear): float, BF16 kept 2-byte and F16, one row and many, "
    "bit-identical to linear_forward's packing per call",
    "[llama_ops]") {
  // in 700: two of the matmul's k blocks; out: whole groups of the one-row kernel's panels, an
  // odd panel and a partial one.
  const std::size_t in = 700, out = 9 * attn::kPanelWidth + 5;
  const auto w = random_floats(out * in, 21, 0.1);
  const auto b = random_floats(out, 22);
  std::vector<std::uint16_t> bf16(w.size()), f16(w.size());
  std::vector<float> widened_bf16(w.size()), widened_f16(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    bf16[i] = bf16_bits(w[i]);
    widened_bf16[i] = attn::bf16_to_f32(bf16[i]);
    // an F16 value near w[i]: sign, exponent 14 (0.5 … 1) and ten bits of mantissa
    f16[i] = std::uint16_t((w[i] < 0 ? 0x8000u : 0u) | (14u << 10) | (i * 37u % 1024u));
    widened_f16[i] = attn::f16_to_f32(f16[i]);
  }
  struct Case {
    const char* name;
    attn::StoredWeights stored;
    const std::vector<float>& widened;
  };
  const Case cases[] = {
      {"float", attn::StoredWeights(w.data()), w},
      {"BF16", attn::StoredWeights(bf16.data(), attn::HalfKind::BF16), widened_bf16},
      {"F16", attn::StoredWeights(f16.data(), attn::HalfKind::F16), widened_f16}};
  for (const auto& c : cases) {
    attn::PackedLinear packed;
    packed.pack(c.stored, in, out);
    REQUIRE_FALSE(packed.empty());
    CHECK(attn::PackedLinear::bytes_for(c.stored, in, out) ==
          (out + attn::kPanelWidth - 1) / attn::kPanelWidth * attn::kPanelWidth * in *
              (c.stored.half && c.stored.kind == attn::HalfKind::BF16 ? 2 : 4));
    for (const std::size_t m : {std::size_t{1}, std::size_t{2}, std::size_t{13}}) {
      INFO(c.name << ", " << m << " rows");
      const auto x = random_floats(m * in, 23 + m);
      attn::LinearScratch scratch;
      std::vector<float> once(m * out), per_call(m * out), reference(m * out);
      packed.forward(x.data(), b.data(), once.data(), m);
      attn::linear_forward(x.data(), c.widened.data(), b.data(), per_call.data(), m, in, out,
                           scratch);
      CHECK(once == per_call);  // bit for bit: the same sums in the same order
      attn::reference::linear_forward(x.data(), c.widened.data(), b.data(), reference.data(), m, in,
                                      out);
      require_close(once, reference, 2e-6 * double(in), 1e-5,
                    "packed once vs the double reference");
      // and without a bias
      packed.forward(x.data(), nullptr, once.data(), m);
      attn::linear_forward(x.data(), c.widened.data(), nullptr, per_call.data(), m, in, out,
                           scratch);
      CHECK(once == per_call);
    }
  }
  // A different W packed into the same object replaces the old one.
  attn::PackedLinear packed;
  packed.pack(attn::StoredWeights(bf16.data(), attn::HalfKind::BF16), in, out);
  packed.pack(attn::StoredWeights(w.data()), in, out);
  const auto x = random_floats(in, 30);
  std::vector<float> once(out), per_call(out);
  attn::LinearScratch scratch;
  packed.forward(x.data(), b.data(), once.data(), 1);
  attn::linear_forward(x.data(), w.data(), b.data(), per_call.data(), 1, in, out, scratch);
  CHECK(once == per_call);
}
