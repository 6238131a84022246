// Activation patching (activation_patching.hpp): the clean and corrupted runs recorded at the hook
// points, then each site's rerun from its block on, batched per block.
#include "attention/model/activation_patching.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "attention/error.hpp"
#include "attention/message_text.hpp"

namespace attn {

namespace {

constexpr std::array<const char*, 3> kSiteNames = {"heads", "residual", "layers"};

// The most rows one batch of reruns computes at once (their activations are kept per block).
constexpr std::size_t kRowsPerBatch = 1024;

// One run's activations at the hook points, each per layer [n, width], and its metric.
struct RecordedRun {
  std::vector<AlignedVector<float>> resid, z, attn, mlp;  // resid_pre, hook_z, attn_out, mlp_out
  std::vector<AlignedVector<float>> keys, values;         // [n, kv_width]: its KV cache
  double metric = 0.0;
};

// Copies each hook point's rows into a RecordedRun (one sequence of n rows from position 0).
class Recorder final : public RunHooks {
 public:
  explicit Recorder(RecordedRun& run) : run_(run) {}
  void resid_pre(std::size_t layer, float* x, std::size_t M) const override {
    copy(run_.resid[layer], x, M);
  }
  void z(std::size_t layer, float* ctx, std::size_t M) const override {
    copy(run_.z[layer], ctx, M);
  }
  void attn_out(std::size_t layer, float* out, std::size_t M) const override {
    copy(run_.attn[layer], out, M);
  }
  void mlp_out(std::size_t layer, float* out, std::size_t M) const override {
    copy(run_.mlp[layer], out, M);
  }

 private:
  // into holds the run's n rows (M = n): allocated by the caller at the hook point's width.
  static void copy(AlignedVector<float>& into, const float* rows, std::size_t /*M*/) {
    std::copy(rows, rows + into.size(), into.data());
  }
  RecordedRun& run_;
};

// One patched rerun: the corrupted run from block `layer` on, computing positions start … n − 1,
// with one site's activation taken from the clean run.
enum class Replaced { Residual, Head, Attention, Mlp };
struct Rerun {
  Replaced what = Replaced::Residual;
  std::size_t start = 0;               // the first position whose activation differs
  std::size_t head = 0;                // Head: which
  std::vector<std::size_t> positions;  // Residual: the positions taken from the clean run
  std::size_t rows(std::size_t n) const { return n - start; }
};

// Replaces, in block `layer`, each rerun's site with the clean run's rows.
class Replacer final : public RunHooks {
 public:
  Replacer(std::size_t layer, std::span<const Rerun> reruns, const RecordedRun& clean,
           std::size_t n, std::size_t head_dim)
      : layer_(layer), reruns_(reruns), clean_(clean), n_(n), head_dim_(head_dim) {}
  void z(std::size_t layer, float* ctx, std::size_t /*M*/) const override {
    if (layer != layer_) return;
    const std::size_t width = clean_.z[layer].size() / n_;
    each(Replaced::Head, [&](const Rerun& rerun, std::size_t row, std::size_t position) {
      const float* from = clean_.z[layer].data() + position * width + rerun.head * head_dim_;
      std::copy(from, from + head_dim_, ctx + row * width + rerun.head * head_dim_);
    });
  }
  void attn_out(std::size_t layer, float* out, std::size_t /*M*/) const override {
    if (layer == layer_) replace_rows(Replaced::Attention, clean_.attn[layer], out);
  }
  void mlp_out(std::size_t layer, float* out, std::size_t /*M*/) const override {
    if (layer == layer_) replace_rows(Replaced::Mlp, clean_.mlp[layer], out);
  }

 private:
  // f(rerun, row of the batch, position) for each row of each rerun replacing `what`.
  template <class F>
  void each(Replaced what, F f) const {
    std::size_t row = 0;
    for (const Rerun& rerun : reruns_) {
      for (std::size_t p = rerun.start; p < n_; ++p, ++row) {
        if (rerun.what == what) f(rerun, row, p);
      }
    }
  }
  void replace_rows(Replaced what, const AlignedVector<float>& from, float* out) const {
    const std::size_t width = from.size() / n_;
    each(what, [&](const Rerun&, std::size_t row, std::size_t position) {
      std::copy_n(from.data() + position * width, width, out + row * width);
    });
  }

