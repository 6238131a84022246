// Generation through the KV cache and the sampler (generate.hpp).
#include "attention/model/generate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "attention/error.hpp"
#include "attention/message_text.hpp"

namespace attn {

namespace {}  // namespace

std::size_t validate(const GenerateOptions& options, const ModelConfig& config,
                     std::size_t prompt_length) {
  if (prompt_length == 0) throw Error("generate needs a prompt of at least one token, got none");
  const std::size_t room = prompt_length < config.context ? config.context - prompt_length : 0;
  const std::size_t max_tokens =
      options.max_tokens.value_or(std::max<std::size_t>(1, std::min(kDefaultMaxTokens, room)));
  if (max_tokens < 1) {
    throw Error("maxTokens must be at least 1, got " + std::to_string(max_tokens));
  }
  if (max_tokens > room) {
    const std::string left =
        room == 0 ? "the prompt alone fills it"
                  : "maxTokens can be at most " + std::to_string(room) + " after this prompt";
    throw Error("the prompt's " + std::to_string(prompt_length) + " tokens and maxTokens " +
                std::to_string(max_tokens) + " make " + std::to_string(prompt_length + max_tokens) +
                " positions, past the model's context of " + std::to_string(config.context) + " (" +
                left + ")");
  }
  if (!(options.temperature >= 0.0 && std::isfinite(options.temperature))) {
    throw Error("temperature must be 0 (greedy) or a finite number above 0, got " +
                number_text(options.temperature));
  }
  if (!(options.top_p > 0.0 && options.top_p <= 1.0)) {
    throw Error("topP must be above 0 and at most 1 (1 keeps every token), got " +
                number_text(options.top_p));
  }
  for (const std::int32_t id : options.stop) {
    if (id < 0 || std::size_t(id) >= config.vocab) {
      throw Error("stop id " + std::to_string(id) +
                  " is out of range: the vocabulary has ids 0 to " +
                  std::to_string(config.vocab - 1));
    }
  }
  return max_tokens;
}

double token_probability(std::span<const float> logits, std::int32_t id) {
  // top_next_tokens' arithmetic, term for term.
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float l : logits) sum += std::exp(double(l) - max);
  return std::exp(double(logits[std::size_t(id)]) - max) / sum;
}

std::uint32_t position_seed(std::uint32_t seed, std::uint64_t position) {
  // SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c): one step from (seed << 32) ^ p.
  std::uint64_t z = ((std::uint64_t(seed) << 32) ^ position) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return std::uint32_t(z >> 32);
}

Sampler::Sampler(double temperature, std::size_t top_k, double top_p, std::uint32_t seed)
    : temperature_(temperature), top_k_(top_k), top_p_(top_p), rng_(seed) {}

namespace {

std::int32_t argmax(std::span<const float> logits) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = i;  // strictly: the lowest id among equals
  }
  return std::int32_t(best);
}

}  // namespace

double Sampler::kept(std::span<const float> logits) const {
  const std::size_t V = logits.size();
  const double max = *std::max_element(logits.begin(), logits.end());
  const auto weight = [&](std::int32_t id) {
    return std::exp((double(logits[std::size_t(id)]) - max) / temperature_);
  };
  // Most likely first; equal logits by the lower id (a strict total order, so any partial sort
  // gives the same prefix).
  const auto before = [&](std::int32_t a, std::int32_t b) {
    const float la = logits[std::size_t(a)], lb = logits[std::size_t(b)];
    return la > lb || (la == lb && a < b);
  };
  ids_.resize(V);
  std::iota(ids_.begin(), ids_.end(), 0);
  const std::size_t keep = top_k_ > 0 && top_k_ < V ? top_k_ : V;
  double total = 0.0;
  if (keep == V && top_p_ >= 1.0) {  // every id, in id order: no sort needed
    weights_.resize(V);
    for (std::size_t i = 0; i < V; ++i) total += (weights_[i] = weight(std::int32_t(i)));
    return total;
  }
  std::size_t sorted = keep;  // ids_[0, sorted) are in order
  if (keep < V) {
    std::partial_sort(ids_.begin(), ids_.begin() + std::ptrdiff_t(keep), ids_.end(), before);
    ids_.resize(keep);
    if (top_p_ >= 1.0) {
      weights_.resize(keep);
      for (std::size_t i = 0; i < keep; ++i) total += (weights_[i] = weight(ids_[i]));
      return total;
    }
    for (const std::int32_t id : ids_) total += weight(id);
  } else {
    for (std::size_t i = 0; i < V; ++i) total += weight(std::int32_t(i));
    sorted = 0;
  }
  // top-p: the fewest most likely ids whose probability (over the top-k) reaches top_p; an id
  // is kept while the probability before it is below top_p. Sorted in growing prefixes: the
  // nucleus is usually a small part of a large vocabulary.
  const double bound = top_p_ * total;
  std::size_t cut = 0;
  double before_cut = 0.0;
  for (std::size_t want = std::min<std::size_t>(ids_.size(), 256);;
       want = std::min(ids_.size(), want * 16)) {
    if (want > sorted) {
      std::partial_sort(ids_.begin() + std::ptrdiff_t(sorted), ids_.begin() + std::ptrdiff_t(want),
                        ids_.end(), before);
      sorted = want;
    }
    while (cut < sorted && (cut == 0 || before_cut < bound)) before_cut += weight(ids_[cut++]);
    if (cut < sorted || sorted == ids_.size()) break;
  }
  ids_.resize(cut);
  weights_.resize(cut);
  double kept_total = 0.0;
  for (std::size_t i = 0; i < cut; ++i) kept_total += (weights_[i] = weight(ids_[i]));
  return kept_total;
}

