// CheckpointHandle's bindings: a checkpoint's bytes (any family), chunk by chunk, into a
// ModelHandle.
#if ATTN_BINDINGS_FULL_API
#include "bindings/checkpoint_handle.hpp"

#include <span>

#include "attention/error.hpp"
#include "attention/model/checkpoint_config.hpp"
#include "attention/text/gguf_tokenizer.hpp"

namespace attn::bindings {

namespace {

val ranges_of(const attn::CheckpointFiles& files) {
  val out = val::array();
  for (const attn::ByteRange& range : files.needed()) {
    val entry = val::object();
    entry.set("file", range.file);
    entry.set("begin", double(range.begin));
    entry.set("end", double(range.end));
    out.call<void>("push", entry);
  }
  return out;
}

}  // namespace

val CheckpointHandle::open(val file_sizes) {
  return guarded([&] {
    std::vector<std::uint64_t> sizes;
    const std::size_t files = file_sizes["length"].as<std::size_t>();
    for (std::size_t f = 0; f < files; ++f)
      sizes.push_back(std::uint64_t(file_sizes[f].as<double>()));
    files_ = std::make_unique<attn::CheckpointFiles>(std::move(sizes));
    return ranges_of(*files_);
  });
}

val CheckpointHandle::provide(val bytes) {
  return guarded([&] {
    if (!files_) throw attn::Error("provide() needs open() first");
    std::vector<std::vector<std::uint8_t>> copies;
    std::vector<std::span<const std::uint8_t>> spans;
    const std::size_t count = bytes["length"].as<std::size_t>();
    for (std::size_t i = 0; i < count; ++i)
      copies.push_back(vector_or_empty<std::uint8_t>(bytes[i]));
    for (const auto& copy : copies) spans.emplace_back(copy);
    files_->provide(spans);
    return ranges_of(*files_);
  });
}

val CheckpointHandle::begin(val config_json) {
  return guarded([&] {
    if (!files_ || !files_->ready()) throw attn::Error("begin() needs every file described first");
    const std::optional<std::string> text =
        config_json.isString() ? std::optional(config_json.as<std::string>()) : std::nullopt;
    const attn::CheckpointConfig config = attn::checkpoint_config_for(files_->files(), text);
    import_ = std::make_unique<attn::CheckpointImport>(files_->files(), config);
    if (const auto& gguf = files_->files().front().gguf) {
      gguf_tokenizer_ = attn::gguf_tokenizer(gguf->metadata);
    }
    files_.reset();
    family_ = config.family;
    eos_ = config.eos_ids;
    val reads = val::array();
    for (std::size_t i = 0; i < import_->reads().size(); ++i) {
      const attn::CheckpointRead& where = import_->reads()[i];
      val entry = val::object();
      entry.set("file", where.file);
      entry.set("name", where.name);
      entry.set("begin", double(where.begin));
      entry.set("end", double(where.end));
      entry.set("whole", import_->needs_whole(i));
      entry.set("format", where.format);
      reads.call<void>("push", entry);
    }
    return reads;
  });
}

val CheckpointHandle::tokenizerNeed() const {
  return guarded([&] {
    const std::size_t vocab = import_->model_config().vocab;
    const attn::DefaultTokenizer fallback = attn::default_tokenizer(*family_, vocab);
    val out = val::object();
    out.set("vocab", vocab);
    out.set("family", std::string(family_->family));
    out.set("gpt2", fallback.gpt2);
    out.set("missing", fallback.missing);
    if (gguf_tokenizer_) {  // a GGUF file's own, from its metadata
      out.set("gpt2", false);
      if (gguf_tokenizer_->json) out.set("json", *gguf_tokenizer_->json);
      out.set("missing", gguf_tokenizer_->missing);
    }
    val eos = val::array();
    for (const std::int32_t id : eos_) {
      if (std::size_t(id) < vocab) eos.call<void>("push", id);
    }
    out.set("eos", eos);
    return out;
  });
}

val CheckpointHandle::memoryBytes() const {
  return guarded([&] {
    if (!import_) throw attn::Error("memoryBytes() needs begin() first");
    return val(double(import_->parameter_bytes()));
  });
}

val CheckpointHandle::buffer(std::size_t size) {
  return guarded([&] {
    buffer_.resize(size);
    return view_of(buffer_.data(), size);
  });
}

val CheckpointHandle::read(std::size_t index, std::size_t size, double offset) {
  return guarded([&] {
    import_->read(index, std::span<const std::uint8_t>(buffer_.data(), size),
                  std::uint64_t(offset));
    return val::undefined();
  });
}

val CheckpointHandle::finish(ModelHandle& model) {
  return guarded([&] {
    std::vector<std::uint8_t>().swap(buffer_);
    model.adopt(import_->finish());
    import_.reset();
    return val::undefined();
  });
}

}  // namespace attn::bindings
#endif  // ATTN_BINDINGS_FULL_API