  std::size_t layer_;
  std::span<const Rerun> reruns_;
  const RecordedRun& clean_;
  std::size_t n_, head_dim_;
};

// The multiply-adds of one row through block `layer`'s weights.
double block_multiply_adds(const ModelConfig& config, std::size_t layer) {
  const AttentionShape shape = attention_shape(config, layer);
  double weights = double(config.d_model) * double(shape.row() + shape.q_width());
  if (has_mlp(config, layer)) {
    weights += double(config.d_model) * double(fc_rows(config, layer) + mlp_width(config));
  }
  return weights;
}

// The first position whose rows of width `width` (at `offset` in rows of `stride`) differ between
// a and b, or n when none does.
std::size_t first_difference(const AlignedVector<float>& a, const AlignedVector<float>& b,
                             std::size_t n, std::size_t stride, std::size_t offset,
                             std::size_t width) {
  for (std::size_t p = 0; p < n; ++p) {
    const float* x = a.data() + p * stride + offset;
    const float* y = b.data() + p * stride + offset;
    if (std::memcmp(x, y, width * sizeof(float)) != 0) return p;
  }
  return n;
}

class Patcher {
 public:
  Patcher(Model& model, std::span<const std::int32_t> clean,
          std::span<const std::int32_t> corrupted, std::int32_t a, std::int32_t b)
      : model_(model), config_(model.config()), a_(a), b_(b), n_(clean.size()) {
    if (clean.size() != corrupted.size()) {
      throw Error("the clean and corrupted prompts must have the same length to be patched " +
                  std::string("position by position: clean has ") + std::to_string(clean.size()) +
                  " tokens, corrupted has " + std::to_string(corrupted.size()));
    }
    if (clean.empty()) throw Error("patching needs at least one token id, got none");
    for (const std::int32_t answer : {a, b}) {
      if (answer < 0 || std::size_t(answer) >= config_.vocab) {
        throw Error("answer " + std::to_string(answer) + " is not in the vocabulary: it has ids " +
                    "0 to " + std::to_string(config_.vocab - 1));
      }
    }
    record(clean, clean_);
    record(corrupted, corrupted_);
    if (clean_.metric == corrupted_.metric) {
      throw Error("the clean and corrupted runs give the same logit difference (" +
                  number_text(float(clean_.metric)) +
                  "): patching has nothing to restore — choose prompts or answers whose logit " +
                  "difference differs between the runs");
    }
  }

  const RecordedRun& clean() const { return clean_; }
  const RecordedRun& corrupted() const { return corrupted_; }
  std::size_t n() const { return n_; }

  double effect(double metric) const {
    return (metric - corrupted_.metric) / (clean_.metric - corrupted_.metric);
  }

  // The multiply-adds of these reruns from block `layer` on.
  double cost(std::size_t layer, std::span<const Rerun> reruns) const {
    double rows = 0.0, per_row = 0.0;
    for (const Rerun& rerun : reruns) rows += double(rerun.rows(n_));
    for (std::size_t l = layer; l < config_.layers; ++l) per_row += block_multiply_adds(config_, l);
    return rows * per_row;
  }

  // The metric of each rerun from block `layer` on, in batches of at most kRowsPerBatch rows.
  std::vector<double> run(std::size_t layer, std::span<const Rerun> reruns) {
    std::vector<double> metrics;
    std::size_t first = 0;
    while (first < reruns.size()) {
      std::size_t last = first, rows = 0;
      while (last < reruns.size() &&
             (last == first || rows + reruns[last].rows(n_) <= kRowsPerBatch)) {
        rows += reruns[last++].rows(n_);
      }
      const std::vector<double> batch = run_batch(layer, reruns.subspan(first, last - first));
      metrics.insert(metrics.end(), batch.begin(), batch.end());
      first = last;
    }
    return metrics;
  }

