// Direct logit attribution (logit_attribution.hpp).
#include "attention/model/logit_attribution.hpp"

#include <cmath>
#include <numeric>

#include "attention/error.hpp"
#include "attention/ops/layernorm.hpp"

namespace attn {

namespace {

bool has_parameter(const Model& model, const std::string& name) {
  for (const auto& info : model.parameter_table()) {
    if (info.name == name) return true;
  }
  return false;
}

// y [cols] = Wᵀ u for a stored W [rows, cols] and u [rows], in float64.
std::vector<double> transposed_times(const StoredWeights& w, std::size_t rows, std::size_t cols,
                                     const std::vector<double>& u) {
  std::vector<double> y(cols, 0.0);
  std::vector<float> row(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    w.rows(r, 1, cols, row.data());
    for (std::size_t c = 0; c < cols; ++c) y[c] += double(row[c]) * u[r];
  }
  return y;
}

double dot(const float* x, const std::vector<double>& u) {
  double sum = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i) sum += double(x[i]) * u[i];
  return sum;
}

}  // namespace

std::string attribution_refusal(const ModelConfig& config) {
  std::string why;
  for (std::size_t l = 0; l < config.layers; ++l) {
    if (has_post_norm(config, l)) {
      why =
          "its blocks normalise each sublayer's output before the residual stream adds it "
          "(norms after the sublayers, as in Gemma 2 and 3 and OLMo 2), so a head's or an "
          "MLP's part of the final residual is not a fixed linear term";
      break;
    }
  }
  if (config.final_softcap > 0.0) {
    why += std::string(why.empty() ? "" : ", and ") +
           "its final logits are soft-capped (cap · tanh(logit / cap), as in Gemma 2), so the "
           "logit difference is not linear in the final residual";
  }
  if (why.empty()) return why;
  return "direct logit attribution cannot split this model's logit difference into parts: " + why;
}

LogitAttribution logit_attribution(Model& model, std::span<const std::int32_t> ids, std::int32_t a,
                                   std::int32_t b) {
  const ModelConfig& config = model.config();
  if (const std::string why = attribution_refusal(config); !why.empty()) throw Error(why);
  if (ids.empty()) throw Error("attribution needs at least one token id, got none");
  for (const std::int32_t answer : {a, b}) {
    if (answer < 0 || std::size_t(answer) >= config.vocab) {
      throw Error("answer " + std::to_string(answer) +
                  " is not in the vocabulary: it has ids 0 to " + std::to_string(config.vocab - 1));
    }
  }
  const std::size_t n = ids.size(), d = config.d_model, L = config.layers, last = n - 1;
  const ModelOutput out = model.forward(ids, 1, n, ForwardRun{std::nullopt, nullptr, false});

  LogitAttribution result;
  result.total = double(out.logits[std::size_t(a)]) - double(out.logits[std::size_t(b)]);

  // The direction u [d] a part is read along: w ⊙ (W_U[a] − W_U[b]) / scale, mean-centred for
  // LayerNorm (p̃ · u = p · (u − mean u)); the final norm's bias goes to the constant.
  std::vector<float> unembed_a(d), unembed_b(d);
  model.unembedding().rows(std::size_t(a), 1, d, unembed_a.data());
  model.unembedding().rows(std::size_t(b), 1, d, unembed_b.data());
  std::vector<double> u(d);
  for (std::size_t i = 0; i < d; ++i) u[i] = double(unembed_a[i]) - double(unembed_b[i]);
  const float* x = model.residual(L).data() + last * d;  // the final residual [d]
  if (config.norm != NormKind::None) {
    double scale = 0.0;
    if (config.norm == NormKind::LayerNorm) {
      const double mean = std::accumulate(x, x + d, 0.0) / double(d);
      double var = 0.0;
      for (std::size_t i = 0; i < d; ++i) var += (double(x[i]) - mean) * (double(x[i]) - mean);
      scale = std::sqrt(var / double(d) + kLayerNormEps);
    } else {
      double squares = 0.0;
      for (std::size_t i = 0; i < d; ++i) squares += double(x[i]) * double(x[i]);
      scale = std::sqrt(squares / double(d) + config.norm_eps);
    }
    const std::vector<float> weight = model.parameter_values("ln_f.weight");
    if (has_parameter(model, "ln_f.bias")) {
      const std::vector<float> bias = model.parameter_values("ln_f.bias");
      for (std::size_t i = 0; i < d; ++i) result.constant += double(bias[i]) * u[i];
    }
    const double one = config.norm == NormKind::GemmaRmsNorm ? 1.0 : 0.0;
    for (std::size_t i = 0; i < d; ++i) u[i] *= (one + double(weight[i])) / scale;
    if (config.norm == NormKind::LayerNorm) {
      const double mean = std::accumulate(u.begin(), u.end(), 0.0) / double(d);
      for (double& v : u) v -= mean;
    }
  }

  result.embed = dot(model.residual(0).data() + last * d, u);
  result.heads.assign(L * config.heads, 0.0f);
  result.attention_bias.assign(L, 0.0f);
  result.mlp.assign(L, 0.0f);
  for (std::size_t l = 0; l < L; ++l) {
    const std::string prefix = "layers." + std::to_string(l) + ".";
    const BlockActivations& acts = model.activations(l);
    const AttentionShape shape = attention_shape(config, l);
    const std::size_t width = shape.q_width(), dk = shape.head_dim;
    // Head h: z_h · (W_O[:, h·dk … (h+1)·dk)ᵀ u).
    const std::vector<double> read = transposed_times(
        model.stored_weights(prefix + "attn.out_proj.weight"), d, width, u);  // [heads·dk]
    const float* z = acts.ctx.data() + last * width;
    for (std::size_t h = 0; h < shape.heads; ++h) {
      double sum = 0.0;
      for (std::size_t c = h * dk; c < (h + 1) * dk; ++c) sum += double(z[c]) * read[c];
      result.heads[l * config.heads + h] = float(sum);
    }
    if (has_parameter(model, prefix + "attn.out_proj.bias")) {
      result.attention_bias[l] =
          float(dot(model.parameter_values(prefix + "attn.out_proj.bias").data(), u));
    }
    if (has_mlp(config, l)) {
      const std::size_t W = mlp_width(config);
      const std::vector<double> through =
          transposed_times(model.stored_weights(prefix + "mlp.proj.weight"), d, W, u);  // [W]
      double sum = 0.0;
      const float* act = acts.act.data() + last * W;
      for (std::size_t c = 0; c < W; ++c) sum += double(act[c]) * through[c];
      if (has_parameter(model, prefix + "mlp.proj.bias")) {
        sum += dot(model.parameter_values(prefix + "mlp.proj.bias").data(), u);
      }
      result.mlp[l] = float(sum);
    }
  }
  return result;
}

}  // namespace attn
