#pragma once
// Shared by the record tests (records_test.cpp, records_errors_test.cpp): a small module with Float, Int and Bool
// params, temporary directories, file bytes, and the allocation counters that records_errors_test.cpp feeds from
// its replacement operator new.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "records/module_record.hpp"
#include "records/recorder.hpp"

namespace ember::records_test {

// Every operator new in the process is counted while `g_tracking` is on: the bytes allocated in total and the
// largest single block. Totals over-approximate the peak, so bounds on them are conservative.
extern std::atomic<bool> g_tracking;
extern std::atomic<uint64_t> g_total, g_largest;

namespace fs = std::filesystem;
using B = Cpu<float>;

template <Backend Bk>
struct Net {
  BOOST_HANA_DEFINE_STRUCT(Net, (Param<Tensor<Bk, 2>>, weight), (Param<Tensor<Bk, 1, Int>>, counts),
                           (Param<Tensor<Bk, 1, Bool>>, mask));
};

inline const std::vector<float> kWeights = {0.5f, -1.25f, 3.0f, 0.0f, 1024.0f, -0.0078125f};  // exact in f16
inline const std::vector<int64_t> kCounts = {1, -7, 30000};                                  // fit i16
inline const std::vector<bool> kMask = {true, false, true, true};

inline Net<B> valued_net() {
  Net<B> m;
  m.weight = Param<Tensor<B, 2>>::initialized(ParamId::next(), Tensor<B, 2>::from_values(kWeights, {2, 3}));
  m.counts = Param<Tensor<B, 1, Int>>::initialized(ParamId::next(), Tensor<B, 1, Int>::from_values(kCounts, {3}),
                                                   false, ParamRole::Buffer);
  m.mask = Param<Tensor<B, 1, Bool>>::initialized(ParamId::next(), Tensor<B, 1, Bool>::from_values(kMask, {4}),
                                                  false, ParamRole::Constant);
  return m;
}

// A freshly configured module: every param lazy, its initializer counting calls.
inline Net<B> fresh_net(int* calls, int64_t rows = 2) {
  Net<B> m;
  m.weight = Param<Tensor<B, 2>>::uninitialized(
      ParamId::next(), [calls, rows](const Cpu<float>::Device&) { ++*calls; return Tensor<B, 2>::zeros({rows, 3}); },
      {}, true, Shape{rows, 3});
  m.counts = Param<Tensor<B, 1, Int>>::uninitialized(
      ParamId::next(), [calls](const Cpu<float>::Device&) { ++*calls; return Tensor<B, 1, Int>::zeros({3}); }, {},
      false, Shape{3}, ParamRole::Buffer);
  m.mask = Param<Tensor<B, 1, Bool>>::uninitialized(
      ParamId::next(), [calls](const Cpu<float>::Device&) { ++*calls; return Tensor<B, 1, Bool>::zeros({4}); }, {},
      false, Shape{4}, ParamRole::Constant);
  return m;
}

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("ember_records_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> listing() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

inline std::vector<std::byte> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}
inline void write_bytes(const fs::path& p, std::span<const std::byte> b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The typed recorders under test: each archive x each precision policy (CompactFileRecorder<> is
// BinFileRecorder<HalfPrecisionSettings>, so it is among them).
using AllRecorders =
    ::testing::Types<BinFileRecorder<FullPrecisionSettings>, BinFileRecorder<HalfPrecisionSettings>,
                     BinFileRecorder<DoublePrecisionSettings>, JsonFileRecorder<FullPrecisionSettings>,
                     JsonFileRecorder<HalfPrecisionSettings>, JsonFileRecorder<DoublePrecisionSettings>>;
struct RecorderName {
  template <class R>
  static std::string GetName(int) {
    return std::string(recorder_kind_name(R::kind)) + "_" + std::string(R::Settings::name);
  }
};

// A small record as a file in memory (half precision), from the recorder of `kind`.
inline std::vector<std::byte> small_file(RecorderKind kind) {
  Record rec = into_record(valued_net());
  rec.scalars["step"] = 3;
  return kind == RecorderKind::Json ? JsonFileRecorder<HalfPrecisionSettings>{}.to_bytes(rec)
                                    : BinFileRecorder<HalfPrecisionSettings>{}.to_bytes(rec);
}

}  // namespace ember::records_test