 private:
  void record(std::span<const std::int32_t> ids, RecordedRun& run) {
    const std::size_t L = config_.layers, d = config_.d_model;
    run.resid.resize(L);
    run.z.resize(L);
    run.attn.resize(L);
    run.mlp.resize(L);
    run.keys.resize(L);
    run.values.resize(L);
    std::vector<std::vector<CachedSequence>> sequences(L);
    for (std::size_t l = 0; l < L; ++l) {
      const AttentionShape shape = attention_shape(config_, l);
      run.resid[l].assign(n_ * d, 0.0f);
      run.z[l].assign(n_ * shape.q_width(), 0.0f);
      run.attn[l].assign(n_ * d, 0.0f);
      run.mlp[l].assign(has_mlp(config_, l) ? n_ * d : 0, 0.0f);
      run.keys[l].assign(n_ * shape.kv_width(), 0.0f);
      run.values[l].assign(n_ * shape.kv_width(), 0.0f);
      sequences[l] = {CachedSequence{KvLayerView{run.keys[l].data(), run.values[l].data(), 0}, n_}};
    }
    AlignedVector<float> x, out;
    model_.embedding(ids, x);
    const Recorder recorder(run);
    model_.run_sequences(0, x, sequences, &recorder, out);
    model_.logit_differences(out.data() + (n_ - 1) * d, 1, a_, b_, &run.metric);
  }

  std::vector<double> run_batch(std::size_t layer, std::span<const Rerun> reruns) {
    const std::size_t L = config_.layers, d = config_.d_model;
    // Each rerun's own keys and values per block: the corrupted run's before its start.
    std::vector<std::vector<AlignedVector<float>>> keys(L - layer), values(L - layer);
    std::vector<std::vector<CachedSequence>> sequences(L - layer);
    for (std::size_t l = layer; l < L; ++l) {
      const std::size_t width = attention_shape(config_, l).kv_width();
      for (const Rerun& rerun : reruns) {
        AlignedVector<float>& k = keys[l - layer].emplace_back(n_ * width);
        AlignedVector<float>& v = values[l - layer].emplace_back(n_ * width);
        std::copy_n(corrupted_.keys[l].data(), rerun.start * width, k.data());
        std::copy_n(corrupted_.values[l].data(), rerun.start * width, v.data());
      }
      for (std::size_t i = 0; i < reruns.size(); ++i) {
        sequences[l - layer].push_back(CachedSequence{
            KvLayerView{keys[l - layer][i].data(), values[l - layer][i].data(), reruns[i].start},
            reruns[i].rows(n_)});
      }
    }
    // The rows entering block `layer`: the corrupted run's, the clean run's at a residual site.
    AlignedVector<float> x, out;
    for (const Rerun& rerun : reruns) {
      const std::size_t at = x.size();
      x.insert(x.end(), corrupted_.resid[layer].begin() + std::ptrdiff_t(rerun.start * d),
               corrupted_.resid[layer].end());
      for (const std::size_t p : rerun.positions) {
        std::copy_n(clean_.resid[layer].data() + p * d, d, x.data() + at + (p - rerun.start) * d);
      }
    }
    // The last block computes each rerun's last row alone, unless it is the patched block (whose
    // hooks replace every row).
    const bool last_rows_only = layer + 1 < L;
    const Replacer replacer(layer, reruns, clean_, n_, attention_shape(config_, layer).head_dim);
    model_.run_sequences(layer, x, sequences, &replacer, out, last_rows_only);
    // Each rerun's metric from its last row.
    std::vector<double> metrics(reruns.size());
    AlignedVector<float> last(reruns.size() * d);
    std::size_t row = 0;
    for (std::size_t i = 0; i < reruns.size(); ++i) {
      row += last_rows_only ? 1 : reruns[i].rows(n_);
      std::copy_n(out.data() + (row - 1) * d, d, last.data() + i * d);
    }
    model_.logit_differences(last.data(), reruns.size(), a_, b_, metrics.data());
    return metrics;
  }

