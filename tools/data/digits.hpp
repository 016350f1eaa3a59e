#pragma once
// The UCI handwritten digits data set (data/digits.csv.gz): 1797 8x8 images, labels 0..9.
#include <cstdint>
#include <filesystem>
#include <vector>

namespace ember::data {

struct Digits {
  std::vector<float> images;   // [n, 64], pixel / 16 so values lie in [0, 1]
  std::vector<int64_t> labels;  // [n]
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

struct DigitsSplit {
  Digits train, test;
};

// Reads the gzipped CSV; throws ember::Error naming the file and line on malformed input.
Digits load_digits(const std::filesystem::path& csv_gz);

// Shuffles with a fixed-seed generator and puts `train_fraction` in train, the rest in test.
DigitsSplit split_digits(const Digits& all, double train_fraction = 0.8, uint64_t seed = 2024);

// Where the data set is: $EMBER_DATA_DIR, then ./data, then the source tree's data/ (compiled in).
std::filesystem::path default_digits_path();

}  // namespace ember::data
