// BpeHandle's bindings: vocabulary and merges or tokenizer.json in, token ids, bytes and texts out.
#if ATTN_BINDINGS_FULL_API
#include "bindings/bpe_handle.hpp"

#include <string_view>
#include <utility>

#include "attention/text/tokenizer_json.hpp"

namespace attn::bindings {

namespace {

// A TextDecoder that keeps a leading U+FEFF (Embind's own string conversion drops it).
val text_decoder() {
  val options = val::object();
  options.set("ignoreBOM", true);
  return val::global("TextDecoder").new_(std::string("utf-8"), options);
}

// UTF-8 text as a JS string, through `decoder` (from text_decoder). The bytes are copied out of
// wasm memory first: browsers refuse to decode a view of shared memory (the threaded build's).
val js_string(const val& decoder, const std::string& text) {
  return decoder.call<val>("decode",
                           val(emscripten::typed_memory_view(
                                   text.size(), reinterpret_cast<const std::uint8_t*>(text.data())))
                               .call<val>("slice"));
}

}  // namespace

val BpeHandle::configure(const std::string& vocab_json, const std::string& merges,
                         std::size_t model_vocab) {
  return guarded([&] {
    auto tokenizer =
        std::make_unique<attn::BpeTokenizer>(attn::vocab_json_spec(vocab_json, merges), nullptr);
    tokenizer->check_fits(model_vocab);
    tokenizer_ = std::move(tokenizer);
    return val(double(tokenizer_->vocab_size()));
  });
}

val BpeHandle::configureJson(const std::string& json, std::size_t model_vocab) {
  return guarded([&] {
    // Unicode normalization is JavaScript's own: the core has no composition tables.
    attn::UnicodeNormalize nfc = [decoder = text_decoder()](const std::string& text) {
      return js_string(decoder, text).call<val>("normalize", std::string("NFC")).as<std::string>();
    };
    auto tokenizer =
        std::make_unique<attn::BpeTokenizer>(attn::read_tokenizer_json(json, std::move(nfc)));
    tokenizer->check_fits(model_vocab);
    tokenizer_ = std::move(tokenizer);
    val out = val::object();
    out.set("tokens", double(tokenizer_->vocab_size()));
    out.set("prefix", number_array(tokenizer_->special_prefix()));
    out.set("suffix", number_array(tokenizer_->special_suffix()));
    out.set("nfc", tokenizer_->needs_nfc());
    return out;
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
    const val decoder = text_decoder();
    return array_of(vector_or_empty<std::int32_t>(ids), [&](std::int32_t id) {
      return js_string(decoder, tokenizer_->output_text(id));
    });
  });
}

}  // namespace attn::bindings
#endif  // ATTN_BINDINGS_FULL_API
