#include "tools/data/digits.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <string>

#include "engine/tensor/error.hpp"
#include "engine/tensor/random.hpp"

#ifndef EMBER_SOURCE_DATA_DIR
#define EMBER_SOURCE_DATA_DIR "data"
#endif

namespace ember::data {
namespace {

std::string read_gzip(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw Error("digits: cannot open " + path.string());
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > (64u << 20)) {  // the real file is ~0.5 MB: refuse anything absurd
      gzclose(f);
      throw Error("digits: " + path.string() + " is larger than any digits data set");
    }
  }
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw Error("digits: " + path.string() + " is not a valid gzip file");
  return out;
}

}  // namespace

Digits load_digits(const std::filesystem::path& csv_gz) {
  const std::string text = read_gzip(csv_gz);
  Digits d;
  std::size_t pos = 0, line = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    if (end > pos) {
      std::vector<int> values;
      const char* p = text.data() + pos;
      const char* e = text.data() + end;
      while (p < e) {
        char* next = nullptr;
        const long v = std::strtol(p, &next, 10);
        if (next == p) break;
        values.push_back(static_cast<int>(v));
        p = next;
        if (p < e && *p == ',') ++p;
      }
      if (values.size() != 65 || values[64] < 0 || values[64] > 9)
        throw Error("digits: " + csv_gz.string() + " line " + std::to_string(line) +
                    ": expected 64 pixels and a label 0..9");
      for (int i = 0; i < 64; ++i) {
        if (values[i] < 0 || values[i] > 16)
          throw Error("digits: " + csv_gz.string() + " line " + std::to_string(line) + ": pixel out of 0..16");
        d.images.push_back(static_cast<float>(values[i]) / 16.0f);
      }
      d.labels.push_back(values[64]);
    }
    pos = end + 1;
  }
  if (d.labels.empty()) throw Error("digits: " + csv_gz.string() + " holds no samples");
  return d;
}

DigitsSplit split_digits(const Digits& all, double train_fraction, uint64_t seed) {
  std::vector<int64_t> order(static_cast<std::size_t>(all.size()));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  for (std::size_t i = order.size(); i > 1; --i) {  // Fisher-Yates with our portable generator
    const std::size_t j = static_cast<std::size_t>(rng.next() % i);
    std::swap(order[i - 1], order[j]);
  }
  const auto n_train = static_cast<std::size_t>(train_fraction * static_cast<double>(order.size()));
  DigitsSplit s;
  for (std::size_t k = 0; k < order.size(); ++k) {
    Digits& dst = k < n_train ? s.train : s.test;
    const int64_t i = order[k];
    dst.images.insert(dst.images.end(), all.images.begin() + i * 64, all.images.begin() + (i + 1) * 64);
    dst.labels.push_back(all.labels[static_cast<std::size_t>(i)]);
  }
  return s;
}

std::filesystem::path default_digits_path() {
  if (const char* env = std::getenv("EMBER_DATA_DIR")) return std::filesystem::path(env) / "digits.csv.gz";
  if (std::filesystem::exists("data/digits.csv.gz")) return "data/digits.csv.gz";
  return std::filesystem::path(EMBER_SOURCE_DATA_DIR) / "digits.csv.gz";
}

}  // namespace ember::data
