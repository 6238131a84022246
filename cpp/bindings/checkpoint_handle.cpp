// CheckpointHandle's bindings: a checkpoint's bytes (any family), chunk by chunk, into a
// ModelHandle.
#if ATTN_BINDINGS_FULL_API
#include "bindings/checkpoint_handle.hpp"

#include <span>

#include "attention/io/safetensors.hpp"
#include "attention/model/checkpoint_config.hpp"

namespace attn::bindings {

double CheckpointHandle::headBytes(val first, double file_size) const {
  return double(attn::safetensors::head_bytes_needed(vector_or_empty<std::uint8_t>(first),
                                                     std::uint64_t(file_size)));
}

val CheckpointHandle::begin(val heads, val file_sizes, const std::string& config_json) {
  return guarded([&] {
    const attn::CheckpointConfig config = attn::checkpoint_config(attn::ConfigJson(config_json));
    const std::size_t files = heads["length"].as<std::size_t>();
    std::vector<std::vector<std::uint8_t>> bytes;
    std::vector<std::span<const std::uint8_t>> spans;
    std::vector<std::uint64_t> sizes;
    for (std::size_t f = 0; f < files; ++f) {
      bytes.push_back(vector_or_empty<std::uint8_t>(heads[f]));
      sizes.push_back(std::uint64_t(file_sizes[f].as<double>()));
    }
    for (const auto& head : bytes) spans.emplace_back(head);
    import_ = std::make_unique<attn::CheckpointImport>(spans, sizes, config);
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
    val eos = val::array();
    for (const std::int32_t id : eos_) {
      if (std::size_t(id) < vocab) eos.call<void>("push", id);
    }
    out.set("eos", eos);
    return out;
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
