// The training ops (layernorm, GELU, linear, causal attention with RoPE, input embedding,
// cross-entropy): the SIMD float versions against their scalar references, and every backward
// against central finite differences of its forward in double.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "approx.hpp"
#include "attention/ops/causal_attention.hpp"
#include "attention/ops/cross_entropy.hpp"
#include "attention/ops/embedding.hpp"
#include "attention/ops/gelu.hpp"
#include "attention/ops/layernorm.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/rope.hpp"
#include "attention/ops/vec.hpp"

namespace {

std::vector<double> random_doubles(std::size_t n, std::uint32_t seed, double scale = 1.0) {
  std::vector<double> values(n);
  attn::NumpyRandomState(seed).fill_randn(values);
  for (double& v : values) v *= scale;
  return values;
}

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

double weighted_sum(const std::vector<double>& out, const std::vector<double>& weights) {
  double sum = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) sum += out[i] * weights[i];
  return sum;
}

// Central differences (h = 1e-6) of loss() in each element of x, against analytic.
void check_gradient(std::vector<double>& x, const std::vector<double>& analytic,
                    const std::function<double()>& loss, const std::string& what) {
  INFO(what);
  REQUIRE(x.size() == analytic.size());
  const double h = 1e-6;
  std::vector<double> numeric(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = loss();
    x[i] = saved - h;
    const double down = loss();
    x[i] = saved;
    numeric[i] = (up - down) / (2 * h);
  }
  require_close(analytic, numeric, 1e-7, 1e-6, what + " vs finite differences");
}

}  // namespace

TEST_CASE("layernorm backward matches finite differences; SIMD matches the reference",
          "[train_ops]") {
  const std::size_t rows = 3, d = 37;
  auto x = random_doubles(rows * d, 1);
  auto w = random_doubles(d, 2);
  auto b = random_doubles(d, 3);
  const auto r = random_doubles(rows * d, 4);
  std::vector<double> out(rows * d), mean(rows), rstd(rows);
  const auto loss = [&] {
    attn::reference::layernorm_forward(x.data(), w.data(), b.data(), out.data(), mean.data(),
                                       rstd.data(), rows, d);
    return weighted_sum(out, r);
  };
  loss();
  std::vector<double> dx(rows * d), dw(d), db(d);
  attn::reference::layernorm_backward(r.data(), x.data(), w.data(), mean.data(), rstd.data(),
                                      dx.data(), dw.data(), db.data(), rows, d);
  check_gradient(x, dx, loss, "layernorm dx");
  check_gradient(w, dw, loss, "layernorm dweight");
  check_gradient(b, db, loss, "layernorm dbias");

  const auto xf = to_float(x), wf = to_float(w), bf = to_float(b), rf = to_float(r);
  std::vector<float> o_ref(rows * d), m_ref(rows), s_ref(rows), o(rows * d), m(rows), s(rows);
  attn::reference::layernorm_forward(xf.data(), wf.data(), bf.data(), o_ref.data(), m_ref.data(),
                                     s_ref.data(), rows, d);
  attn::layernorm_forward(xf.data(), wf.data(), bf.data(), o.data(), m.data(), s.data(), rows, d);
  require_close(o, o_ref, 1e-5, 1e-5, "layernorm forward");
  require_close(s, s_ref, 0, 1e-5, "layernorm rstd");
  std::vector<float> dx_ref(rows * d, 0.5f), dw_ref(d, 0.5f), db_ref(d, 0.5f);
  std::vector<float> dx_f(rows * d, 0.5f), dw_f(d, 0.5f), db_f(d, 0.5f);  // accumulates
  attn::reference::layernorm_backward(rf.data(), xf.data(), wf.data(), m_ref.data(), s_ref.data(),
                                      dx_ref.data(), dw_ref.data(), db_ref.data(), rows, d);
  attn::layernorm_backward(rf.data(), xf.data(), wf.data(), m.data(), s.data(), dx_f.data(),
                           dw_f.data(), db_f.data(), rows, d);
  require_close(dx_f, dx_ref, 1e-5, 1e-4, "layernorm dx");
  require_close(dw_f, dw_ref, 1e-5, 1e-5, "layernorm dweight");
  require_close(db_f, db_ref, 1e-5, 1e-5, "layernorm dbias");
}

