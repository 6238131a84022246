// The ops the families of issue 31 add, each float version against its scalar reference and the
// formula written out: soft-capping, GeGLU (GELU-tanh gated), Gemma's (1 + w) RMSNorm, RoPE on
// part of a head (rotate-half and interleaved), attention with its own scale and a soft-cap (the
// rows a cached step computes equal to the full forward's), q/k norms per head and over the whole
// projection, rounding a constant to BF16/F16, and the walkthrough head's soft-capped attention.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "approx.hpp"
#include "attention/model/block.hpp"
#include "attention/model/model_config.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/flash.hpp"
#include "attention/ops/geglu.hpp"
#include "attention/ops/half.hpp"
#include "attention/ops/rmsnorm.hpp"
#include "attention/ops/rope.hpp"
#include "attention/ops/sdpa.hpp"
#include "attention/ops/softcap.hpp"

TEST_CASE("soft-cap: cap · tanh(x / cap), float against the reference", "[family_ops]") {
  const auto x = random_floats(37, 1, 20.0);
  std::vector<float> got = x, want = x;
  attn::softcap_forward(got.data(), got.size(), 5.0f);
  attn::reference::softcap_forward(want.data(), want.size(), 5.0);
  require_close(got, want, 1e-6, 1e-6, "softcap");
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(std::abs(got[i]) <= 5.0f);  // bounded by the cap
    CHECK(std::abs(got[i] - 5.0 * std::tanh(double(x[i]) / 5.0)) < 1e-5);
  }
  // Small values pass almost unchanged: x − x³/(3·cap²) to third order.
  float small = 0.1f;
  attn::softcap_forward(&small, 1, 30.0f);
  CHECK(std::abs(small - (0.1 - 0.001 / (3 * 900.0))) < 1e-8);
}

TEST_CASE("GeGLU: GELU(gate) ⊙ up from one gate|up row, float against the reference",
          "[family_ops]") {
  const std::size_t rows = 3, width = 21;  // not a multiple of any SIMD width
  const auto gate_up = random_floats(rows * 2 * width, 2, 3.0);
  for (const attn::GeluKind kind : {attn::GeluKind::Tanh, attn::GeluKind::Erf}) {
    std::vector<float> got(rows * width), want(rows * width);
    attn::geglu_forward(gate_up.data(), got.data(), rows, width, kind);
    attn::reference::geglu_forward(gate_up.data(), want.data(), rows, width, kind);
    require_close(got, want, 1e-6, 1e-5, "geglu");
  }
  // Gemma's gelu_pytorch_tanh by hand for row 2, column 4.
  std::vector<float> got(rows * width);
  attn::geglu_forward(gate_up.data(), got.data(), rows, width, attn::GeluKind::Tanh);
  const double g = gate_up[2 * 2 * width + 4], u = gate_up[2 * 2 * width + width + 4];
  const double gelu =
      0.5 * g * (1 + std::tanh(std::sqrt(2 / 3.141592653589793) * (g + 0.044715 * g * g * g)));
  CHECK(std::abs(got[2 * width + 4] - gelu * u) < 1e-5);
  // One row alone gives the same floats as inside the batch (a cached step's row).
  std::vector<float> alone(width);
  attn::geglu_forward(gate_up.data() + 2 * 2 * width, alone.data(), 1, width, attn::GeluKind::Tanh);
  CHECK(std::equal(alone.begin(), alone.end(), got.begin() + 2 * width));
}

TEST_CASE("Gemma's RMSNorm: x · rsqrt(mean(x²) + ε) ⊙ (1 + w), float against the reference",
          "[family_ops]") {
  const std::size_t rows = 4, d = 29;
  const auto x = random_floats(rows * d, 3, 2.0);
  const auto w = random_floats(d, 4, 0.2);
  std::vector<float> got(rows * d), want(rows * d), plain(rows * d);
  attn::rmsnorm_forward(x.data(), w.data(), got.data(), rows, d, 1e-6f,
                        attn::RmsNormWeight::OnePlus);
  attn::reference::rmsnorm_forward(x.data(), w.data(), want.data(), rows, d, 1e-6,
                                   attn::RmsNormWeight::OnePlus);
  require_close(got, want, 1e-6, 1e-5, "gemma rmsnorm");
  double squares = 0.0;
  for (std::size_t i = 0; i < d; ++i) squares += double(x[d + i]) * x[d + i];
  const double expected = x[d + 5] / std::sqrt(squares / d + 1e-6) * (1.0 + w[5]);
  CHECK(std::abs(got[d + 5] - expected) < 1e-5 * std::abs(expected) + 1e-7);
  // (1 + w) is not w: the plain form differs.
  attn::rmsnorm_forward(x.data(), w.data(), plain.data(), rows, d, 1e-6f);
  CHECK(std::abs(plain[d + 5] - got[d + 5]) > 1e-3);
  // In place, as the q/k norms run it.
  std::vector<float> in_place = x;
  attn::rmsnorm_forward(in_place.data(), w.data(), in_place.data(), rows, d, 1e-6f,
                        attn::RmsNormWeight::OnePlus);
  CHECK(in_place == got);
}