  Model& model_;
  const ModelConfig& config_;
  std::int32_t a_, b_;
  std::size_t n_;
  RecordedRun clean_, corrupted_;
};

// One site's rerun and where its effect goes.
struct Site {
  Rerun rerun;
  float* effect = nullptr;
};

}  // namespace

PatchSites patch_sites_by_name(const std::string& name) {
  for (std::size_t i = 0; i < kSiteNames.size(); ++i) {
    if (name == kSiteNames[i]) return PatchSites(i);
  }
  throw Error("unknown patching sites '" + name + "': use 'heads', 'residual' or 'layers'");
}

ActivationPatching activation_patching(Model& model, std::span<const std::int32_t> clean,
                                       std::span<const std::int32_t> corrupted, std::int32_t a,
                                       std::int32_t b, PatchSites sites, double max_multiply_adds) {
  Patcher patcher(model, clean, corrupted, a, b);
  const ModelConfig& config = model.config();
  const std::size_t L = config.layers, n = patcher.n(), d = config.d_model;
  ActivationPatching result;
  result.clean = patcher.clean().metric;
  result.corrupted = patcher.corrupted().metric;
  // Every site starts at effect 0: a site whose activation is the same in both runs changes
  // nothing, and is not rerun.
  std::vector<std::vector<Site>> by_layer(L);
  if (sites == PatchSites::Heads) {
    result.effect.assign(L * config.heads, 0.0f);
    for (std::size_t l = 0; l < L; ++l) {
      const AttentionShape shape = attention_shape(config, l);
      for (std::size_t h = 0; h < shape.heads; ++h) {
        const std::size_t start =
            first_difference(patcher.clean().z[l], patcher.corrupted().z[l], n, shape.q_width(),
                             h * shape.head_dim, shape.head_dim);
        if (start == n) continue;
        by_layer[l].push_back(
            {Rerun{Replaced::Head, start, h, {}}, &result.effect[l * config.heads + h]});
      }
    }
  } else if (sites == PatchSites::Residual) {
    result.effect.assign(L * n, 0.0f);
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t p = 0; p < n; ++p) {
        if (std::memcmp(patcher.clean().resid[l].data() + p * d,
                        patcher.corrupted().resid[l].data() + p * d, d * sizeof(float)) == 0) {
          continue;
        }
        by_layer[l].push_back({Rerun{Replaced::Residual, p, 0, {p}}, &result.effect[l * n + p]});
      }
    }
  } else {
    result.attention.assign(L, 0.0f);
    result.mlp.assign(L, 0.0f);
    for (std::size_t l = 0; l < L; ++l) {
      const std::size_t attention =
          first_difference(patcher.clean().attn[l], patcher.corrupted().attn[l], n, d, 0, d);
      if (attention < n) {
        by_layer[l].push_back({Rerun{Replaced::Attention, attention, 0, {}}, &result.attention[l]});
      }
      if (!has_mlp(config, l)) continue;
      const std::size_t mlp =
          first_difference(patcher.clean().mlp[l], patcher.corrupted().mlp[l], n, d, 0, d);
      if (mlp < n) by_layer[l].push_back({Rerun{Replaced::Mlp, mlp, 0, {}}, &result.mlp[l]});
    }
  }

  std::vector<std::vector<Rerun>> reruns(L);
  double cost = 0.0;
  for (std::size_t l = 0; l < L; ++l) {
    for (const Site& site : by_layer[l]) reruns[l].push_back(site.rerun);
    cost += patcher.cost(l, reruns[l]);
  }
  if (cost > max_multiply_adds) {
    throw Error("patching over " + std::string(kSiteNames[std::size_t(sites)]) + " at " +
                std::to_string(n) + " tokens would rerun " + number_text(float(cost / 1e9)) +
                " billion multiply-adds, more than the limit of " +
                number_text(float(max_multiply_adds / 1e9)) + " billion: use a shorter prompt" +
                (sites == PatchSites::Residual ? ", or patch over heads or layers" : ""));
  }
  for (std::size_t l = 0; l < L; ++l) {
    if (reruns[l].empty()) continue;
    const std::vector<double> metrics = patcher.run(l, reruns[l]);
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      *by_layer[l][i].effect = float(patcher.effect(metrics[i]));
    }
  }
  return result;
}

double residual_patched_metric(Model& model, std::span<const std::int32_t> clean,
                               std::span<const std::int32_t> corrupted, std::int32_t a,
                               std::int32_t b, std::size_t layer,
                               std::span<const std::size_t> positions) {
  Patcher patcher(model, clean, corrupted, a, b);
  const std::size_t n = patcher.n();
  if (layer >= model.config().layers) {
    throw Error("layer " + std::to_string(layer) + " is out of range: the model has " +
                std::to_string(model.config().layers) + " layers (0-based)");
  }
  // No position: the corrupted run's rows rerun from the block on, nothing replaced.
  Rerun rerun{Replaced::Residual, positions.empty() ? 0 : n, 0, {}};
  for (const std::size_t p : positions) {
    if (p >= n) {
      throw Error("position " + std::to_string(p) + " is out of range: the prompts have " +
                  std::to_string(n) + " tokens (0-based)");
    }
    rerun.start = std::min(rerun.start, p);
    rerun.positions.push_back(p);
  }
  return patcher.run(layer, {&rerun, 1}).front();
}

}  // namespace attn
