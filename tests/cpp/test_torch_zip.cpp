// The zip layer (attn::zip) on torch.save's archives (tests/data/torch/): end records found from
// the tail alone (with a comment, from a short tail, with ZIP64), spans that tile the file up to
// the directory, local headers that need their bytes, and every truncation refused.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/io/zip.hpp"
#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;
namespace zip = attn::zip;

namespace {

const std::string kValidDir = std::string(ATTN_TEST_DATA_DIR) + "/torch/";

std::vector<std::string> names(const zip::Directory& directory) {
  std::vector<std::string> out;
  for (const zip::Entry& entry : directory.entries) out.push_back(entry.name);
  return out;
}

}  // namespace

TEST_CASE("the directory of torch.save's zip: its entries and their spans", "[zip]") {
  const auto bytes = read_file(kValidDir + "f32.bin");
  const zip::Directory directory = zip::read_directory(bytes);
  REQUIRE(!directory.entries.empty());
  CHECK(directory.entries.front().name == "f32/data.pkl");
  CHECK(directory.find("f32/version") != nullptr);
  CHECK(directory.find("f32/data/0") != nullptr);
  CHECK(directory.find("f32/nothing") == nullptr);
  // torch writes the ZIP64 end record always; its numbers fit in 32 bits here.
  CHECK(directory.location.zip64);
  // The spans tile the file from byte 0 to the directory.
  std::vector<const zip::Entry*> order;
  for (const zip::Entry& entry : directory.entries) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](const zip::Entry* a, const zip::Entry* b) {
    return a->local_header_offset < b->local_header_offset;
  });
  CHECK(order.front()->local_header_offset == 0);
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    CHECK(order[i]->span_end == order[i + 1]->local_header_offset);
  }
  CHECK(order.back()->span_end == directory.location.offset);
  for (const zip::Entry& entry : directory.entries) {
    INFO(entry.name);
    CHECK(entry.method == 0);
    const auto data = zip::entry_data(bytes, entry);
    CHECK(data.size() == entry.size);
    // torch aligns every entry's data to 64 bytes.
    CHECK((data.data() - bytes.data()) % 64 == 0);
  }
  const auto version = zip::entry_data(bytes, *directory.find("f32/version"));
  CHECK(std::string(version.begin(), version.end()) == "3\n");
}

TEST_CASE("the ZIP64 copy has the same entries, read from ZIP64 fields", "[zip]") {
  const zip::Directory plain = zip::read_directory(read_file(kValidDir + "f32.bin"));
  const auto bytes = read_file(kValidDir + "f32-zip64.bin");
  const zip::Directory wide = zip::read_directory(bytes);
  CHECK(names(wide) == names(plain));
  for (std::size_t i = 0; i < wide.entries.size(); ++i) {
    CHECK(wide.entries[i].size == plain.entries[i].size);
    CHECK(wide.entries[i].crc32 == plain.entries[i].crc32);
    const auto data = zip::entry_data(bytes, wide.entries[i]);
    CHECK(data.size() == wide.entries[i].size);
  }
}

TEST_CASE("the end record is found from the tail: a comment, a short tail", "[zip]") {
  auto bytes = read_file(kValidDir + "f32.bin");
  const zip::Directory expected = zip::read_directory(bytes);
  // A comment after the end record (its length in the record's last two bytes).
  const std::string comment = "saved by a test, PK\x05\x06 inside the comment";
  auto commented = bytes;
  commented[commented.size() - 2] = std::uint8_t(comment.size());
  commented.insert(commented.end(), comment.begin(), comment.end());
  const zip::Directory with_comment = zip::read_directory(commented);
  CHECK(names(with_comment) == names(expected));
  CHECK(with_comment.location.offset == expected.location.offset);
  // A tail holding just the end records (22 + 20 + 56 bytes) suffices.
  const std::size_t records = 22 + 20 + 56;
  const auto short_tail = std::span(bytes).last(records);
  const zip::DirectoryLocation location = zip::locate_directory(short_tail, bytes.size());
  CHECK(location.offset == expected.location.offset);
  CHECK(location.size == expected.location.size);
  // One byte fewer and the ZIP64 end record is out of reach: said so.
  CHECK_THROWS_WITH(zip::locate_directory(std::span(bytes).last(records - 1), bytes.size()),
                    ContainsSubstring("is not in the file's last 97 bytes that were read"));
  CHECK(zip::tail_bytes_needed(10) == 10);
  CHECK(zip::tail_bytes_needed(std::uint64_t{1} << 40) == 22 + 65535 + 20 + 56);
}

TEST_CASE("a local header needs its bytes, and is checked against the directory", "[zip]") {
  const auto bytes = read_file(kValidDir + "f32.bin");
  const zip::Directory directory = zip::read_directory(bytes);
  const zip::Entry& entry = *directory.find("f32/data/0");
  const auto span = std::span(bytes).subspan(entry.local_header_offset, entry.span_size());
  const std::size_t header = zip::local_header_size(span.first(30));
  CHECK(header >= 30 + entry.name.size());
  CHECK(zip::data_start(entry, span.first(header)) == header);
  CHECK_THROWS_WITH(zip::data_start(entry, span.first(header - 1)),
                    ContainsSubstring("its local header is " + std::to_string(header) +
                                      " bytes, only " + std::to_string(header - 1)));
  CHECK_THROWS_WITH(zip::data_start(entry, span.first(29)),
                    ContainsSubstring("needs the first 30 bytes of its span, 29 were given"));
  // Another entry's header in this entry's place.
  const zip::Entry& other = *directory.find("f32/data/1");
  const auto other_span = std::span(bytes).subspan(other.local_header_offset, other.span_size());
  CHECK_THROWS_WITH(zip::data_start(entry, other_span),
                    ContainsSubstring("is named 'f32/data/1' in its local header"));
}

TEST_CASE("every truncation of a torch.save file is refused", "[zip]") {
  const auto bytes = read_file(kValidDir + "f32.bin");
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    INFO("first " << cut << " bytes");
    CHECK_THROWS_AS(zip::read_directory(std::span(bytes).first(cut)), attn::Error);
  }
}
