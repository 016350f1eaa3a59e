// The record container (layout in recorder.hpp): preamble, checksum, and the file handling around the body —
// size checks before any read, checksum before any parse, atomic saves (temporary file, fsync, rename).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <ostream>
#include <streambuf>

#include <fmt/format.h>

#include "records/atomic_file.hpp"
#include "records/record_body.hpp"
#include "records/recorder.hpp"

#ifndef EMBER_VERSION
#define EMBER_VERSION "unknown"
#endif

namespace ember {

const char* engine_version() { return EMBER_VERSION; }

const char* recorder_kind_name(RecorderKind k) {
  switch (k) {
    case RecorderKind::Binary: return "binary";
    case RecorderKind::Json: return "json";
  }
  return "unknown";
}

uint64_t record_checksum(std::span<const std::byte> bytes, uint64_t state) {
  for (std::byte b : bytes) state = (state ^ static_cast<uint8_t>(b)) * 0x100000001b3ull;
  return state;
}

namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'E', 'R', 'R', 'E', 'C'};
constexpr uint64_t kChecksumSeed = 0xcbf29ce484222325ull;

struct Preamble {
  uint32_t version = kRecordFormatVersion;
  uint32_t kind = 0;
  uint64_t body_length = 0;
  uint64_t checksum = 0;
};

std::string encode_preamble(const Preamble& p) {
  return fmt::format("EMBERREC {:08x} {:08x} {:016x} {:016x}\n", p.version, p.kind, p.body_length, p.checksum);
}

// Parses the preamble of a file of `total` bytes whose first min(total, 61) bytes are `head`, and checks the
// total size against the announced body length.
Preamble decode_preamble(std::span<const std::byte> head, uint64_t total, const std::string& file) {
  const auto* s = reinterpret_cast<const char*>(head.data());
  const std::size_t n = head.size();
  if (n > 0 && std::memcmp(s, kMagic, std::min<std::size_t>(n, 8)) != 0)
    throw RecordFormatError(file, "not an Ember record (wrong magic; expected \"EMBERREC\")");
  if (n < kRecordPreambleSize)
    throw RecordCorruptError(file, fmt::format("truncated: {} bytes, the preamble alone is {}", total,
                                               kRecordPreambleSize));
  auto field = [&](std::size_t at, std::size_t digits) {
    if (s[at - 1] != ' ') throw RecordFormatError(file, "malformed preamble");
    uint64_t v = 0;
    for (std::size_t i = at; i < at + digits; ++i) {
      const char ch = s[i];
      const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
      if (d < 0) throw RecordFormatError(file, "malformed preamble");
      v = v << 4 | static_cast<uint64_t>(d);
    }
    return v;
  };
  Preamble p;
  p.version = static_cast<uint32_t>(field(9, 8));
  p.kind = static_cast<uint32_t>(field(18, 8));
  p.body_length = field(27, 16);
  p.checksum = field(44, 16);
  if (s[60] != '\n') throw RecordFormatError(file, "malformed preamble");
  if (p.version == 0) throw RecordFormatError(file, "format version 0 is not valid");
  if (p.version > kRecordFormatVersion)
    throw RecordVersionError(file, fmt::format("format version {} is newer than this Ember ({}) reads (up to {}); "
                                               "upgrade Ember to load it",
                                               p.version, engine_version(), kRecordFormatVersion));
  if (p.kind > static_cast<uint32_t>(RecorderKind::Json))
    throw RecordFormatError(file, fmt::format("unknown recorder kind {}", p.kind));
  const uint64_t body = total - kRecordPreambleSize;
  if (p.body_length > body)
    throw RecordCorruptError(file, fmt::format("truncated: the preamble announces {} body bytes, the file holds {}",
                                               p.body_length, body));
  if (p.body_length < body)
    throw RecordCorruptError(file, fmt::format("{} unexpected bytes after the body", body - p.body_length));
  return p;
}

void check_checksum(uint64_t got, const Preamble& p, const std::string& file) {
  if (got != p.checksum)
    throw RecordCorruptError(file, fmt::format("checksum mismatch (body hashes to {:016x}, the preamble says {:016x}): "
                                               "the file is corrupt",
                                               got, p.checksum));
}

// A read-only istream buffer over memory (with the seek support cereal's bounds checks need via tellg).
class SpanBuf : public std::streambuf {
 public:
  SpanBuf(const char* data, std::size_t n) {
    char* p = const_cast<char*>(data);  // never written: no put area
    setg(p, p, p + n);
  }

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    const off_type base = dir == std::ios_base::beg ? 0 : dir == std::ios_base::cur ? gptr() - eback() : egptr() - eback();
    const off_type to = base + off;
    if (to < 0 || to > egptr() - eback()) return pos_type(off_type(-1));
    setg(eback(), eback() + to, egptr());
    return pos_type(to);
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }
};

// An output buffer that hashes and counts what passes through on its way to `sink` (a file descriptor or a
// vector), so the body is written once, straight to its destination. A failing sink is remembered, not thrown
// through the stream (iostreams would swallow it), and reported by the caller.
class HashingBuf : public std::streambuf {
 public:
  using Sink = std::function<bool(const char*, std::size_t)>;
  explicit HashingBuf(Sink sink) : sink_(std::move(sink)), buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
  uint64_t length() const { return length_; }
  uint64_t hash() const { return hash_; }
  bool failed() const { return failed_; }
  int error() const { return errno_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n >= static_cast<std::streamsize>(buf_.size())) {  // large payloads bypass the buffer
      if (!drain() || !pass(s, static_cast<std::size_t>(n))) return 0;
      return n;
    }
    return std::streambuf::xsputn(s, n);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool pass(const char* s, std::size_t n) {
    if (failed_) return false;
    hash_ = record_checksum({reinterpret_cast<const std::byte*>(s), n}, hash_);
    length_ += n;
    if (!sink_(s, n)) {
      failed_ = true;
      errno_ = errno;
    }
    return !failed_;
  }
  bool drain() {
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    setp(buf_.data(), buf_.data() + buf_.size());
    return n == 0 ? !failed_ : pass(buf_.data(), n);
  }