TEST_CASE("GELU (erf and tanh) backward matches finite differences; SIMD matches the reference",
          "[train_ops]") {
  for (const auto kind : {attn::GeluKind::Erf, attn::GeluKind::Tanh}) {
    const std::string name = kind == attn::GeluKind::Erf ? "erf" : "tanh";
    const std::size_t count = 45;
    auto x = random_doubles(count, 5, 2.5);
    const auto r = random_doubles(count, 6);
    std::vector<double> out(count), dx(count);
    const auto loss = [&] {
      attn::reference::gelu_forward(x.data(), out.data(), count, kind);
      return weighted_sum(out, r);
    };
    attn::reference::gelu_backward(r.data(), x.data(), dx.data(), count, kind);
    check_gradient(x, dx, loss, "gelu " + name);

    const auto xf = to_float(x), rf = to_float(r);
    std::vector<float> o_ref(count), o(count), d_ref(count, 1.0f), d_f(count, 1.0f);
    attn::reference::gelu_forward(xf.data(), o_ref.data(), count, kind);
    attn::gelu_forward(xf.data(), o.data(), count, kind);
    require_close(o, o_ref, 1e-6, 1e-5, "gelu forward " + name);
    attn::reference::gelu_backward(rf.data(), xf.data(), d_ref.data(), count, kind);
    attn::gelu_backward(rf.data(), xf.data(), d_f.data(), count, kind);
    require_close(d_f, d_ref, 1e-6, 1e-5, "gelu backward " + name);
  }
  // torch.nn.GELU() at a few points: x·Φ(x)
  CHECK(std::abs(attn::reference::gelu(1.0, attn::GeluKind::Erf) - 0.8413447460685429) < 1e-15);
  CHECK(std::abs(attn::reference::gelu(1.0, attn::GeluKind::Tanh) - 0.8411919906082768) < 1e-15);
}

TEST_CASE("linear backward matches finite differences; SIMD matches the reference", "[train_ops]") {
  const std::size_t shapes[][3] = {{13, 19, 35}, {21, 35, 19}};  // in < out and in > out
  for (const auto& shape : shapes) {
    const std::size_t m = shape[0], in = shape[1], out = shape[2];
    INFO("m " << m << ", in " << in << ", out " << out);
    auto x = random_doubles(m * in, 7);
    auto w = random_doubles(out * in, 8, 0.3);
    auto b = random_doubles(out, 9);
    const auto r = random_doubles(m * out, 10);
    std::vector<double> y(m * out);
    const auto loss = [&] {
      attn::reference::linear_forward(x.data(), w.data(), b.data(), y.data(), m, in, out);
      return weighted_sum(y, r);
    };
    std::vector<double> dx(m * in), dw(out * in), db(out);
    attn::reference::linear_backward(r.data(), x.data(), w.data(), dx.data(), dw.data(), db.data(),
                                     m, in, out);
    check_gradient(x, dx, loss, "linear dx");
    check_gradient(w, dw, loss, "linear dweight");
    check_gradient(b, db, loss, "linear dbias");

    const auto xf = to_float(x), wf = to_float(w), bf = to_float(b), rf = to_float(r);
    std::vector<float> y_ref(m * out), y_f(m * out);
    attn::LinearScratch scratch;
    attn::reference::linear_forward(xf.data(), wf.data(), bf.data(), y_ref.data(), m, in, out);
    attn::linear_forward(xf.data(), wf.data(), bf.data(), y_f.data(), m, in, out, scratch);
    require_close(y_f, y_ref, 1e-5, 1e-5, "linear forward");
    std::vector<float> dx_ref(m * in, 1.0f), dw_ref(out * in, 1.0f), db_ref(out, 1.0f);
    std::vector<float> dx_f(dx_ref), dw_f(dw_ref), db_f(db_ref);
    attn::reference::linear_backward(rf.data(), xf.data(), wf.data(), dx_ref.data(), dw_ref.data(),
                                     db_ref.data(), m, in, out);
    attn::linear_backward(rf.data(), xf.data(), wf.data(), dx_f.data(), dw_f.data(), db_f.data(), m,
                          in, out, scratch);
    require_close(dx_f, dx_ref, 1e-5, 1e-5, "linear dx");
    require_close(dw_f, dw_ref, 1e-5, 1e-5, "linear dweight");
    require_close(db_f, db_ref, 1e-5, 1e-5, "linear dbias");
  }
}