TEST_CASE("partial RoPE turns each head's first r columns as a head r wide, the rest kept",
          "[family_ops]") {
  const std::size_t n = 7, head_dim = 16, r = 4;
  const attn::AttentionShape shape{2, 1, head_dim, 0};  // 2 query heads, 1 key head
  for (const attn::RopePairing pairing :
       {attn::RopePairing::RotateHalf, attn::RopePairing::Interleaved}) {
    attn::RopeSpec spec;
    spec.pairing = pairing;
    spec.base = 10000.0;
    spec.rotary_dims = r;
    const auto qkv = random_floats(n * shape.row(), 5, 1.0);
    std::vector<float> got = qkv;
    attn::rope_forward(got.data(), 1, n, shape, spec);
    for (std::size_t t = 0; t < n; ++t) {
      for (std::size_t h = 0; h < 3; ++h) {  // q's heads, then k's
        const float* x = qkv.data() + t * shape.row() + h * head_dim;
        const float* y = got.data() + t * shape.row() + h * head_dim;
        for (std::size_t i = 0; i < r / 2; ++i) {  // pair i turns by t·base^(−2i/r)
          const std::size_t a = pairing == attn::RopePairing::RotateHalf ? i : 2 * i;
          const std::size_t b = pairing == attn::RopePairing::RotateHalf ? i + r / 2 : 2 * i + 1;
          const double angle = double(t) * std::pow(10000.0, -2.0 * double(i) / double(r));
          CHECK(std::abs(y[a] - (x[a] * std::cos(angle) - x[b] * std::sin(angle))) < 1e-5);
          CHECK(std::abs(y[b] - (x[a] * std::sin(angle) + x[b] * std::cos(angle))) < 1e-5);
        }
        for (std::size_t c = r; c < head_dim; ++c) CHECK(y[c] == x[c]);  // passed through
      }
      // The values are untouched.
      const std::size_t v = t * shape.row() + 3 * head_dim;
      CHECK(std::equal(got.begin() + std::ptrdiff_t(v), got.begin() + std::ptrdiff_t(v + head_dim),
                       qkv.begin() + std::ptrdiff_t(v)));
    }
    // The backward turns them back.
    attn::rope_backward(got.data(), 1, n, shape, spec);
    require_close(got, qkv, 1e-6, 1e-6, "partial rope round trip");
  }
}

