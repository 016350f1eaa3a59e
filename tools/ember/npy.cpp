#include "tools/ember/npy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>

#include "ember.h"
#include "engine/tensor/error.hpp"

namespace ember::tools {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kMaxHeader = 64 * 1024;

struct Descr {
  std::string_view npy;  // numpy's descr
  int32_t dtype;
};
// '<' little-endian, '|' not applicable (one byte); '=' is the writer's native order, little-endian here too.
constexpr std::array<Descr, 8> kDescrs{{{"f4", EMBER_DTYPE_F32},
                                        {"f8", EMBER_DTYPE_F64},
                                        {"f2", EMBER_DTYPE_F16},
                                        {"i4", EMBER_DTYPE_I32},
                                        {"i8", EMBER_DTYPE_I64},
                                        {"i2", EMBER_DTYPE_I16},
                                        {"u1", EMBER_DTYPE_U8},
                                        {"b1", EMBER_DTYPE_BOOL}}};

[[noreturn]] void bad(const std::filesystem::path& path, const std::string& what) {
  throw Error(fmt::format("{}: {}", path.string(), what));
}

// The quoted value after 'key': in the header's dict (numpy writes it with repr, single quotes).
std::string_view dict_value(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}':", key);
  const auto at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + quoted.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

int32_t parse_descr(const std::filesystem::path& path, std::string_view header) {
  std::string_view v = dict_value(header, "descr");
  if (v.size() < 2 || v.front() != '\'') bad(path, "the header has no 'descr'");
  v.remove_prefix(1);
  const auto end = v.find('\'');
  if (end == std::string_view::npos || end < 2) bad(path, "the header's 'descr' is malformed");
  v = v.substr(0, end);
  const char order = v.front();
  const std::string_view code = v.substr(1);
  for (const auto& d : kDescrs)
    if (d.npy == code) {
      const bool one_byte = code == "u1" || code == "b1";
      if (order == '>' && !one_byte) bad(path, fmt::format("big-endian data ('{}') is not supported", v));
      if (order != '<' && order != '|' && order != '=' && order != '>')
        bad(path, fmt::format("unknown byte order in '{}'", v));
      return d.dtype;
    }
  bad(path, fmt::format("dtype '{}' is not supported (float16/32/64, int16/32/64, uint8, bool are)", v));
}

std::vector<int64_t> parse_shape(const std::filesystem::path& path, std::string_view header) {
  std::string_view v = dict_value(header, "shape");
  if (v.empty() || v.front() != '(') bad(path, "the header has no 'shape'");
  const auto close = v.find(')');
  if (close == std::string_view::npos) bad(path, "the header's 'shape' is malformed");
  v = v.substr(1, close - 1);
  std::vector<int64_t> dims;
  while (!v.empty()) {
    while (!v.empty() && (v.front() == ' ' || v.front() == ',')) v.remove_prefix(1);
    if (v.empty()) break;
    int64_t d = 0;
    std::size_t used = 0;
    while (used < v.size() && v[used] >= '0' && v[used] <= '9') {
      if (d > (std::numeric_limits<int64_t>::max() - 9) / 10) bad(path, "a dim of 'shape' is too large");
      d = d * 10 + (v[used] - '0');
      ++used;
    }
    if (used == 0) bad(path, fmt::format("the header's 'shape' has a non-number '{}'", v));
    dims.push_back(d);
    if (dims.size() > kNpyMaxRank) bad(path, fmt::format("rank above {}", kNpyMaxRank));
    v.remove_prefix(used);
  }
  return dims;
}

}  // namespace

std::size_t npy_item_size(int32_t dtype) {
  switch (dtype) {
    case EMBER_DTYPE_F64:
    case EMBER_DTYPE_I64: return 8;
    case EMBER_DTYPE_F32:
    case EMBER_DTYPE_I32: return 4;
    case EMBER_DTYPE_F16:
    case EMBER_DTYPE_I16: return 2;
    case EMBER_DTYPE_U8:
    case EMBER_DTYPE_BOOL: return 1;
    default: return 0;
  }
}

