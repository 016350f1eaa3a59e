#pragma once
// The language model's corpus and its character tokenizer. The corpus is plain text shipped by Debian's
// `fortunes-min` / `fortunes` packages (data/README.md: files and licence); a "character" is one byte, so any
// file loads (the fortune files are ASCII with a little Latin-1/UTF-8) and the tokenizer has at most 256 symbols.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ember::data {

// The symbols of a corpus, sorted, each mapped to its index. Built from the corpus so that no id is wasted on a
// byte that never occurs; stored with the model (to_scalars) so that `ember generate` decodes with the same one.
class CharVocab {
 public:
  CharVocab() = default;
  static CharVocab from_text(const std::string& text);
  // The record's scalars "<prefix>size" and "<prefix><i>" (the byte of id i); throws Error when absent or malformed.
  static CharVocab from_scalars(const std::map<std::string, double>& scalars, const std::string& prefix);
  void to_scalars(std::map<std::string, double>& scalars, const std::string& prefix) const;

  int64_t size() const { return static_cast<int64_t>(symbols_.size()); }
  // Text -> ids; a byte the vocabulary lacks throws ArgumentError naming it (escaped).
  std::vector<int64_t> encode(const std::string& text) const;
  std::string decode(const std::vector<int64_t>& ids) const;
  const std::string& symbols() const { return symbols_; }

 private:
  explicit CharVocab(std::string symbols);
  std::string symbols_;        // id -> byte
  std::vector<int16_t> ids_;   // byte -> id, -1 when absent (256 entries)
};

// Reads a text file, or every fortune file of a directory (names without .dat / .u8, sorted, concatenated).
// Throws Error naming the path when nothing can be read.
std::string load_text_corpus(const std::filesystem::path& path);

// The default corpus: fortunes-min's files (fortunes, literature, riddles) under /usr/share/games/fortunes, or
// $EMBER_FORTUNES_DIR's.
std::vector<std::filesystem::path> default_corpus_files();
std::string load_default_corpus();

}  // namespace ember::data
