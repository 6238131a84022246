// libFuzzer target for the GGUF reader and the dequantization (cpp/attention/io/gguf,
// cpp/attention/ops/dequantize), built with -fsanitize=fuzzer,address,undefined by the `fuzz`
// preset and run by npm test (scripts/test.sh) for a bounded time from tests/data/gguf/ (the
// golden files of scripts/data/make-gguf-golden.py), with gguf.dict.
//
// Any input may be refused, but only with attn::Error: another exception escaping, a sanitizer
// report, or a broken invariant below (abort) is a finding. For every input the target
//   1. parses the whole input; if it parses, every tensor lies in the data section, aligned, within
//      the input and apart from the others, its byte size is its element count's blocks; every
//      metadata key answers each typed lookup or refuses with attn::Error; every tensor of at most
//      1 MB whose type dequantize reads is dequantized (the right count of floats);
//   2. parses it again from a prefix (the first bytes_needed bytes, from 16), following
//      bytes_needed until the header is known: it must be refused exactly when the whole input was,
//      and otherwise agree with the whole parse on every tensor and key;
//   3. when it parses, loads it as a checkpoint (model/gguf_checkpoint and the import: config from
//      the metadata, tensors by their GGUF names, dequantized, in 64 KB chunks) and reads its
//      tokenizer metadata as tokenizer.json: each may refuse, only with attn::Error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/gguf.hpp"
#include "attention/model/checkpoint_import.hpp"
#include "attention/ops/dequantize.hpp"
#include "attention/text/gguf_tokenizer.hpp"
#include "attention/text/tokenizer_json.hpp"

namespace gguf = attn::gguf;

namespace {

constexpr std::uint64_t kMaxValueBytes = 1 << 20;

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_gguf: invariant broken: %s\n", what.c_str());
  std::abort();
}

void check_apart(std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) broken("overlapping tensors accepted");
  }
}

void check_tensors(const gguf::Index& index, std::span<const std::uint8_t> bytes) {
  if (index.data_offset % index.alignment != 0 || index.data_offset < index.header_bytes) {
    broken("data section misplaced");
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const gguf::TensorInfo& tensor : index.tensors) {
    const attn::GgmlTypeInfo& info = attn::ggml_type_info(tensor.type);
    if (tensor.begin != index.data_offset + tensor.offset) broken("begin is not data + offset");
    if (tensor.offset % index.alignment != 0) broken("a misaligned tensor was accepted");
    if (tensor.end - tensor.begin != tensor.bytes || tensor.end > bytes.size()) {
      broken("tensor '" + tensor.name + "' lies outside the input");
    }
    if (tensor.element_count() / info.block_values * info.block_bytes != tensor.bytes) {
      broken("tensor '" + tensor.name + "' byte size");
    }
    if (tensor.bytes > 0) ranges.emplace_back(tensor.begin, tensor.end);
    if (tensor.bytes > kMaxValueBytes || !attn::can_dequantize(tensor.type)) continue;
    if (gguf::tensor_values(tensor, bytes).size() != tensor.element_count()) {
      broken("tensor '" + tensor.name + "' dequantized to the wrong count");
    }
  }
  check_apart(std::move(ranges));
}

void check_lookups(const gguf::Metadata& metadata) {
  for (const gguf::KeyValue& entry : metadata.entries()) {
    if (metadata.find(entry.key) != &entry.value) broken("find disagrees with the entries");
    const auto lookup = [&](auto&& call) {
      try {
        call();
      } catch (const attn::Error&) {
      }
    };
    lookup([&] { (void)metadata.string(entry.key); });
    lookup([&] { (void)metadata.integer(entry.key); });
    lookup([&] { (void)metadata.number(entry.key); });
    lookup([&] { (void)metadata.boolean(entry.key); });
    lookup([&] { (void)metadata.strings(entry.key); });
    lookup([&] { (void)metadata.integers(entry.key); });
    lookup([&] { (void)metadata.floats(entry.key); });
    (void)entry.value.type_text();
  }
}

// The header read from prefixes, as a range reader would: nothing when refused.
std::optional<gguf::Index> parse_by_prefix(std::span<const std::uint8_t> bytes) {
  std::uint64_t have = std::min<std::uint64_t>(16, bytes.size());
  for (int reads = 0; reads < 64; ++reads) {
    gguf::HeadResult result;
    try {
      result = gguf::parse_head(bytes.first(have), bytes.size());
    } catch (const attn::Error&) {
      return std::nullopt;
    }
    if (result.index) return std::move(result.index);
    if (result.bytes_needed <= have || result.bytes_needed > bytes.size()) {
      broken("bytes_needed " + std::to_string(result.bytes_needed) + " from a prefix of " +
             std::to_string(have));
    }
    have = result.bytes_needed;
  }
  broken("a header that takes more than 64 reads");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  std::optional<gguf::Index> whole;
  try {
    whole = gguf::parse(bytes);
  } catch (const attn::Error&) {
  }
  if (whole) {
    check_tensors(*whole, bytes);
    check_lookups(whole->metadata);
  }
  const std::optional<gguf::Index> streamed = parse_by_prefix(bytes);
  if (whole.has_value() != streamed.has_value()) broken("the prefix parse disagrees on refusal");
  if (whole) {
    if (streamed->data_offset != whole->data_offset ||
        streamed->tensors.size() != whole->tensors.size() ||
        streamed->metadata.entries().size() != whole->metadata.entries().size()) {
      broken("the prefix parse disagrees with the whole one");
    }
    for (std::size_t i = 0; i < whole->tensors.size(); ++i) {
      const gguf::TensorInfo& a = whole->tensors[i];
      const gguf::TensorInfo& b = streamed->tensors[i];
      if (a.name != b.name || a.type != b.type || a.dims != b.dims || a.begin != b.begin) {
        broken("tensor '" + a.name + "' differs between the prefix and whole parses");
      }
    }
    try {
      (void)attn::load_gguf_checkpoint(bytes);
    } catch (const attn::Error&) {
    }
    try {
      const attn::GgufTokenizer tokenizer = attn::gguf_tokenizer(whole->metadata);
      if (tokenizer.json) (void)attn::read_tokenizer_json(*tokenizer.json, {});
    } catch (const attn::Error&) {
    }
  }
  return 0;
}