TEST_CASE("causal attention (with and without RoPE) backward matches finite differences",
          "[train_ops]") {
  const std::size_t batch = 2, n = 5, d = 12, heads = 3;
  for (const bool rope : {false, true}) {
    INFO("rope " << rope);
    auto qkv = random_doubles(batch * n * 3 * d, 11);
    const auto r = random_doubles(batch * n * d, 12);
    std::vector<double> rotated, att(batch * heads * n * n), ctx(batch * n * d);
    const auto loss = [&] {
      rotated = qkv;
      if (rope) attn::reference::rope_rotate(rotated.data(), batch, n, d, heads, +1);
      attn::reference::causal_attention_forward(rotated.data(), att.data(), ctx.data(), batch, n, d,
                                                heads);
      return weighted_sum(ctx, r);
    };
    loss();
    std::vector<double> dqkv(qkv.size());
    attn::reference::causal_attention_backward(r.data(), rotated.data(), att.data(), dqkv.data(),
                                               batch, n, d, heads);
    if (rope) attn::reference::rope_rotate(dqkv.data(), batch, n, d, heads, -1);
    check_gradient(qkv, dqkv, loss, rope ? "attention dqkv (rope)" : "attention dqkv");
    // causal: row i of every head's weights sums to 1 over j <= i and is 0 past i
    for (std::size_t bh = 0; bh < batch * heads; ++bh) {
      for (std::size_t i = 0; i < n; ++i) {
        double sum = 0.0;
        for (std::size_t j = 0; j < n; ++j) {
          if (j > i) CHECK(att[(bh * n + i) * n + j] == 0.0);
          sum += att[(bh * n + i) * n + j];
        }
        CHECK(std::abs(sum - 1.0) < 1e-12);
      }
    }
  }
}

TEST_CASE("causal attention SIMD forward and backward match the reference", "[train_ops]") {
  const std::size_t batch = 3, n = 17, d = 30, heads = 2;  // d_k 15: odd, past a SIMD width
  const auto qkv = random_floats(batch * n * 3 * d, 13);
  const auto dctx = random_floats(batch * n * d, 14);
  std::vector<float> att_ref(batch * heads * n * n), ctx_ref(batch * n * d);
  std::vector<float> att(att_ref.size()), ctx(ctx_ref.size());
  attn::reference::causal_attention_forward(qkv.data(), att_ref.data(), ctx_ref.data(), batch, n, d,
                                            heads);
  attn::AttentionScratch scratch;
  attn::causal_attention_forward(qkv.data(), att.data(), ctx.data(), batch, n, d, heads, scratch);
  require_close(att, att_ref, 1e-6, 1e-5, "attention weights");
  require_close(ctx, ctx_ref, 1e-5, 1e-5, "attention context");
  std::vector<float> d_ref(qkv.size(), 0.25f), d_f(qkv.size(), 0.25f);
  attn::reference::causal_attention_backward(dctx.data(), qkv.data(), att_ref.data(), d_ref.data(),
                                             batch, n, d, heads);
  attn::causal_attention_backward(dctx.data(), qkv.data(), att.data(), d_f.data(), batch, n, d,
                                  heads, scratch);
  require_close(d_f, d_ref, 1e-5, 1e-4, "attention dqkv");
}

TEST_CASE("RoPE backward undoes the forward rotation", "[train_ops]") {
  const std::size_t batch = 2, n = 6, d = 8, heads = 2;
  const auto qkv = random_floats(batch * n * 3 * d, 15);
  auto x = qkv;
  attn::rope_forward(x.data(), batch, n, d, heads);
  CHECK(x != qkv);
  for (std::size_t c = 2 * d; c < 3 * d; ++c)
    CHECK(x[(n + 3) * 3 * d + c] == qkv[(n + 3) * 3 * d + c]);
  attn::rope_backward(x.data(), batch, n, d, heads);
  require_close(x, qkv, 1e-6, 1e-6, "rotate then rotate back");
}

