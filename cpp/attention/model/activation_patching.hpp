// Activation patching (denoising, with TransformerLens's hook points hook_z, resid_pre, attn_out
// and mlp_out): how much of the clean run's logit difference each site restores when its
// activation is copied from the clean run into the corrupted one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "attention/model/model.hpp"

namespace attn {

// Where activations are patched: each head's z at every position; the residual stream entering
// each block at each position; each block's attention output and MLP output at every position.
enum class PatchSites { Heads, Residual, Layers };

// "heads", "residual" or "layers"; anything else throws attn::Error listing them.
PatchSites patch_sites_by_name(const std::string& name);

// The metric m = logit[a] − logit[b] at the last position of the clean and the corrupted run, and
// per site (patched − corrupted) / (clean − corrupted), the patched run being the corrupted run
// with that site's activation taken from the clean run.
struct ActivationPatching {
  double clean = 0.0, corrupted = 0.0;
  // Heads: [layers, heads], layer × heads + head. Residual: [layers, n], layer × n + position.
  // Layers: empty (see attention and mlp).
  std::vector<float> effect;
  std::vector<float> attention, mlp;  // Layers: [layers] each; else empty
};

// The most multiply-adds one patching call may spend on its reruns (the blocks' weights times the
// rows rerun through them, summed): about a minute of one thread of this machine. A call over
// more is refused before any run, with what it would take.
inline constexpr double kMaxPatchingMultiplyAdds = 2.0e12;

// Patches every site of `sites` one at a time (the heads ablated now are ablated in every run).
// Each rerun starts at the patched block and computes only the rows from the first position
// whose activation differs between the two runs (the earlier rows' keys and values are the
// corrupted run's); the reruns of one block run together, as one batch of sequences.
// Throws attn::Error for ids of different lengths (naming both), empty ids, an id or an answer
// outside the vocabulary, answers giving both runs the same metric (nothing to restore), or a
// call whose reruns exceed max_multiply_adds.
ActivationPatching activation_patching(Model& model, std::span<const std::int32_t> clean,
                                       std::span<const std::int32_t> corrupted, std::int32_t a,
                                       std::int32_t b, PatchSites sites,
                                       double max_multiply_adds = kMaxPatchingMultiplyAdds);

// The metric of one run: the corrupted run with the residual stream entering block `layer` taken
// from the clean run at each of `positions` (several sites at once; none: the corrupted run, all:
// the clean run from that block on). What activation_patching's residual sites compute, one
// position each.
double residual_patched_metric(Model& model, std::span<const std::int32_t> clean,
                               std::span<const std::int32_t> corrupted, std::int32_t a,
                               std::int32_t b, std::size_t layer,
                               std::span<const std::size_t> positions);

}  // namespace attn
