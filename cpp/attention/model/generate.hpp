// Generation: a model writes token after token from a prompt, through its KV cache (Model::prefill,
// then Model::decode: one new row per token), each token chosen by the sampler — greedy, or drawn
// at a temperature from the top-k / top-p of the softmax with a seeded generator, so a run replays.
// Each step reports the token, its probability and where its query looked in every layer. The
// draw for the token at sequence position p uses a generator seeded from (seed, p) alone
// (position_seed), so a generation continued from its own prefix with the same seed writes the
// same tokens: how a run is cut into calls cannot change it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "attention/model/model.hpp"
#include "attention/model/next_tokens.hpp"
#include "attention/rng.hpp"

namespace attn {

// The options of generate (the JS API's names in brackets, which the messages use).
inline constexpr std::size_t kDefaultMaxTokens = 20;

struct GenerateOptions {
  // [maxTokens] new tokens at most, >= 1, prompt + max_tokens <= context; unset: 20, or what the
  // context leaves after the prompt when that is less.
  std::optional<std::size_t> max_tokens;
  double temperature = 0.0;  // [temperature] 0: greedy (argmax, ties to the lower id); > 0: drawn
  std::size_t top_k = 0;     // [topK] draw among the k most likely ids only; 0: all
  double top_p = 1.0;        // [topP] draw among the fewest most likely ids whose probability
                             // (after top-k, renormalized) reaches top_p; in (0, 1], 1: all
  std::uint32_t seed = 1;    // [seed] the sampler's generators: the token at sequence position p
                             // is drawn from NumpyRandomState(position_seed(seed, p))
  std::vector<std::int32_t> stop;  // [stop] ids that end the generation once produced (kept as
                                   // its last token): the end-of-text ids
};

// Throws attn::Error naming the option (maxTokens, temperature, topK, topP, stop) for a value out
// of range, or when the prompt and maxTokens do not fit the model's context. Returns maxTokens (its
// default when unset).
std::size_t validate(const GenerateOptions& options, const ModelConfig& config,
                     std::size_t prompt_length);

// The seed of the generator that draws the token at sequence position `position` (the number of
// ids before it: the prompt's and the new ones so far) of a generation seeded `seed`: the upper 32
// bits of SplitMix64's output from the state (seed · 2^32) xor position (its increment added, then
// its finalizer). Both steps are bijections of 64 bits, so distinct (seed, position < 2^32) pairs
// never share an input, and neighbouring positions or seeds get unrelated seeds.
std::uint32_t position_seed(std::uint32_t seed, std::uint64_t position);

// The sampling rule of GenerateOptions over one position's logits [vocab].
class Sampler {
 public:
  // temperature >= 0 and finite, top_p in (0, 1] (unchecked here: validate checks them).
  Sampler(double temperature, std::size_t top_k, double top_p, std::uint32_t seed);
  explicit Sampler(const GenerateOptions& options)
      : Sampler(options.temperature, options.top_k, options.top_p, options.seed) {}

  // The next id: greedy takes the argmax (lowest id among equals) and draws nothing; otherwise
  // one random_sample() u from the generator picks, in the order most likely first (ties by the
  // lower id), the first kept id whose cumulative probability exceeds u.
  std::int32_t sample(std::span<const float> logits);

  // The generator starts again from NumpyRandomState(seed) (the Generator does so before each
  // sampled token, with position_seed).
  void reseed(std::uint32_t seed) { rng_ = NumpyRandomState(seed); }

  // The distribution sample() draws from: the kept ids, most likely first, with their
  // probabilities exp((l − max)/T) renormalized over the kept ids (float64). Greedy: the argmax
  // with probability 1.
  std::vector<NextToken> distribution(std::span<const float> logits) const;

 private:
  // ids_ = the kept ids, most likely first (or, untruncated, every id in id order), weights_
  // their unnormalized probabilities; returns their sum.
  double kept(std::span<const float> logits) const;

  double temperature_;
  std::size_t top_k_;
  double top_p_;
  NumpyRandomState rng_;
  mutable std::vector<std::int32_t> ids_;
  mutable std::vector<double> weights_;
};

// The softmax probability at temperature 1 of `id` in logits [vocab]: exp(l − max) / Σ exp(l −
// max) in float64, summed in id order — equal, bit for bit, to top_next_tokens'.
double token_probability(std::span<const float> logits, std::int32_t id);

// One generated token. The views are the generator's, valid until its next step.
struct GenerationStep {
  std::int32_t id = 0;
  double probability = 0.0;  // softmax at temperature 1 of the logits that chose it
  // Per layer [heads, t]: the query row of the position whose logits chose this token (t =
  // prompt length + k for the k-th new token, 0-based): where it looked.
  std::vector<std::span<const float>> attention;
};

// Generation from a prompt, one token per next(). The constructor checks the options and runs the
// prompt (Model::prefill, with the heads ablated now; the model's last-forward buffers are
// replaced); the model must outlive the generator and keep its weights meanwhile.
class Generator {
 public:
  Generator(Model& model, std::span<const std::int32_t> prompt, const GenerateOptions& options);

  // The next token, or nothing once max_tokens were produced or the last one was a stop id.
  std::optional<GenerationStep> next();
  bool done() const { return produced_ == max_tokens_ || stopped_; }
  std::size_t produced() const { return produced_; }

 private:
  Model& model_;
  GenerateOptions options_;
  Sampler sampler_;
  KvCache cache_;
  std::size_t prompt_length_ = 0;
  std::size_t max_tokens_ = 0;  // options.max_tokens, or its default for this prompt
  std::size_t produced_ = 0;
  bool stopped_ = false;
  std::int32_t last_ = 0;
  std::vector<float> first_logits_;                  // [vocab]: the prompt's last position
  std::vector<std::vector<float>> first_attention_;  // per layer [heads, n]: its query row
};

// A whole generation, copied: the new ids and each step's probability and attention rows.
struct GeneratedToken {
  std::int32_t id = 0;
  double probability = 0.0;
  std::vector<std::vector<float>> attention;  // per layer [heads · t]
};
struct Generation {
  std::vector<std::int32_t> ids;  // the new tokens only
  std::vector<GeneratedToken> steps;
};
Generation generate(Model& model, std::span<const std::int32_t> prompt,
                    const GenerateOptions& options);

}  // namespace attn
