// A bounded ZIP reader for torch.save's archives: end records from the tail, the central directory
// from its bytes, each entry's local header from the first bytes of its span.
#include "attention/io/zip.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>

#include "attention/error.hpp"
#include "attention/message_text.hpp"

namespace attn::zip {

namespace {

constexpr std::uint32_t kEndSignature = 0x06054b50;       // end of central directory record
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;  // ZIP64 end of central directory
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kDirectorySignature = 0x02014b50;  // central directory file header
constexpr std::uint32_t kLocalSignature = 0x04034b50;      // local file header
constexpr std::size_t kEndBytes = 22;
constexpr std::size_t kMaxCommentBytes = 0xFFFF;
constexpr std::size_t kZip64LocatorBytes = 20;
constexpr std::size_t kZip64EndBytes = 56;
constexpr std::size_t kDirectoryHeaderBytes = 46;
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::uint16_t kZip64ExtraId = 0x0001;
constexpr std::uint32_t kMax32 = 0xFFFFFFFF;
constexpr std::uint16_t kMax16 = 0xFFFF;
constexpr std::uint16_t kFlagEncrypted = 1u << 0;
constexpr std::uint16_t kFlagDataDescriptor = 1u << 3;
constexpr std::uint16_t kFlagStrongEncryption = 1u << 6;

[[noreturn]] void fail(const std::string& what) {
  throw Error("zip archive: " + what);
}

std::string entry_label(std::string_view name) {
  return "entry " + quoted_text(name);
}

std::uint16_t u16(std::span<const std::uint8_t> bytes, std::size_t at) {
  return static_cast<std::uint16_t>(bytes[at] | (bytes[at + 1] << 8));
}

std::uint32_t u32(std::span<const std::uint8_t> bytes, std::size_t at) {
  return std::uint32_t{bytes[at]} | (std::uint32_t{bytes[at + 1]} << 8) |
         (std::uint32_t{bytes[at + 2]} << 16) | (std::uint32_t{bytes[at + 3]} << 24);
}

std::uint64_t u64(std::span<const std::uint8_t> bytes, std::size_t at) {
  return std::uint64_t{u32(bytes, at)} | (std::uint64_t{u32(bytes, at + 4)} << 32);
}

const char* method_name(std::uint16_t method) {
  switch (method) {
    case 0:
      return "stored";
    case 8:
      return "deflate";
    case 9:
      return "deflate64";
    case 12:
      return "bzip2";
    case 14:
      return "lzma";
    case 93:
      return "zstd";
    case 95:
      return "xz";
    default:
      return "unknown";
  }
}

// The ZIP64 extended information extra field (id 1) of an extra block: its values in order for
// the fields the header set to their maximum (uncompressed size, compressed size, local header
// offset), or nothing when the block has no such field. Throws when the block is malformed.
std::optional<std::span<const std::uint8_t>> zip64_extra(std::span<const std::uint8_t> extra,
                                                         const std::string& label) {
  std::size_t at = 0;
  while (at + 4 <= extra.size()) {
    const std::uint16_t id = u16(extra, at);
    const std::uint16_t size = u16(extra, at + 2);
    if (at + 4 + size > extra.size()) {
      fail(label + " has an extra field (id " + std::to_string(id) + ") of " +
           count_text(size, "byte") + " running past its extra block");
    }
    if (id == kZip64ExtraId) return extra.subspan(at + 4, size);
    at += 4 + size;
  }
  return std::nullopt;
}

// Reads the next 8-byte value of a ZIP64 extra field for a header field that says kMax32.
std::uint64_t zip64_value(std::span<const std::uint8_t> field, std::size_t& at,
                          const std::string& label, const char* what) {
  if (at + 8 > field.size()) {
    fail(label + " sets its " + what + " to 0xFFFFFFFF but its ZIP64 extra field has no value " +
         "for it");
  }
  const std::uint64_t value = u64(field, at);
  at += 8;
  return value;
}

struct EndRecord {
  std::uint16_t disk = 0, directory_disk = 0, disk_entries = 0, entries = 0;
  std::uint32_t directory_size = 0, directory_offset = 0;
};

EndRecord read_end_record(std::span<const std::uint8_t> tail, std::size_t at) {
  EndRecord end;
  end.disk = u16(tail, at + 4);
  end.directory_disk = u16(tail, at + 6);
  end.disk_entries = u16(tail, at + 8);
  end.entries = u16(tail, at + 10);
  end.directory_size = u32(tail, at + 12);
  end.directory_offset = u32(tail, at + 16);
  return end;
}

// The end record's position in the tail: the last signature whose comment ends the file.
std::optional<std::size_t> find_end_record(std::span<const std::uint8_t> tail) {
  if (tail.size() < kEndBytes) return std::nullopt;
  const std::size_t last = tail.size() - kEndBytes;
  const std::size_t first = last > kMaxCommentBytes ? last - kMaxCommentBytes : 0;
  for (std::size_t at = last + 1; at-- > first;) {
    if (u32(tail, at) == kEndSignature && u16(tail, at + 20) == tail.size() - at - kEndBytes) {
      return at;
    }
  }
  return std::nullopt;
}

// The ZIP64 end record the locator before the end record points to, into `location`; returns
// its absolute offset (where the end records begin).
std::uint64_t read_zip64_end(std::span<const std::uint8_t> tail, std::uint64_t tail_start,
                             std::size_t locator_at, DirectoryLocation& location) {
  const std::uint32_t record_disk = u32(tail, locator_at + 4);
  const std::uint64_t record_offset = u64(tail, locator_at + 8);
  const std::uint32_t disks = u32(tail, locator_at + 16);
  if (record_disk != 0 || disks > 1) {
    fail("the archive spans " + count_text(disks, "disk") + " (a multi-disk zip is not read)");
  }
  const std::uint64_t locator_offset = tail_start + locator_at;
  if (record_offset > locator_offset || locator_offset - record_offset < kZip64EndBytes) {
    fail("the ZIP64 locator puts the ZIP64 end record at byte " + std::to_string(record_offset) +
         ", which does not fit before the locator at byte " + std::to_string(locator_offset));
  }
  if (record_offset < tail_start) {
    fail("the ZIP64 end record at byte " + std::to_string(record_offset) +
         " is not in the file's last " + count_text(tail.size(), "byte") + " that were read");
  }
  const std::size_t at = static_cast<std::size_t>(record_offset - tail_start);
  if (u32(tail, at) != kZip64EndSignature) {
    fail("the ZIP64 locator points to byte " + std::to_string(record_offset) +
         ", which holds no ZIP64 end record");
  }
  const std::uint64_t record_size = u64(tail, at + 4);  // after this field
  if (record_size < kZip64EndBytes - 12 || record_size > locator_offset - record_offset - 12) {
    fail("the ZIP64 end record says it is " + count_text(record_size, "byte") +
         " long, which does not fit before its locator");
  }
  const std::uint32_t disk = u32(tail, at + 16);
  const std::uint32_t directory_disk = u32(tail, at + 20);
  const std::uint64_t disk_entries = u64(tail, at + 24);
  location.entries = u64(tail, at + 32);
  location.size = u64(tail, at + 40);
  location.offset = u64(tail, at + 48);
  location.zip64 = true;
  if (disk != 0 || directory_disk != 0 || disk_entries != location.entries) {
    fail("the ZIP64 end record describes a multi-disk archive, which is not read");
  }
  return record_offset;
}

// A value of the 32-bit end record must be its ZIP64 twin's, unless it is the "see ZIP64" mark.
void check_agrees(std::uint64_t narrow, std::uint64_t mark, std::uint64_t wide, const char* what) {
  if (narrow != mark && narrow != wide) {
    fail(std::string("the end record and the ZIP64 end record disagree on the ") + what + " (" +
         std::to_string(narrow) + " and " + std::to_string(wide) + ")");
  }
}

std::size_t checked_index(std::uint64_t value) {
  return static_cast<std::size_t>(value);  // callers checked value against a size_t bound
}

}  // namespace

const Entry* Directory::find(const std::string& name) const {
  for (const Entry& entry : entries) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::uint64_t tail_bytes_needed(std::uint64_t file_size) {
  return std::min<std::uint64_t>(
      file_size, kEndBytes + kMaxCommentBytes + kZip64LocatorBytes + kZip64EndBytes);
}

DirectoryLocation locate_directory(std::span<const std::uint8_t> tail, std::uint64_t file_size,
                                   const Limits& limits) {
  if (tail.size() > file_size) {
    fail(count_text(tail.size(), "byte") + " were given as the tail of a file of " +
         count_text(file_size, "byte"));
  }
  if (file_size < kEndBytes) {
    fail("the file is " + count_text(file_size, "byte") +
         " long, too short for a zip archive (its end record alone is 22 bytes)");
  }
  const std::optional<std::size_t> end_at = find_end_record(tail);
  if (!end_at) {
    fail("no end of central directory record in the file's last " +
         count_text(tail.size(), "byte") + ": the file is truncated or not a zip archive");
  }
  const std::uint64_t tail_start = file_size - tail.size();
  const EndRecord end = read_end_record(tail, *end_at);
  DirectoryLocation location{end.directory_offset, end.directory_size, end.entries, false};
  std::uint64_t records_start = tail_start + *end_at;  // the directory must end before this
  const bool has_locator = *end_at >= kZip64LocatorBytes &&
                           u32(tail, *end_at - kZip64LocatorBytes) == kZip64LocatorSignature;
  if (has_locator) {
    records_start = read_zip64_end(tail, tail_start, *end_at - kZip64LocatorBytes, location);
    check_agrees(end.entries, kMax16, location.entries, "number of entries");
    check_agrees(end.directory_size, kMax32, location.size, "central directory's size");
    check_agrees(end.directory_offset, kMax32, location.offset, "central directory's offset");
  } else {
    if (end.disk != 0 || end.directory_disk != 0 || end.disk_entries != end.entries) {
      fail("the end record describes a multi-disk archive, which is not read");
    }
    if (end.entries == kMax16 || end.directory_size == kMax32 || end.directory_offset == kMax32) {
      fail("the end record defers to a ZIP64 end record, but there is no ZIP64 locator before it");
    }
  }
  if (location.offset > file_size) {
    fail("the end record puts the central directory at byte " + std::to_string(location.offset) +
         ", past the end of the file (" + count_text(file_size, "byte") + ")");
  }
  if (location.offset > records_start || location.size > records_start - location.offset) {
    fail("the central directory (" + count_text(location.size, "byte") + " at byte " +
         std::to_string(location.offset) + ") runs past the end records at byte " +
         std::to_string(records_start) + ": the file is truncated or its end record lies");
  }
  if (location.size > limits.max_directory_bytes) {
    fail("the central directory is " + count_text(location.size, "byte") +
         ", more than the limit of " + count_text(limits.max_directory_bytes, "byte"));
  }
  if (location.entries > limits.max_entries) {
    fail("the archive has " + count_text(location.entries, "entry") + ", more than the limit of " +
         std::to_string(limits.max_entries));
  }
  if (location.entries * kDirectoryHeaderBytes > location.size) {
    fail("the end record says " + count_text(location.entries, "entry") +
         ", more than a central directory of " + count_text(location.size, "byte") + " can hold");
  }
  return location;
}

Directory parse_directory(std::span<const std::uint8_t> bytes, const DirectoryLocation& location,
                          std::uint64_t file_size, const Limits& limits) {
  if (bytes.size() != location.size) {
    fail("the central directory is " + count_text(location.size, "byte") + " but " +
         count_text(bytes.size(), "byte") + " were given");
  }
  if (location.entries > limits.max_entries) {
    fail("the archive has " + count_text(location.entries, "entry") + ", more than the limit of " +
         std::to_string(limits.max_entries));
  }
  Directory directory;
  directory.location = location;
  directory.file_size = file_size;
  std::set<std::string> names;
  std::size_t at = 0;
  for (std::uint64_t index = 0; index < location.entries; ++index) {
    const std::string where = "the central directory's entry " + std::to_string(index);
    if (bytes.size() - at < kDirectoryHeaderBytes) fail(where + " runs past its end");
    if (u32(bytes, at) != kDirectorySignature) {
      fail(where + " (at byte " + std::to_string(location.offset + at) +
           ") has no central directory signature");
    }
    Entry entry;
    entry.flags = u16(bytes, at + 8);
    entry.method = u16(bytes, at + 10);
    entry.crc32 = u32(bytes, at + 16);
    std::uint64_t compressed = u32(bytes, at + 20);
    entry.size = u32(bytes, at + 24);
    const std::size_t name_size = u16(bytes, at + 28);
    const std::size_t extra_size = u16(bytes, at + 30);
    const std::size_t comment_size = u16(bytes, at + 32);
    const std::uint16_t disk = u16(bytes, at + 34);
    entry.local_header_offset = u32(bytes, at + 42);
    const std::size_t variable = name_size + extra_size + comment_size;
    if (bytes.size() - at - kDirectoryHeaderBytes < variable) fail(where + " runs past its end");
    const auto name_bytes = bytes.subspan(at + kDirectoryHeaderBytes, name_size);
    entry.name.assign(name_bytes.begin(), name_bytes.end());
    if (name_size == 0) fail(where + " has an empty name");
    if (name_size > limits.max_name_bytes) {
      fail(entry_label(entry.name) + " has a name of " + count_text(name_size, "byte") +
           ", more than the limit of " + count_text(limits.max_name_bytes, "byte"));
    }
    const std::string label = entry_label(entry.name);
    const bool wide_size = entry.size == kMax32, wide_compressed = compressed == kMax32;
    const bool wide_offset = entry.local_header_offset == kMax32;
    if (wide_size || wide_compressed || wide_offset || disk == kMax16) {
      const auto field =
          zip64_extra(bytes.subspan(at + kDirectoryHeaderBytes + name_size, extra_size), label);
      if (!field) fail(label + " has 32-bit fields set to 0xFFFFFFFF but no ZIP64 extra field");
      std::size_t read = 0;
      if (wide_size) entry.size = zip64_value(*field, read, label, "size");
      if (wide_compressed) compressed = zip64_value(*field, read, label, "compressed size");
      if (wide_offset) {
        entry.local_header_offset = zip64_value(*field, read, label, "local header offset");
      }
    }
    at += kDirectoryHeaderBytes + variable;
    if (disk != 0 && disk != kMax16) fail(label + " is on disk " + std::to_string(disk));
    if (entry.flags & (kFlagEncrypted | kFlagStrongEncryption)) fail(label + " is encrypted");
    if (entry.method != 0) {
      fail(label + " is compressed (method " + std::to_string(entry.method) + ", " +
           method_name(entry.method) +
           "); a PyTorch checkpoint stores its entries uncompressed, and only those are read");
    }
    if (compressed != entry.size) {
      fail(label + " is stored but its sizes differ (" + std::to_string(compressed) +
           " bytes compressed, " + std::to_string(entry.size) + " uncompressed)");
    }
    if (entry.local_header_offset >= file_size) {
      fail(label + " says its local header is at byte " +
           std::to_string(entry.local_header_offset) + ", past the end of the file (" +
           count_text(file_size, "byte") + ")");
    }
    if (!names.insert(entry.name).second) fail("two entries are named " + quoted_text(entry.name));
    directory.entries.push_back(std::move(entry));
  }
  if (at != bytes.size()) {
    fail("the central directory has " + count_text(bytes.size() - at, "byte") +
         " after its last entry");
  }
  // Spans: each entry's local header up to the next one's, the last up to the directory. Each
  // must hold at least the header's fixed part, the name and the data.
  std::vector<std::size_t> order(directory.entries.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return directory.entries[a].local_header_offset < directory.entries[b].local_header_offset;
  });
  for (std::size_t k = 0; k < order.size(); ++k) {
    Entry& entry = directory.entries[order[k]];
    const Entry* next = k + 1 < order.size() ? &directory.entries[order[k + 1]] : nullptr;
    entry.span_end = next ? next->local_header_offset : location.offset;
    const std::uint64_t start = entry.local_header_offset;
    const std::uint64_t header = kLocalHeaderBytes + entry.name.size();
    const bool fits = entry.span_end >= start && entry.span_end - start >= header &&
                      entry.span_end - start - header >= entry.size;
    if (!fits) {
      const std::string extent = " (local header at byte " + std::to_string(start) + ", at least " +
                                 std::to_string(header) + " + " + count_text(entry.size, "byte") +
                                 ")";
      if (next) {
        fail(entry_label(entry.name) + extent + " and " + entry_label(next->name) +
             " (local header at byte " + std::to_string(next->local_header_offset) + ") overlap");
      }
      fail(entry_label(entry.name) + extent + " runs into the central directory at byte " +
           std::to_string(location.offset));
    }
  }
  return directory;
}

std::size_t local_header_size(std::span<const std::uint8_t> first) {
  if (first.size() < kLocalHeaderBytes) {
    fail("a local header is at least 30 bytes, " + std::to_string(first.size()) + " were given");
  }
  if (u32(first, 0) != kLocalSignature) fail("no local header signature where one should begin");
  return kLocalHeaderBytes + u16(first, 26) + u16(first, 28);
}

std::uint64_t data_start(const Entry& entry, std::span<const std::uint8_t> span_head) {
  const std::string label = entry_label(entry.name);
  if (span_head.size() < kLocalHeaderBytes) {
    fail(label + ": its local header needs the first 30 bytes of its span, " +
         std::to_string(span_head.size()) + " were given");
  }
  if (u32(span_head, 0) != kLocalSignature) {
    fail(label + " has no local header at byte " + std::to_string(entry.local_header_offset) +
         " (the central directory lies about its offset)");
  }
  const std::uint16_t flags = u16(span_head, 6);
  const std::uint16_t method = u16(span_head, 8);
  std::uint64_t compressed = u32(span_head, 18);
  std::uint64_t size = u32(span_head, 22);
  const std::size_t name_size = u16(span_head, 26);
  const std::size_t extra_size = u16(span_head, 28);
  const std::size_t header = kLocalHeaderBytes + name_size + extra_size;
  if (span_head.size() < header) {
    fail(label + ": its local header is " + count_text(header, "byte") + ", only " +
         std::to_string(span_head.size()) + " of its span were given");
  }
  const std::string_view local_name(reinterpret_cast<const char*>(span_head.data()) + 30,
                                    name_size);
  if (local_name != entry.name) {
    fail(label + " is named " + quoted_text(local_name) +
         " in its local header (the central directory and the local header disagree)");
  }
  if (method != entry.method) {
    fail(label + " has method " + std::to_string(method) + " in its local header but " +
         std::to_string(entry.method) + " in the central directory");
  }
  if (flags & (kFlagEncrypted | kFlagStrongEncryption)) fail(label + " is encrypted");
  if (size == kMax32 || compressed == kMax32) {
    const auto field = zip64_extra(span_head.subspan(30 + name_size, extra_size), label);
    if (field && field->size() >= 16) {
      size = u64(*field, 0);
      compressed = u64(*field, 8);
    } else if (!(flags & kFlagDataDescriptor)) {
      fail(label + "'s local header sets its sizes to 0xFFFFFFFF but has no ZIP64 extra field");
    }
  }
  // With a data descriptor (bit 3, as torch writes) the local header may leave the sizes 0.
  const bool deferred = (flags & kFlagDataDescriptor) != 0;
  for (const std::uint64_t stated : {size, compressed}) {
    if ((deferred && (stated == 0 || stated == kMax32)) || stated == entry.size) continue;
    fail(label + " is " + count_text(entry.size, "byte") +
         " in the central directory but its local header says " + std::to_string(stated) +
         " (the central directory and the local header disagree)");
  }
  if (entry.span_size() < header || entry.span_size() - header < entry.size) {
    fail(label + "'s data (" + count_text(entry.size, "byte") + " after a local header of " +
         std::to_string(header) + ") runs past its span of " +
         count_text(entry.span_size(), "byte") +
         " (up to the next entry or the central directory)");
  }
  return header;
}

Directory read_directory(std::span<const std::uint8_t> file, const Limits& limits) {
  const std::uint64_t tail_size = tail_bytes_needed(file.size());
  const DirectoryLocation location =
      locate_directory(file.last(checked_index(tail_size)), file.size(), limits);
  return parse_directory(file.subspan(checked_index(location.offset), checked_index(location.size)),
                         location, file.size(), limits);
}

std::span<const std::uint8_t> entry_data(std::span<const std::uint8_t> file, const Entry& entry) {
  if (entry.span_end > file.size() || entry.local_header_offset > entry.span_end) {
    fail(entry_label(entry.name) + "'s span runs past the " + count_text(file.size(), "byte") +
         " given");
  }
  const auto span =
      file.subspan(checked_index(entry.local_header_offset), checked_index(entry.span_size()));
  const std::uint64_t start = data_start(entry, span);
  return span.subspan(checked_index(start), checked_index(entry.size));
}

}  // namespace attn::zip
