// Checkpoint families as descriptions (family.hpp): GPT-2's names, shapes and layouts, matched
// both ways, and the names it ignores or does not know.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "attention/model/family.hpp"

TEST_CASE("GPT-2's description maps every stored name to our parameter, with layer and layout",
          "[family]") {
  const attn::FamilyDescription& gpt2 = attn::gpt2_family();
  CHECK(gpt2.family == "gpt2");
  CHECK(gpt2.model_type == "gpt2");
  const auto qkv = attn::match_tensor(gpt2, "h.11.attn.c_attn.weight");
  REQUIRE(qkv);
  CHECK(qkv->ours == "layers.11.attn.in_proj_weight");
  CHECK(qkv->layer == 11u);
  CHECK(qkv->tensor->layout == attn::StoredLayout::Transposed);
  CHECK(attn::shape_of(qkv->tensor->shape, {768, 50257, 1024}) ==
        std::vector<std::size_t>{768, 2304});
  const auto wte = attn::match_tensor(gpt2, "wte.weight");
  REQUIRE(wte);
  CHECK(wte->ours == "embed.weight");
  CHECK_FALSE(wte->layer);
  CHECK(attn::shape_of(wte->tensor->shape, {768, 50257, 1024}) ==
        std::vector<std::size_t>{50257, 768});
  const auto head = attn::match_tensor(gpt2, "lm_head.weight");
  REQUIRE(head);
  CHECK(head->tensor->layout == attn::StoredLayout::TiedCopy);
  CHECK(head->ours == "embed.weight");
  CHECK(attn::match_tensor(gpt2, "h.0.mlp.c_proj.bias")->ours == "layers.0.mlp.proj.bias");
  CHECK(attn::match_tensor(gpt2, "ln_f.bias")->ours == "ln_f.bias");
  // Not GPT-2's: no layer digits, junk after them, an unknown part, another family's.
  for (const char* name : {"h..attn.c_attn.weight", "h.x.ln_1.weight", "h.1a.ln_1.weight",
                           "h.0.attn.c_attn.weights", "model.embed_tokens.weight", "wte"}) {
    INFO(name);
    CHECK_FALSE(attn::match_tensor(gpt2, name));
  }
  CHECK(attn::is_ignored(gpt2, "h.3.attn.masked_bias"));
  CHECK(attn::is_ignored(gpt2, "h.0.attn.bias"));
  CHECK_FALSE(attn::is_ignored(gpt2, "h.0.attn.c_attn.bias"));
  CHECK(attn::layer_of(gpt2, "h.7.anything.at.all") == 7u);
  CHECK_FALSE(attn::layer_of(gpt2, "wpe.weight"));
  CHECK_FALSE(attn::layer_of(gpt2, "h.7"));
}

TEST_CASE("GPT-2's description names the stored tensor for each parameter", "[family]") {
  const attn::FamilyDescription& gpt2 = attn::gpt2_family();
  CHECK(attn::stored_name(gpt2, "embed.weight") == "wte.weight");
  CHECK(attn::stored_name(gpt2, "pos.weight") == "wpe.weight");
  CHECK(attn::stored_name(gpt2, "layers.5.attn.out_proj.weight") == "h.5.attn.c_proj.weight");
  CHECK(attn::stored_name(gpt2, "layers.0.ln2.bias") == "h.0.ln_2.bias");
  CHECK(attn::stored_name(gpt2, "unembed.weight") == "unembed.weight");  // not GPT-2's: as is
  // Round trip: every tensor but the tied copy names itself back.
  for (const attn::FamilyTensor& tensor : gpt2.tensors) {
    if (tensor.layout == attn::StoredLayout::TiedCopy) continue;
    std::string ours(tensor.ours), stored(tensor.stored);
    if (const auto at = ours.find("{i}"); at != std::string::npos) ours.replace(at, 3, "2");
    if (const auto at = stored.find("{i}"); at != std::string::npos) stored.replace(at, 3, "2");
    CHECK(attn::stored_name(gpt2, ours) == stored);
    CHECK(attn::match_tensor(gpt2, stored)->ours == ours);
  }
}