TEST_CASE("attention with its own scale and a soft-cap: float against the reference, rows alike",
          "[family_ops]") {
  const std::size_t n = 9;
  for (const std::size_t window : {std::size_t{0}, std::size_t{4}}) {
    attn::AttentionShape shape{4, 2, 8, window, 1.0 / std::sqrt(24.0), 2.0};
    const auto qkv = random_floats(n * shape.row(), 6, 2.0);
    std::vector<float> att(shape.heads * n * n), ctx(n * shape.q_width());
    std::vector<double> want_att(att.size()), want_ctx(ctx.size());
    attn::AttentionScratch scratch;
    attn::causal_attention_forward(qkv.data(), att.data(), ctx.data(), 1, n, shape, scratch);
    const std::vector<double> qkv64(qkv.begin(), qkv.end());
    attn::reference::causal_attention_forward(qkv64.data(), want_att.data(), want_ctx.data(), 1, n,
                                              shape);
    require_close(att, want_att, 1e-6, 1e-5, "capped attention weights");
    require_close(ctx, want_ctx, 1e-5, 1e-5, "capped attention output");
    // Query 5, head 1 by hand: softmax over the keys it sees of 2·tanh(q·k/√24 / 2).
    const std::size_t i = 5, h = 1, first = shape.first_key(i);
    std::vector<double> e;
    double sum = 0.0;
    for (std::size_t j = first; j <= i; ++j) {
      double dot = 0.0;
      for (std::size_t c = 0; c < 8; ++c) {
        dot += double(qkv[i * shape.row() + shape.q_offset(h) + c]) *
               qkv[j * shape.row() + shape.k_offset(h) + c];
      }
      e.push_back(std::exp(2.0 * std::tanh(dot / std::sqrt(24.0) / 2.0)));
      sum += e.back();
    }
    for (std::size_t j = first; j <= i; ++j) {
      CHECK(std::abs(att[(h * n + i) * n + j] - e[j - first] / sum) < 1e-6);
    }
    // Without the cap the weights differ (the cap bends these scores).
    shape.softcap = 0.0;
    std::vector<float> uncapped(att.size()), ctx2(ctx.size());
    attn::causal_attention_forward(qkv.data(), uncapped.data(), ctx2.data(), 1, n, shape, scratch);
    double moved = 0.0;
    for (std::size_t k = 0; k < att.size(); ++k) {
      moved = std::max(moved, std::abs(double(att[k]) - uncapped[k]));
    }
    CHECK(moved > 1e-2);
    // The last row alone over the same keys and values (a cached step) gives the same floats.
    shape.softcap = 2.0;
    const std::size_t ld = shape.row();
    std::vector<float> row_att(shape.heads * n), row_ctx(shape.q_width());
    attn::causal_attention_rows(qkv.data() + (n - 1) * ld, ld, qkv.data() + shape.q_width(),
                                qkv.data() + shape.q_width() + shape.kv_width(), ld, n - 1, 1,
                                shape, row_att.data(), row_ctx.data(), shape.q_width(), scratch);
    for (std::size_t hh = 0; hh < shape.heads; ++hh) {
      CHECK(std::equal(row_att.begin() + std::ptrdiff_t(hh * n),
                       row_att.begin() + std::ptrdiff_t((hh + 1) * n),
                       att.begin() + std::ptrdiff_t((hh * n + n - 1) * n)));
    }
  }
}

TEST_CASE("q/k norms per head and over the whole projection, in place on the q|k|v rows",
          "[family_ops]") {
  attn::ModelConfig config;
  config.checkpoint = true;
  config.vocab = 10;
  config.d_model = 32;
  config.heads = 4;
  config.kv_heads = 2;
  config.head_dim = 8;
  config.layers = 1;
  config.positional = attn::PositionalKind::Rope;
  config.norm = attn::NormKind::RmsNorm;
  config.norm_eps = 1e-6;
  attn::BlockConfig block;
  block.rope.pairing = attn::RopePairing::RotateHalf;
  const std::size_t M = 3;
  const attn::AttentionShape shape = attn::attention_shape(config);
  const auto qkv = random_floats(M * shape.row(), 7, 2.0);
  for (const attn::QkNorm kind : {attn::QkNorm::PerHead, attn::QkNorm::Whole}) {
    block.qk_norm = kind;
    attn::set_uniform_blocks(config, block);
    attn::validate(config);
    const std::size_t qw = attn::q_norm_width(config, 0), kw = attn::k_norm_width(config, 0);
    CHECK(qw == (kind == attn::QkNorm::PerHead ? 8u : 32u));
    CHECK(kw == (kind == attn::QkNorm::PerHead ? 8u : 16u));
    const auto q_weight = random_floats(qw, 8, 1.0), k_weight = random_floats(kw, 9, 1.0);
    const std::vector<double> q_weight64(q_weight.begin(), q_weight.end());
    const std::vector<double> k_weight64(k_weight.begin(), k_weight.end());
    std::vector<float> got = qkv;
    attn::qk_norm_forward(config, 0, q_weight.data(), k_weight.data(), got.data(), M);
    for (std::size_t r = 0; r < M; ++r) {
      const float* x = qkv.data() + r * shape.row();
      const float* y = got.data() + r * shape.row();
      const std::vector<double> x64(x, x + shape.row());
      std::vector<double> want(shape.row());
      // each group of qw query columns normalised with q_weight, kw key columns with k_weight
      for (std::size_t at = 0; at < shape.q_width(); at += qw) {
        attn::reference::rmsnorm_forward(x64.data() + at, q_weight64.data(), want.data() + at, 1,
                                         qw, 1e-6);
      }
      for (std::size_t at = shape.q_width(); at < shape.q_width() + shape.kv_width(); at += kw) {
        attn::reference::rmsnorm_forward(x64.data() + at, k_weight64.data(), want.data() + at, 1,
                                         kw, 1e-6);
      }
      for (std::size_t c = 0; c < shape.q_width() + shape.kv_width(); ++c) {
        CHECK(std::abs(y[c] - want[c]) < 1e-5 * std::abs(want[c]) + 1e-6);
      }
      for (std::size_t c = shape.q_width() + shape.kv_width(); c < shape.row(); ++c) {
        CHECK(y[c] == x[c]);  // the values are not normalised
      }
    }
  }
}

