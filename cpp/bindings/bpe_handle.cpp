// BpeHandle's bindings: vocabulary and merges in, token ids, bytes and texts out.
#if ATTN_BINDINGS_TRAINING
#include "bindings/bpe_handle.hpp"

#include <string_view>
#include <utility>

namespace attn::bindings {

val BpeHandle::configure(const std::string& vocab, const std::string& merges,
                         std::size_t model_vocab) {
  return guarded([&] {
    auto tokenizer = std::make_unique<attn::BpeTokenizer>(vocab, merges);
    tokenizer->check_fits(model_vocab);
    tokenizer_ = std::move(tokenizer);
    return val(double(tokenizer_->vocab_size()));
  });
}

val BpeHandle::encode(val bytes) {
  return guarded([&] {
    const auto input = vector_or_empty<std::uint8_t>(bytes);
    ids_ = tokenizer_->encode(
        std::string_view(reinterpret_cast<const char*>(input.data()), input.size()));
    val tokens = val::array();
    for (const std::int32_t id : ids_) {
      const std::string& token = tokenizer_->token_bytes(id);
      tokens.call<void>("push",
                        val(emscripten::typed_memory_view(
                                token.size(), reinterpret_cast<const std::uint8_t*>(token.data())))
                            .call<val>("slice"));
    }
    val out = val::object();
    out.set("ids", view_of(ids_.data(), ids_.size()));
    out.set("tokens", tokens);
    return out;
  });
}

val BpeHandle::tokenTexts(val ids) const {
  return guarded([&] {
    val texts = val::array();
    for (const std::int32_t id : vector_or_empty<std::int32_t>(ids)) {
      texts.call<void>("push", tokenizer_->token_text(id));
    }
    return texts;
  });
}

}  // namespace attn::bindings
#endif  // ATTN_BINDINGS_TRAINING