// An independent reference for rope_forward, written from the formula alone (no core function
// computes the angle here). Convention: interleaved pairs — within each head's d_k slice of q
// and of k, dimensions (2i, 2i+1) form pair i — and pair i at position t turns counter-clockwise
// by θ = t · 10000^(−2i/d_k): (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ). That is the
// convention of apply_rope in ops/positional.cpp and of rope() in scripts/data/torch_model.py,
// which makes the PyTorch golden data in tests/data/train. v is not rotated. Rows are [batch·n,
// 3·d] (q | k | v), head h at columns h·d_k of q and of k; the position t restarts at 0 each batch.
TEST_CASE("RoPE forward matches a hand-written rotation by t * 10000^(-2i/d_k)", "[train_ops]") {
  const std::size_t batch = 2, n = 5, d = 8, heads = 2, dk = d / heads;
  const auto qkv = random_floats(batch * n * 3 * d, 21);
  auto got = qkv;
  attn::rope_forward(got.data(), batch, n, d, heads);

  std::vector<double> want(qkv.begin(), qkv.end());
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t t = 0; t < n; ++t) {
      const std::size_t row = (b * n + t) * 3 * d;
      for (std::size_t part = 0; part < 2; ++part) {  // q, then k; v (part 2) stays
        for (std::size_t h = 0; h < heads; ++h) {
          for (std::size_t i = 0; i < dk / 2; ++i) {
            const std::size_t c0 = row + part * d + h * dk + 2 * i;
            const double theta = double(t) * std::pow(10000.0, -2.0 * double(i) / double(dk));
            const double x0 = qkv[c0], x1 = qkv[c0 + 1];
            want[c0] = x0 * std::cos(theta) - x1 * std::sin(theta);
            want[c0 + 1] = x0 * std::sin(theta) + x1 * std::cos(theta);
          }
        }
      }
    }
  }
  require_close(got, want, 1e-6, 1e-5, "rope_forward vs the hand-written rotation");

  // By hand. Position 0 (of each batch) is unchanged, q, k and v alike.
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t c = 0; c < 3 * d; ++c) {
      CHECK(got[b * n * 3 * d + c] == qkv[b * n * 3 * d + c]);
    }
  }
  // v is never rotated.
  for (std::size_t r = 0; r < batch * n; ++r) {
    for (std::size_t c = 2 * d; c < 3 * d; ++c) CHECK(got[r * 3 * d + c] == qkv[r * 3 * d + c]);
  }
  // Position 1, pair 0 (θ_0 = 1): exactly 1 radian, counter-clockwise, in every head of q and k.
  const double c1 = std::cos(1.0), s1 = std::sin(1.0);
  for (std::size_t b = 0; b < batch; ++b) {
    const std::size_t row = (b * n + 1) * 3 * d;
    for (std::size_t part = 0; part < 2; ++part) {
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t c0 = row + part * d + h * dk;
        const double x0 = qkv[c0], x1 = qkv[c0 + 1];
        CHECK(std::abs(got[c0] - (x0 * c1 - x1 * s1)) < 2e-6);
        CHECK(std::abs(got[c0 + 1] - (x0 * s1 + x1 * c1)) < 2e-6);
      }
    }
  }
  // Position 3, pair 1 of a head with d_k = 4: θ = 3 · 10000^(−2/4) = 0.03 radian.
  {
    const std::size_t c0 = (0 * n + 3) * 3 * d + 1 * d + 1 * dk + 2;  // k, head 1, pair 1
    const double x0 = qkv[c0], x1 = qkv[c0 + 1];
    CHECK(std::abs(got[c0] - (x0 * std::cos(0.03) - x1 * std::sin(0.03))) < 2e-6);
    CHECK(std::abs(got[c0 + 1] - (x0 * std::sin(0.03) + x1 * std::cos(0.03))) < 2e-6);
  }
  // A unit vector on pair 0 at position 1 lands on (cos 1, sin 1): the direction, spelled out.
  std::vector<float> unit(batch * n * 3 * d, 0.0f);
  unit[1 * 3 * d + 0] = 1.0f;  // batch 0, position 1, q head 0, dimension 0
  attn::rope_forward(unit.data(), batch, n, d, heads);
  CHECK(std::abs(unit[1 * 3 * d + 0] - 0.5403023058681398) < 1e-7);  // cos 1
  CHECK(std::abs(unit[1 * 3 * d + 1] - 0.8414709848078965) < 1e-7);  // +sin 1
}