TEST_CASE("a constant rounded to BF16 or F16, to nearest, ties to even", "[family_ops]") {
  const float root48 = float(std::sqrt(48.0));  // 6.9282…
  CHECK(attn::round_to_half(root48, attn::HalfKind::BF16) == 6.9375f);
  CHECK(attn::round_to_half(root48, attn::HalfKind::F16) == 6.9296875f);
  CHECK(attn::round_to_half(8.0f, attn::HalfKind::BF16) == 8.0f);  // exact values stay
  // √3072 = 55.4256… becomes 55.5 in BF16 (transformers' comment on Gemma's normalizer).
  CHECK(attn::round_to_half(float(std::sqrt(3072.0)), attn::HalfKind::BF16) == 55.5f);
  // A tie: 1 + 2⁻⁸ lies halfway between BF16's 1 and 1 + 2⁻⁷; it goes to the even 1.
  CHECK(attn::round_to_half(1.0f + 1.0f / 256, attn::HalfKind::BF16) == 1.0f);
  CHECK(attn::round_to_half(1.0f + 3.0f / 256, attn::HalfKind::BF16) == 1.0f + 4.0f / 256);
}

TEST_CASE("one head's attention with a soft-cap: fused, flash and step by step as the reference",
          "[family_ops]") {
  const std::size_t n = 7, kv_n = 9, dk = 8;
  const auto q = random_floats(n * dk, 10, 2.0), k = random_floats(kv_n * dk, 11, 2.0);
  const auto v = random_floats(kv_n * dk, 12, 1.0);
  const attn::ConstMatView Q(q.data(), n, dk), K(k.data(), kv_n, dk), V(v.data(), kv_n, dk);
  attn::MaskSpec mask;
  mask.kind = attn::MaskKind::SlidingWindow;
  mask.window = 4;
  attn::LogitParams params;
  params.scale = 0.5f;
  params.softcap = 1.5f;
  params.mask = &mask;
  std::vector<float> want_w(n * kv_n), want_c(n * dk);
  attn::reference::attention_head(Q, K, V, 0.5, 0.0, &mask, attn::MatView(want_w.data(), n, kv_n),
                                  attn::MatView(want_c.data(), n, dk), 1.5);
  attn::SdpaWorkspace workspace;
  std::vector<float> fused_w(n * kv_n), fused_c(n * dk), step_w(n * kv_n), step_c(n * dk);
  attn::scaled_dot_product_attention(Q, K, V, params, attn::MatView(fused_w.data(), n, kv_n),
                                     attn::MatView(fused_c.data(), n, dk), workspace);
  require_close(fused_w, want_w, 1e-6, 1e-5, "fused weights");
  require_close(fused_c, want_c, 1e-6, 1e-5, "fused context");
  attn::Matrix scores, scaled, capped, masked;
  attn::SdpaSnapshots snapshots{&scores, &scaled, &capped, &masked};
  attn::scaled_dot_product_attention(Q, K, V, params, attn::MatView(step_w.data(), n, kv_n),
                                     attn::MatView(step_c.data(), n, dk), workspace, &snapshots);
  require_close(step_w, want_w, 1e-6, 1e-5, "step-by-step weights");
  REQUIRE(capped.rows() == n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < kv_n; ++j) {
      CHECK(std::abs(capped(i, j) - 1.5 * std::tanh(double(scaled(i, j)) / 1.5)) < 1e-6);
    }
  }
  std::vector<float> flash_c(n * dk);
  attn::FlashWorkspace flash;
  attn::flash_attention(Q, K, V, params, attn::MatView(flash_c.data(), n, dk), flash);
  require_close(flash_c, want_c, 1e-6, 1e-5, "flash context");
  // Without the cap, the reference differs: the cap bends these scores.
  std::vector<float> uncapped_w(n * kv_n), uncapped_c(n * dk);
  attn::reference::attention_head(Q, K, V, 0.5, 0.0, &mask,
                                  attn::MatView(uncapped_w.data(), n, kv_n),
                                  attn::MatView(uncapped_c.data(), n, dk));
  double moved = 0.0;
  for (std::size_t i = 0; i < want_w.size(); ++i) {
    moved = std::max(moved, std::abs(double(want_w[i]) - uncapped_w[i]));
  }
  CHECK(moved > 1e-2);
}
