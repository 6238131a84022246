// A bounded reader of the ZIP archives torch.save writes (torch >= 1.6): stored entries only,
// ZIP64 included, read in steps so no step needs the whole file.
//
// Layout: [local header + data]... central directory, (ZIP64 end record, ZIP64 locator), end of
// central directory record (+ comment). The steps, each from bytes the caller read by range:
//   1. tail_bytes_needed(file_size) bytes from the file's end → locate_directory → where the
//      central directory is;
//   2. those directory bytes → parse_directory → the entries, each with its span
//      [its local header, the next local header or the directory);
//   3. an entry's span (its first bytes suffice) → data_start → where its data begins in the span
//      (the local header is checked against the directory first).
// Every offset, size and count is checked against the file size before use; a directory that lies
// (an offset past the file, entries that overlap, a local header disagreeing with it) or a
// compressed or encrypted entry throws attn::Error naming the entry and the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attn::zip {

struct Limits {
  std::size_t max_entries = std::size_t{1} << 17;
  std::uint64_t max_directory_bytes = std::uint64_t{32} << 20;
  std::size_t max_name_bytes = 1024;
};

// Where the central directory is (absolute file offsets), as the end records say.
struct DirectoryLocation {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t entries = 0;
  bool zip64 = false;  // the ZIP64 end record gave the numbers
};

// One file of the archive, as the central directory describes it.
struct Entry {
  std::string name;
  std::uint16_t flags = 0;   // general purpose bits (bit 3: sizes in a data descriptor after it)
  std::uint16_t method = 0;  // always 0 (stored): anything else is refused
  std::uint32_t crc32 = 0;
  std::uint64_t size = 0;                 // bytes of data (stored: compressed = uncompressed)
  std::uint64_t local_header_offset = 0;  // absolute
  std::uint64_t span_end = 0;  // absolute: the next entry's local header, or the directory

  // The bytes to read for this entry: [local_header_offset, span_end).
  std::uint64_t span_size() const { return span_end - local_header_offset; }
};

// The directory's entries in directory order; their spans are disjoint and lie before it.
struct Directory {
  std::vector<Entry> entries;
  DirectoryLocation location;
  std::uint64_t file_size = 0;

  // The entry named `name`, nullptr if none.
  const Entry* find(const std::string& name) const;
};

// How many of a file's last bytes locate_directory needs: the end record with the longest
// comment, the ZIP64 locator and end record; the whole file when it is shorter.
std::uint64_t tail_bytes_needed(std::uint64_t file_size);

// `tail`: the file's last tail.size() bytes (tail_bytes_needed, or fewer when the caller knows the
// archive has no comment). Throws when no end record is found, the file is multi-disk, or the
// directory it names does not fit before the end records.
DirectoryLocation locate_directory(std::span<const std::uint8_t> tail, std::uint64_t file_size,
                                   const Limits& limits = {});

// `bytes`: the central directory, exactly location.size bytes read at location.offset.
Directory parse_directory(std::span<const std::uint8_t> bytes, const DirectoryLocation& location,
                          std::uint64_t file_size, const Limits& limits = {});

// The local header's size (30 + name + extra bytes) from its first 30 bytes.
std::size_t local_header_size(std::span<const std::uint8_t> first);
// Where `entry`'s data begins, counted from the start of its span. `span_head`: the span's first
// bytes, at least its local header (local_header_size; torch's are under 200 bytes, so e.g. the
// first 4 KB or the whole span when shorter). Checks the local header against the directory: the
// signature, the name, the method, the sizes it states, and that the data ends within the span.
std::uint64_t data_start(const Entry& entry, std::span<const std::uint8_t> span_head);

// ---- the whole file at once (tests, the fuzz target) ----------------------------------------

// The directory of a whole archive in memory (steps 1 and 2).
Directory read_directory(std::span<const std::uint8_t> file, const Limits& limits = {});
// An entry's data within the whole file (step 3); a view into `file`.
std::span<const std::uint8_t> entry_data(std::span<const std::uint8_t> file, const Entry& entry);

}  // namespace attn::zip
