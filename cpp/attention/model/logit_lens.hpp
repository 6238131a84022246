// The logit lens (nostalgebraist 2020; TransformerLens's accumulated_resid with the final norm
// applied): what each layer's residual stream already predicts, read through the model's own
// final norm and unembedding — the top-k next tokens and one chosen token's probability and rank
// at every layer and position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "attention/model/model.hpp"

namespace attn {

// The options of logit_lens (the JS API's names in brackets, which the messages use).
inline constexpr std::size_t kDefaultLensTopK = 5;
inline constexpr std::size_t kMaxLensTopK = 100;

struct LogitLensOptions {
  std::size_t top_k = kDefaultLensTopK;  // [topK] 1 … min(vocab, kMaxLensTopK)
  std::optional<std::int32_t> token;     // [token] an id < vocab whose probability and rank to
                                         // report at every row and position; unset: none
};

// rows = layers + 1: row l < layers reads the residual entering block l (resid_pre; row 0 the
// embeddings), row `layers` the residual after the last block, whose probabilities are the
// forward's own. Every array is row-major over [rows, n, …].
struct LogitLens {
  std::size_t rows = 0, n = 0, top_k = 0;
  // [rows, n, top_k]: the top_k most likely ids of softmax(unembed(final_norm(residual))) at each
  // row and position, most likely first (ties by the lower id), and their probabilities.
  std::vector<std::int32_t> ids;
  std::vector<float> probs;
  std::optional<std::int32_t> token;  // options.token
  std::vector<float> token_probs;     // [rows, n]: its probability (empty without a token)
  // [rows, n]: its rank, 0 = the most likely (ties as ids above: a lower id with an equal logit
  // ranks first)
  std::vector<std::int32_t> token_ranks;
};

// Runs the model on one sequence ids [n] (the heads ablated now are ablated) and reads every
// row of its residual stream through the final norm — applied with that row's own statistics,
// as the forward applies it to the last residual — the unembedding and the final logit soft-cap
// where the model has one: the logits model.forward would give if the blocks after that row
// were skipped. Probabilities are a float64 softmax (top_next_tokens'), so the last row's equal
// the forward's. Throws attn::Error for empty ids, an id out of range (naming it and the
// vocabulary), top_k out of range or a token not in the vocabulary.
LogitLens logit_lens(Model& model, std::span<const std::int32_t> ids,
                     const LogitLensOptions& options = {});

}  // namespace attn
