#include "tools/data/text_corpus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "engine/tensor/error.hpp"

namespace ember::data {
namespace {

namespace fs = std::filesystem;

std::string printable_byte(unsigned char c) {
  return c >= 0x20 && c < 0x7f ? fmt::format("'{}'", static_cast<char>(c)) : fmt::format("0x{:02x}", c);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read the corpus file {}", p.string()));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool is_fortune_text(const fs::path& p) {
  const auto ext = p.extension();
  return ext != ".dat" && ext != ".u8";  // .dat is fortune's binary index, .u8 a link to the same text
}

}  // namespace

CharVocab::CharVocab(std::string symbols) : symbols_(std::move(symbols)), ids_(256, -1) {
  for (std::size_t i = 0; i < symbols_.size(); ++i) ids_[static_cast<unsigned char>(symbols_[i])] = static_cast<int16_t>(i);
}

CharVocab CharVocab::from_text(const std::string& text) {
  std::vector<bool> seen(256, false);
  for (const char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::string symbols;
  for (int b = 0; b < 256; ++b)
    if (seen[b]) symbols.push_back(static_cast<char>(b));
  if (symbols.empty()) throw ArgumentError("the corpus is empty: no vocabulary");
  return CharVocab(std::move(symbols));
}

CharVocab CharVocab::from_scalars(const std::map<std::string, double>& scalars, const std::string& prefix) {
  const auto size_it = scalars.find(prefix + "size");
  if (size_it == scalars.end()) throw Error(fmt::format("no vocabulary in the record (no {}size)", prefix));
  const double n = size_it->second;
  if (!(n >= 1 && n <= 256) || n != static_cast<int64_t>(n))
    throw Error(fmt::format("the record's vocabulary size {} is not in 1..256", n));
  std::string symbols;
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
    const auto it = scalars.find(fmt::format("{}{}", prefix, i));
    if (it == scalars.end()) throw Error(fmt::format("the record's vocabulary lacks symbol {}", i));
    const double b = it->second;
    if (!(b >= 0 && b <= 255) || b != static_cast<int64_t>(b))
      throw Error(fmt::format("the record's vocabulary symbol {} ({}) is not a byte", i, b));
    symbols.push_back(static_cast<char>(static_cast<unsigned char>(b)));
  }
  CharVocab v(std::move(symbols));
  for (std::size_t i = 0; i < v.symbols_.size(); ++i)
    if (v.ids_[static_cast<unsigned char>(v.symbols_[i])] != static_cast<int16_t>(i))
      throw Error("the record's vocabulary repeats a symbol");
  return v;
}

void CharVocab::to_scalars(std::map<std::string, double>& scalars, const std::string& prefix) const {
  scalars[prefix + "size"] = static_cast<double>(symbols_.size());
  for (std::size_t i = 0; i < symbols_.size(); ++i)
    scalars[fmt::format("{}{}", prefix, i)] = static_cast<double>(static_cast<unsigned char>(symbols_[i]));
}

std::vector<int64_t> CharVocab::encode(const std::string& text) const {
  std::vector<int64_t> out;
  out.reserve(text.size());
  for (const char c : text) {
    const int16_t id = ids_[static_cast<unsigned char>(c)];
    if (id < 0)
      throw ArgumentError(fmt::format("the character {} is not in the model's vocabulary",
                                      printable_byte(static_cast<unsigned char>(c))));
    out.push_back(id);
  }
  return out;
}

std::string CharVocab::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  out.reserve(ids.size());
  for (const int64_t id : ids) {
    if (id < 0 || id >= size()) throw ArgumentError(fmt::format("token id {} is outside the vocabulary (size {})", id, size()));
    out.push_back(symbols_[static_cast<std::size_t>(id)]);
  }
  return out;
}

std::string load_text_corpus(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return read_file(path);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.is_regular_file() && is_fortune_text(e.path())) files.push_back(e.path());
  if (ec || files.empty()) throw Error(fmt::format("no text files in the corpus directory {}", path.string()));
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& f : files) text += read_file(f);
  return text;
}

std::vector<fs::path> default_corpus_files() {
  const char* env = std::getenv("EMBER_FORTUNES_DIR");
  const fs::path dir = env ? fs::path(env) : fs::path("/usr/share/games/fortunes");
  return {dir / "fortunes", dir / "literature", dir / "riddles"};
}

std::string load_default_corpus() {
  std::string text;
  for (const auto& f : default_corpus_files()) {
    std::error_code ec;
    if (!fs::exists(f, ec))
      throw Error(fmt::format("the default corpus file {} is missing (install Debian's fortunes-min, or pass --data)",
                              f.string()));
    text += read_file(f);
  }
  return text;
}

}  // namespace ember::data