  Sink sink_;
  std::vector<char> buf_;
  uint64_t length_ = 0, hash_ = kChecksumSeed;
  bool failed_ = false;
  int errno_ = 0;
};

// Writes preamble placeholder + body through `sink`, returns the real preamble.
std::string write_container(const Record& rec, RecorderKind kind, StoredPrecision precision,
                            const std::string& file, const HashingBuf::Sink& sink) {
  HashingBuf buf(sink);
  std::ostream os(&buf);
  auto io_error = [&] {
    return RecordIoError(file, fmt::format("write failed: {}", std::strerror(buf.error() ? buf.error() : EIO)));
  };
  try {
    record_detail::write_body(os, rec, kind, precision, file);
  } catch (const RecordIoError&) {
    if (buf.failed()) throw io_error();
    throw;
  }
  if (buf.failed()) throw io_error();
  return encode_preamble({kRecordFormatVersion, static_cast<uint32_t>(kind), buf.length(), buf.hash()});
}

// An open file, read as: size, preamble, checksum (streamed, nothing kept), then the body from its first byte.
template <class F>
auto with_verified_file(const std::filesystem::path& path, F&& body) {
  const std::string file = path.string();
  std::error_code ec;
  const uint64_t total = std::filesystem::file_size(path, ec);
  if (ec) throw RecordIoError(file, fmt::format("cannot read: {}", ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RecordIoError(file, fmt::format("cannot open: {}", std::strerror(errno)));
  std::array<std::byte, kRecordPreambleSize> head{};
  const std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(total, kRecordPreambleSize));
  if (!in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(want)))
    throw RecordCorruptError(file, "truncated while reading the preamble");
  const Preamble p = decode_preamble({head.data(), want}, total, file);
  std::vector<char> chunk(static_cast<std::size_t>(std::min<uint64_t>(p.body_length, 1 << 20)));
  uint64_t left = p.body_length, hash = kChecksumSeed;
  while (left > 0) {
    const auto n = static_cast<std::streamsize>(std::min<uint64_t>(left, chunk.size()));
    if (!in.read(chunk.data(), n)) throw RecordCorruptError(file, "truncated while reading the body");
    hash = record_checksum({reinterpret_cast<const std::byte*>(chunk.data()), static_cast<std::size_t>(n)}, hash);
    left -= static_cast<uint64_t>(n);
  }
  check_checksum(hash, p, file);
  chunk = {};
  in.clear();
  in.seekg(static_cast<std::streamoff>(kRecordPreambleSize));
  RecordFileInfo info;
  info.file = file;
  info.file_size = total;
  info.format_version = p.version;
  info.kind = static_cast<RecorderKind>(p.kind);
  return body(in, p, info);
}

}  // namespace

// ---------------------------------------------------------------- public API
std::vector<std::byte> record_detail::write_record_bytes(const Record& record, RecorderKind kind,
                                                      StoredPrecision precision) {
  std::vector<std::byte> out(kRecordPreambleSize);
  const std::string pre = write_container(record, kind, precision, kMemoryFile, [&](const char* p, std::size_t n) {
    const auto* b = reinterpret_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
    return true;
  });
  std::memcpy(out.data(), pre.data(), kRecordPreambleSize);
  return out;
}

Record deserialize_record(std::span<const std::byte> bytes) {
  const std::string& file = record_detail::kMemoryFile;
  const Preamble p = decode_preamble(bytes.first(std::min(bytes.size(), kRecordPreambleSize)), bytes.size(), file);
  const auto body = bytes.subspan(kRecordPreambleSize);
  check_checksum(record_checksum(body), p, file);
  SpanBuf buf(reinterpret_cast<const char*>(body.data()), body.size());
  std::istream in(&buf);
  RecordFileInfo info;
  Record record;
  record_detail::read_body(in, p.body_length, static_cast<RecorderKind>(p.kind), file, info, &record);
  return record;
}

Record load_record_file(const std::filesystem::path& path) {
  return with_verified_file(path, [&](std::istream& in, const Preamble& p, RecordFileInfo& info) {
    Record record;
    record_detail::read_body(in, p.body_length, info.kind, info.file, info, &record);
    return record;
  });
}

RecordFileInfo inspect_record_file(const std::filesystem::path& path) {
  return with_verified_file(path, [&](std::istream& in, const Preamble& p, RecordFileInfo& info) {
    record_detail::read_body(in, p.body_length, info.kind, info.file, info, nullptr);
    return info;
  });
}

void record_detail::write_record_file(const Record& record, const std::filesystem::path& path, RecorderKind kind,
                                      StoredPrecision precision) {
  const std::string file = path.string();
  write_file_atomically(path, "record", [&](int fd) {
    const std::string placeholder(kRecordPreambleSize, ' ');
    if (!write_all(fd, placeholder.data(), placeholder.size()))
      throw RecordIoError(file, fmt::format("write failed: {}", std::strerror(errno)));
    const std::string pre = write_container(record, kind, precision, file,
                                            [fd](const char* p, std::size_t n) { return write_all(fd, p, n); });
    if (::pwrite(fd, pre.data(), pre.size(), 0) != static_cast<ssize_t>(pre.size()))
      throw RecordIoError(file, fmt::format("write failed: {}", std::strerror(errno)));
  });
}

}  // namespace ember
