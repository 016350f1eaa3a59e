// Tensor-name validation and escaping (tensor_name.hpp).
#include "records/tensor_name.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace ember {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] and its code point; 0 when it is not well formed
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i, uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n;
  uint32_t min;
  if ((c & 0xe0) == 0xc0) n = 2, cp = c & 0x1f, min = 0x80;
  else if ((c & 0xf0) == 0xe0) n = 3, cp = c & 0x0f, min = 0x800;
  else if ((c & 0xf8) == 0xf0) n = 4, cp = c & 0x07, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (b(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool is_control(uint32_t cp) { return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f); }

}  // namespace

std::string tensor_name_problem(std::string_view name) {
  if (name.empty()) return "the name is empty";
  for (std::size_t i = 0; i < name.size();) {
    uint32_t cp = 0;
    const std::size_t n = utf8_sequence(name, i, cp);
    if (n == 0) return fmt::format("the name {} is not valid UTF-8 (byte {})", quote_file_text(name), i);
    if (is_control(cp))
      return fmt::format("the name {} holds a control character (U+{:04X} at byte {})", quote_file_text(name), cp, i);
    i += n;
  }
  return {};
}

std::string escape_file_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    if (n == 0 || is_control(cp)) {
      // An invalid byte, or every byte of a control character's sequence.
      const std::size_t k = n == 0 ? 1 : n;
      for (std::size_t j = i; j < i + k; ++j) out += fmt::format("\\x{:02x}", static_cast<uint8_t>(text[j]));
      i += k;
      continue;
    }
    if (text[i] == '\\') out += "\\\\";
    else out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string quote_file_text(std::string_view text, std::size_t max_bytes) {
  const bool cut = text.size() > max_bytes;
  return fmt::format("'{}{}'", escape_file_text(cut ? text.substr(0, max_bytes) : text), cut ? "..." : "");
}

}  // namespace ember