TEST_CASE("input embedding backward matches finite differences; SIMD matches the reference",
          "[train_ops]") {
  const std::size_t batch = 2, n = 4, d = 11, vocab = 6;
  const std::vector<std::int32_t> ids{1, 3, 3, 0, 5, 1, 2, 1};
  auto embed = random_doubles(vocab * d, 16);
  auto pos = random_doubles(n * d, 17);
  const auto r = random_doubles(batch * n * d, 18);
  std::vector<double> out(batch * n * d);
  const auto loss = [&] {
    attn::reference::input_embedding_forward(ids.data(), embed.data(), pos.data(), out.data(),
                                             batch, n, d);
    return weighted_sum(out, r);
  };
  std::vector<double> de(embed.size()), dp(pos.size());
  attn::reference::input_embedding_backward(r.data(), ids.data(), de.data(), dp.data(), batch, n,
                                            d);
  check_gradient(embed, de, loss, "embedding dembed");
  check_gradient(pos, dp, loss, "embedding dpos");
  for (std::size_t c = 0; c < d; ++c) CHECK(de[4 * d + c] == 0.0);  // id 4 is not in the batch

  const auto ef = to_float(embed), pf = to_float(pos), rf = to_float(r);
  std::vector<float> o_ref(out.size()), o(out.size());
  attn::reference::input_embedding_forward(ids.data(), ef.data(), pf.data(), o_ref.data(), batch, n,
                                           d);
  attn::input_embedding_forward(ids.data(), ef.data(), pf.data(), o.data(), batch, n, d);
  CHECK(o == o_ref);
  std::vector<float> de_ref(ef.size()), dp_ref(pf.size()), de_f(ef.size()), dp_f(pf.size());
  attn::reference::input_embedding_backward(rf.data(), ids.data(), de_ref.data(), dp_ref.data(),
                                            batch, n, d);
  attn::input_embedding_backward(rf.data(), ids.data(), de_f.data(), dp_f.data(), batch, n, d);
  require_close(de_f, de_ref, 1e-6, 1e-6, "dembed");
  require_close(dp_f, dp_ref, 1e-6, 1e-6, "dpos");
}

TEST_CASE("cross-entropy ignores targets < 0; backward matches finite differences", "[train_ops]") {
  const std::size_t rows = 5, vocab = 9;
  const std::vector<std::int32_t> targets{3, -1, 0, 8, -1};
  auto logits = random_doubles(rows * vocab, 19, 2.0);
  std::vector<double> probs(logits.size());
  const auto loss = [&] {
    return attn::reference::cross_entropy_forward(logits.data(), targets.data(), probs.data(), rows,
                                                  vocab);
  };
  const double value = loss();
  // by hand: mean over rows 0, 2, 3 of log Σ e^z − z_t
  double expected = 0.0;
  for (std::size_t r : {0u, 2u, 3u}) {
    double sum = 0.0;
    for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(logits[r * vocab + v]);
    expected += std::log(sum) - logits[r * vocab + std::size_t(targets[r])];
  }
  CHECK(std::abs(value - expected / 3) < 1e-12);
  std::vector<double> dlogits(logits.size());
  attn::reference::cross_entropy_backward(probs.data(), targets.data(), dlogits.data(), rows,
                                          vocab);
  check_gradient(logits, dlogits, loss, "cross-entropy dlogits");
  for (std::size_t v = 0; v < vocab; ++v) CHECK(dlogits[1 * vocab + v] == 0.0);

  const auto lf = to_float(logits);
  std::vector<float> p_ref(lf.size()), p(lf.size()), d_ref(lf.size()), d_f(lf.size());
  const float l_ref =
      attn::reference::cross_entropy_forward(lf.data(), targets.data(), p_ref.data(), rows, vocab);
  const float l_f = attn::cross_entropy_forward(lf.data(), targets.data(), p.data(), rows, vocab);
  CHECK(std::abs(l_f - l_ref) < 1e-5);
  require_close(p, p_ref, 1e-7, 1e-5, "cross-entropy probabilities");
  attn::reference::cross_entropy_backward(p_ref.data(), targets.data(), d_ref.data(), rows, vocab);
  attn::cross_entropy_backward(p.data(), targets.data(), d_f.data(), rows, vocab);
  require_close(d_f, d_ref, 1e-7, 1e-5, "cross-entropy dlogits");
}

TEST_CASE("vec::transpose: blocks and edges, into a padded row stride", "[train_ops]") {
  for (const std::size_t rows : {1u, 16u, 37u, 2048u}) {
    const std::size_t cols = 21;
    const auto in = random_floats(rows * cols, 20);
    const std::size_t ld = attn::vec::padded_stride(rows);
    CHECK(ld >= rows);
    CHECK(ld % 256 != 0);
    std::vector<float> out(cols * ld, -1.0f);
    attn::vec::transpose(in.data(), rows, cols, out.data(), ld);
    bool same = true;
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) same = same && out[c * ld + r] == in[r * cols + c];
    }
    CHECK(same);
    for (std::size_t c = 0; c < cols; ++c) {
      for (std::size_t r = rows; r < ld; ++r) CHECK(out[c * ld + r] == -1.0f);  // padding kept
    }
  }
}