NpyArray read_npy(const std::filesystem::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot open the file");
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0));
  in.seekg(0);
  std::array<char, 10> pre{};
  if (file_size < pre.size() || !in.read(pre.data(), pre.size()) ||
      std::string_view(pre.data(), kMagic.size()) != kMagic)
    bad(path, "not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(pre[6]);
  std::size_t header_len = 0, prefix = 10;
  if (major == 1) {
    header_len = static_cast<unsigned char>(pre[8]) | static_cast<std::size_t>(static_cast<unsigned char>(pre[9])) << 8;
  } else if (major == 2 || major == 3) {
    std::array<char, 2> more{};
    if (!in.read(more.data(), more.size())) bad(path, "the file ends inside its header");
    header_len = 0;
    for (int i = 3; i >= 0; --i)
      header_len = header_len << 8 | static_cast<unsigned char>(i < 2 ? pre[8 + i] : more[i - 2]);
    prefix = 12;
  } else {
    bad(path, fmt::format("format version {} is not supported (1, 2, 3 are)", major));
  }
  if (header_len > kMaxHeader || prefix + header_len > file_size)
    bad(path, fmt::format("header of {} bytes (the file has {}; at most {})", header_len, file_size, kMaxHeader));
  std::string header(header_len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) bad(path, "the file ends inside its header");
  if (dict_value(header, "fortran_order").substr(0, 4) == "True")
    bad(path, "Fortran-order arrays are not supported (save with numpy.ascontiguousarray)");
  NpyArray a;
  a.dtype = parse_descr(path, header);
  a.shape = parse_shape(path, header);
  const std::size_t item = npy_item_size(a.dtype);
  std::size_t numel = 1;
  for (const int64_t d : a.shape) {
    const auto ud = static_cast<std::size_t>(d);
    if (ud != 0 && numel > max_bytes / item / ud)
      bad(path, fmt::format("shape [{}] is larger than {} bytes", fmt::join(a.shape, ", "), max_bytes));
    numel *= ud;
  }
  const std::size_t bytes = numel * item;
  const std::size_t left = file_size - prefix - header_len;
  if (bytes != left)
    bad(path, fmt::format("shape [{}] needs {} bytes of data, the file has {}", fmt::join(a.shape, ", "), bytes, left));
  a.data.resize(bytes);
  if (bytes > 0 && !in.read(reinterpret_cast<char*>(a.data.data()), static_cast<std::streamsize>(bytes)))
    bad(path, "cannot read the data");
  return a;
}

void write_npy(const std::filesystem::path& path, const NpyArray& a) {
  std::string_view code;
  for (const auto& d : kDescrs)
    if (d.dtype == a.dtype) code = d.npy;
  if (code.empty()) bad(path, fmt::format("cannot write dtype {}", a.dtype));
  const bool one_byte = code == "u1" || code == "b1";
  std::string shape;
  for (const int64_t d : a.shape) shape += fmt::format("{}, ", d);
  if (a.shape.size() > 1) shape.resize(shape.size() - 2);  // numpy writes (3,) for rank 1 and (2, 3) beyond
  if (a.shape.size() == 1) shape.pop_back();
  std::string header = fmt::format("{{'descr': '{}{}', 'fortran_order': False, 'shape': ({}), }}", one_byte ? '|' : '<',
                                   code, shape);
  // The data starts at a multiple of 64 bytes; the header ends with a newline (numpy's layout).
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xffff) bad(path, "the header is too long for format 1.0");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) bad(path, "cannot create the file");
  out.write(kMagic.data(), static_cast<std::streamsize>(kMagic.size()));
  const std::array<char, 4> ver{1, 0, static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(ver.data(), ver.size());
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
  if (!out.flush()) bad(path, "cannot write the file");
}

}  // namespace ember::tools