std::int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) throw Error("cannot sample from no logits");
  if (temperature_ == 0.0) return argmax(logits);
  const double total = kept(logits);
  const double target = rng_.random_sample() * total;
  double cumulative = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    if (weights_[i] <= 0.0) continue;
    cumulative += weights_[i];
    last_positive = i;
    if (target < cumulative) return ids_[i];
  }
  return ids_[last_positive];  // rounding: u·total at the very top
}

std::vector<NextToken> Sampler::distribution(std::span<const float> logits) const {
  if (logits.empty()) return {};
  if (temperature_ == 0.0) return {{argmax(logits), 1.0}};
  const double total = kept(logits);
  std::vector<NextToken> out;
  for (std::size_t i = 0; i < ids_.size(); ++i) out.push_back({ids_[i], weights_[i] / total});
  std::stable_sort(out.begin(), out.end(), [&](const NextToken& a, const NextToken& b) {
    const float la = logits[std::size_t(a.id)], lb = logits[std::size_t(b.id)];
    return la > lb || (la == lb && a.id < b.id);
  });
  return out;
}

Generator::Generator(Model& model, std::span<const std::int32_t> prompt,
                     const GenerateOptions& options)
    : model_(model), options_(options), sampler_(options) {
  max_tokens_ = validate(options, model.config(), prompt.size());
  prompt_length_ = prompt.size();
  // Room for the prompt and every new token but the last (which is never fed back).
  const ModelOutput out = model_.prefill(prompt, prompt_length_ + max_tokens_ - 1, cache_);
  first_logits_.assign(out.logits.begin(), out.logits.end());
  const std::size_t n = prompt_length_, heads = model.config().heads;
  for (const auto& layer : out.attention) {  // [heads, n, n]: each head's row n − 1
    std::vector<float> rows(heads * n);
    for (std::size_t h = 0; h < heads; ++h) {
      const float* row = layer.data() + (h * n + n - 1) * n;
      std::copy(row, row + n, rows.data() + h * n);
    }
    first_attention_.push_back(std::move(rows));
  }
}

std::optional<GenerationStep> Generator::next() {
  if (done()) return std::nullopt;
  GenerationStep step;
  std::span<const float> logits;
  if (produced_ == 0) {
    logits = first_logits_;
    for (const auto& rows : first_attention_) step.attention.emplace_back(rows);
  } else {
    CachedStep cached = model_.decode(last_, cache_);
    logits = cached.logits;
    step.attention = std::move(cached.attention);
  }
  // The draw for sequence position p = prompt + produced depends on (seed, p) alone.
  if (options_.temperature > 0.0) {
    sampler_.reseed(position_seed(options_.seed, prompt_length_ + produced_));
  }
  step.id = sampler_.sample(logits);
  step.probability = token_probability(logits, step.id);
  last_ = step.id;
  ++produced_;
  stopped_ = std::find(options_.stop.begin(), options_.stop.end(), step.id) != options_.stop.end();
  return step;
}

Generation generate(Model& model, std::span<const std::int32_t> prompt,
                    const GenerateOptions& options) {
  Generator generator(model, prompt, options);
  Generation result;
  while (auto step = generator.next()) {
    result.ids.push_back(step->id);
    GeneratedToken token{step->id, step->probability, {}};
    for (const auto& layer : step->attention)
      token.attention.emplace_back(layer.begin(), layer.end());
    result.steps.push_back(std::move(token));
  }
  return result;
}

}  // namespace attn
