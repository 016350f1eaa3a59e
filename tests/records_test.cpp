// Record files: round trips for every typed recorder (archive x precision policy), loading across precisions,
// lazy-init-free loading, strict / partial loading, precision errors, atomic saves and inspect. Corrupt and hostile
// files: records_errors_test.cpp.
#include <signal.h>
#include <sys/resource.h>

#include <cmath>
#include <random>

#include "tests/support/records_support.hpp"

namespace ember::records_test {
namespace {

// ---------------------------------------------------------------- round trips
template <class R>
class RecorderRoundTrip : public ::testing::Test {};
TYPED_TEST_SUITE(RecorderRoundTrip, AllRecorders, RecorderName);

// Each recorder writes its policy's element types, reads them back, and a fresh module loads the result exactly
// (the values are exact in f16 and i16) without running an initializer.
TYPED_TEST(RecorderRoundTrip, SavesItsPolicyAndLoadsIntoAFreshModule) {
  using R = TypeParam;
  using P = typename R::Settings;
  static_assert(Recorder<R>);
  const R recorder;
  TempDir dir;
  const auto net = valued_net();
  Record rec = into_record(net);
  rec.scalars = {{"step", 42}, {"lr", 0.1}, {"inf", INFINITY}};
  const fs::path file = dir.path / "net.rec";
  recorder.save(rec, file);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"net.rec"});  // no temporary left behind
  EXPECT_EQ(read_bytes(file), recorder.to_bytes(rec));            // file and memory forms agree
  EXPECT_EQ(inspect_record_file(file).kind, R::kind);
  EXPECT_EQ(inspect_record_file(file).precision, P::name);

  const Record stored = load_record_file(file);  // as stored: the policy's dtypes
  ASSERT_EQ(stored.params.size(), 3u);
  EXPECT_EQ(stored.params.at("weight").data.dtype, dtype_of<typename P::FloatElem>());
  EXPECT_EQ(stored.params.at("counts").data.dtype, dtype_of<typename P::IntElem>());
  EXPECT_EQ(stored.params.at("mask").data.dtype, DType::Bool);
  const Record back = recorder.load(file);
  for (const auto& [path, p] : stored.params) EXPECT_EQ(back.params.at(path).data.bytes, p.data.bytes) << path;
  EXPECT_EQ(back.params.at("counts").role, ParamRole::Buffer);
  EXPECT_EQ(back.params.at("mask").role, ParamRole::Constant);
  EXPECT_EQ(back.scalars, rec.scalars);

  int calls = 0;
  const auto loaded = load_record(fresh_net(&calls), back);
  EXPECT_EQ(loaded.weight.val().to_vec<float>(), kWeights);
  EXPECT_EQ(loaded.counts.val().to_vec<int64_t>(), kCounts);
  EXPECT_EQ(loaded.mask.val().to_vec<double>(), (std::vector<double>{1, 0, 1, 1}));
  EXPECT_EQ(calls, 0) << "loading a file into a fresh module must not run initializers";
  EXPECT_EQ(loaded.weight.id(), net.weight.id());
  EXPECT_EQ(loaded.counts.id(), net.counts.id());
  EXPECT_EQ(loaded.mask.id(), net.mask.id());
  EXPECT_EQ(loaded.counts.role(), ParamRole::Buffer);

  const Record mem = recorder.from_bytes(recorder.to_bytes(rec));
  EXPECT_EQ(mem.params.at("weight").data.bytes, back.params.at("weight").data.bytes);
}

// A recorder loads files of every other recorder and precision, converting to its own policy's element types.
TYPED_TEST(RecorderRoundTrip, LoadsEveryOtherPrecisionConvertingToItsOwn) {
  using P = typename TypeParam::Settings;
  const Record rec = into_record(valued_net());
  const std::vector<std::vector<std::byte>> files = {
      BinFileRecorder<FullPrecisionSettings>{}.to_bytes(rec), BinFileRecorder<HalfPrecisionSettings>{}.to_bytes(rec),
      JsonFileRecorder<DoublePrecisionSettings>{}.to_bytes(rec), JsonFileRecorder<HalfPrecisionSettings>{}.to_bytes(rec)};
  for (const auto& f : files) {
    const Record back = TypeParam{}.from_bytes(f);
    EXPECT_EQ(back.params.at("weight").data.dtype, dtype_of<typename P::FloatElem>());
    EXPECT_EQ(back.params.at("counts").data.dtype, dtype_of<typename P::IntElem>());
    EXPECT_EQ(back.params.at("weight").data.to_vec<float>(), kWeights);
    EXPECT_EQ(back.params.at("counts").data.to_vec<int64_t>(), kCounts);
    EXPECT_EQ(back.params.at("mask").data.to_vec<double>(), (std::vector<double>{1, 0, 1, 1}));
  }
}

TEST(Records, PresetsAreWhatTheySay) {
  static_assert(std::is_same_v<CompactFileRecorder<>, BinFileRecorder<HalfPrecisionSettings>>);
  static_assert(std::is_same_v<DefaultFileRecorder, BinFileRecorder<FullPrecisionSettings>>);
  static_assert(JsonFileRecorder<>::kind == RecorderKind::Json);
  static_assert(float_dtype_of<HalfPrecisionSettings> == DType::F16 && int_dtype_of<HalfPrecisionSettings> == DType::I16);
  static_assert(float_dtype_of<FullPrecisionSettings> == DType::F32 && int_dtype_of<FullPrecisionSettings> == DType::I32);
  static_assert(float_dtype_of<DoublePrecisionSettings> == DType::F64 &&
                int_dtype_of<DoublePrecisionSettings> == DType::I64);
  // Compact is about half the size of binary for float-heavy records.
  Record rec;
  rec.params["w"] = {1, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec(std::vector<float>(1000, 1.5f), Shape{1000})};
  EXPECT_LT(CompactFileRecorder<>{}.to_bytes(rec).size(), DefaultFileRecorder{}.to_bytes(rec).size() * 6 / 10);
  // Runtime names reach the same policies (the CLI's --precision); unknown names are refused.
  for (const char* name : {"full", "half", "double"})
    EXPECT_EQ(with_precision_named(name, [](auto p) { return decltype(p)::type::name; }), name);
  EXPECT_THROW(with_precision_named("quarter", [](auto) {}), ArgumentError);
}

// Bit-exact values, including the awkward ones, through both archives. R's policy stores `dtype` for floats.
template <class R>
void expect_exact_values(DType dtype, const std::vector<std::byte>& bytes) {
  using P = typename R::Settings;
  SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + recorder_kind_name(R::kind));
  const std::vector<int64_t> i64s = {INT64_MIN, INT64_MAX, 0, -1};
  Record rec;
  const int64_t n = static_cast<int64_t>(bytes.size() / dtype_size(dtype));
  rec.params["x"] = {9, ParamKind::Float, ParamRole::Trainable, TensorData(bytes, Shape{n}, dtype)};
  if constexpr (std::is_same_v<typename P::IntElem, int64_t>)
    rec.params["i"] = {10, ParamKind::Int, ParamRole::Buffer, TensorData::from_vec(i64s, Shape{4})};
  const Record back = R{}.from_bytes(R{}.to_bytes(rec));
  const TensorData& d = back.params.at("x").data;
  ASSERT_EQ(d.dtype, dtype);
  for (int64_t k = 0; k < n; ++k) {
    const double want = TensorData(bytes, Shape{n}, dtype).get<double>(k);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(d.get<double>(k)));
    } else {
      ASSERT_EQ(std::memcmp(d.bytes.data() + k * dtype_size(dtype), bytes.data() + k * dtype_size(dtype),
                            dtype_size(dtype)), 0)
          << "element " << k << " = " << want;
    }
  }
  if (back.params.count("i")) {
    EXPECT_EQ(back.params.at("i").data.to_vec<int64_t>(), i64s);
  }
}

TEST(Records, ExactValuesThroughJsonAndBinary) {
  std::mt19937_64 rng(7);
  std::vector<std::byte> f16s(65536 * 2), f32s(20000 * 4), f64s(20000 * 8);
  for (uint32_t i = 0; i < 65536; ++i) detail::store_as(f16s.data() + 2 * i, static_cast<uint16_t>(i));
  for (std::size_t i = 0; i < 20000; ++i) detail::store_as(f32s.data() + 4 * i, static_cast<uint32_t>(rng()));
  for (std::size_t i = 0; i < 20000; ++i) detail::store_as(f64s.data() + 8 * i, rng());
  const float specials[] = {0.1f, 1.0f / 3, -0.0f, 1e-45f, 3.4028235e38f, INFINITY, -INFINITY};
  std::memcpy(f32s.data(), specials, sizeof specials);
  expect_exact_values<BinFileRecorder<HalfPrecisionSettings>>(DType::F16, f16s);
  expect_exact_values<JsonFileRecorder<HalfPrecisionSettings>>(DType::F16, f16s);
  expect_exact_values<BinFileRecorder<FullPrecisionSettings>>(DType::F32, f32s);
  expect_exact_values<JsonFileRecorder<FullPrecisionSettings>>(DType::F32, f32s);
  expect_exact_values<BinFileRecorder<DoublePrecisionSettings>>(DType::F64, f64s);
  expect_exact_values<JsonFileRecorder<DoublePrecisionSettings>>(DType::F64, f64s);
}

TEST(Records, JsonIsReadableText) {
  Record rec = into_record(valued_net());
  const auto bytes = JsonFileRecorder<>{}.to_bytes(rec);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_EQ(text.find('\0'), std::string::npos);
  EXPECT_EQ(text.rfind("EMBERREC 00000001 00000001 ", 0), 0u) << text.substr(0, 61);
  EXPECT_NE(text.find("\"path\": \"weight\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"dtype\": \"f32\""), std::string::npos);
  EXPECT_NE(text.find("-1.25"), std::string::npos);
  EXPECT_NE(text.find("true"), std::string::npos);
}

TEST(Records, JsonHalfValuesAreTheShortestDecimals) {
  // A half-precision JSON record writes each value as the shortest decimal that reads back to the same f16 bits:
  // f16(1.234) = 1.234375 is written "1.234", f16(3.14159) = 3.140625 is "3.14" (not their exact binary values).
  Record rec;
  rec.params["x"] = {9, ParamKind::Float, ParamRole::Trainable,
                     TensorData::from_vec(std::vector<float>{1.234f, 3.14159f, 0.1f}, Shape{3})};
  const auto bytes = JsonFileRecorder<HalfPrecisionSettings>{}.to_bytes(rec);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (const char* want : {"1.234", "3.14", "0.1"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  for (const char* longer : {"1.234375", "3.140625", "0.0999"}) EXPECT_EQ(text.find(longer), std::string::npos) << text;
  const auto back = JsonFileRecorder<HalfPrecisionSettings>{}.from_bytes(bytes).params.at("x").data;
  EXPECT_EQ(back.get<double>(0), 1.234375);
  EXPECT_EQ(back.get<double>(1), 3.140625);
}

// ---------------------------------------------------------------- strict and partial loading
TEST(Records, StrictLoadListsEveryMismatchTogether) {
  Record rec = into_record(valued_net());
  rec.params.erase("mask");                                                          // missing
  rec.params["extra"] = {99, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec(std::vector<float>{1}, Shape{1})};  // unexpected
  rec.params["weight"].data = TensorData::from_vec(std::vector<float>(6, 1.f), Shape{3, 2});  // shape mismatch
  TempDir dir;
  DefaultFileRecorder{}.save(rec, dir.path / "r.rec");
  const Record back = DefaultFileRecorder{}.load(dir.path / "r.rec");
  int calls = 0;
  try {
    (void)load_record(fresh_net(&calls), back);
    FAIL() << "strict load accepted a mismatched record";
  } catch (const LoadError& e) {
    EXPECT_EQ(e.report.missing, std::vector<std::string>{"mask"});
    EXPECT_EQ(e.report.unexpected, std::vector<std::string>{"extra"});
    ASSERT_EQ(e.report.mismatched.size(), 1u);
    EXPECT_NE(e.report.mismatched[0].find("weight: shape [3, 2] in record, [2, 3] in module"), std::string::npos);
    const std::string what = e.what();
    for (const char* s : {"missing keys", "mask", "unexpected keys", "extra", "mismatched", "weight"})
      EXPECT_NE(what.find(s), std::string::npos) << s << " not in: " << what;
  }
  EXPECT_EQ(calls, 0);

  LoadReport report;
  const auto partial = load_record(fresh_net(&calls), back, LoadMode::Partial, &report);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(partial.counts.val().to_vec<int64_t>(), kCounts);  // loaded
  EXPECT_FALSE(partial.weight.is_initialized());               // kept as configured, still lazy
  EXPECT_EQ(report.missing, std::vector<std::string>{"mask"});
  EXPECT_EQ(report.unexpected, std::vector<std::string>{"extra"});
  EXPECT_EQ(report.mismatched.size(), 1u);
}

// ---------------------------------------------------------------- precision errors and atomic saves
TEST(Records, IntNarrowingIsAnErrorNamingTheParam) {
  auto net = valued_net();
  net.counts = net.counts.with_value(Tensor<B, 1, Int>::from_values(std::vector<int64_t>{1, 70000, 3}, {3}));
  const Record rec = into_record(net);
  TempDir dir;
  try {
    CompactFileRecorder<>{}.save(rec, dir.path / "n.rec");
    FAIL() << "70000 saved as i16";
  } catch (const RecordPrecisionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("counts"), std::string::npos) << what;
    EXPECT_NE(what.find("70000"), std::string::npos) << what;
    EXPECT_NE(what.find("n.rec"), std::string::npos) << what;
  }
  EXPECT_TRUE(dir.listing().empty());
  EXPECT_THROW(JsonFileRecorder<HalfPrecisionSettings>{}.to_bytes(rec), RecordPrecisionError);
  EXPECT_NO_THROW(BinFileRecorder<FullPrecisionSettings>{}.to_bytes(rec));  // i32 holds it

  // Loading narrows too: a double-precision file holding 70000 does not load as half, and says why.
  JsonFileRecorder<DoublePrecisionSettings>{}.save(rec, dir.path / "wide.json");
  try {
    (void)CompactFileRecorder<>{}.load(dir.path / "wide.json");
    FAIL() << "70000 loaded as i16";
  } catch (const RecordPrecisionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("wide.json"), std::string::npos) << what;
    EXPECT_NE(what.find("70000"), std::string::npos) << what;
  }
  EXPECT_EQ(DefaultFileRecorder{}.load(dir.path / "wide.json").params.at("counts").data.to_vec<int64_t>(),
            (std::vector<int64_t>{1, 70000, 3}));
}

TEST(Records, FailedSavesLeaveTheOldFileAndNoTemporaries) {
  TempDir dir;
  const fs::path file = dir.path / "model.rec";
  DefaultFileRecorder{}.save(into_record(valued_net()), file);
  const auto good = read_bytes(file);

  // 1. A record that cannot be converted.
  auto bad = into_record(valued_net());
  bad.params["counts"].data = TensorData::from_vec(std::vector<int64_t>{1, 1 << 20, 3}, Shape{3});
  EXPECT_THROW(CompactFileRecorder<>{}.save(bad, file), RecordPrecisionError);
  EXPECT_EQ(read_bytes(file), good);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"model.rec"});

  // 2. The disk "fills" mid-write (RLIMIT_FSIZE makes write() fail with EFBIG).
  Record big;
  big.params["w"] = {1, ParamKind::Float, ParamRole::Trainable,
                     TensorData::from_vec(std::vector<float>(1 << 18, 0.25f), Shape{1 << 18})};
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 100000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  for (const auto& save : {+[](const Record& r, const fs::path& f) { BinFileRecorder<>{}.save(r, f); },
                           +[](const Record& r, const fs::path& f) { JsonFileRecorder<>{}.save(r, f); }}) {
    try {
      save(big, file);
      ADD_FAILURE() << "write beyond RLIMIT_FSIZE succeeded";
    } catch (const RecordIoError& e) {
      EXPECT_NE(std::string(e.what()).find("write failed"), std::string::npos) << e.what();
    }
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_bytes(file), good);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"model.rec"});

  // 3. The rename fails (a directory is in the way).
  fs::create_directory(dir.path / "taken");
  fs::create_directory(dir.path / "taken" / "child");
  EXPECT_THROW(DefaultFileRecorder{}.save(into_record(valued_net()), dir.path / "taken"), RecordIoError);
  EXPECT_EQ(dir.listing(), (std::vector<std::string>{"model.rec", "taken"}));

  // 4. No such directory.
  EXPECT_THROW(DefaultFileRecorder{}.save(into_record(valued_net()), dir.path / "nope" / "m.rec"), RecordIoError);
  EXPECT_THROW((void)load_record_file(dir.path / "missing.rec"), RecordIoError);

  // 5. A record the format cannot hold fails before any file is touched.
  Record deep;
  deep.params["t"] = {1, ParamKind::Float, ParamRole::Trainable,
                      TensorData::from_vec(std::vector<float>{1}, Shape{1, 1, 1, 1, 1, 1, 1, 1, 1})};
  EXPECT_THROW(DefaultFileRecorder{}.save(deep, file), RecordFormatError);
  EXPECT_EQ(read_bytes(file), good);
  EXPECT_EQ(dir.listing(), (std::vector<std::string>{"model.rec", "taken"}));
}

// ---------------------------------------------------------------- inspect
TEST(Records, InspectShowsTheTreeWithoutLoadingPayloads) {
  TempDir dir;
  Record rec = into_record<HalfPrecisionSettings>(valued_net());
  rec.scalars["step"] = 7;
  rec.params["encoder.layers.10.w"] = {5, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec(std::vector<float>(4, 0.f), Shape{2, 2}).convert(DType::F16)};
  rec.params["encoder.layers.9.w"] = {6, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec(std::vector<float>(1 << 20, 0.f), Shape{1024, 1024}).convert(DType::F16)};
  CompactFileRecorder<>{}.save(rec, dir.path / "m.rec");

  g_total = 0;
  g_largest = 0;
  g_tracking = true;
  const RecordFileInfo info = inspect_record_file(dir.path / "m.rec");
  g_tracking = false;
  EXPECT_LT(g_total.load(), (1u << 20) + (64u << 10)) << "inspect must not hold payloads (2 MiB of f16 here)";

  EXPECT_EQ(info.format_version, kRecordFormatVersion);
  EXPECT_EQ(info.engine_version, engine_version());
  EXPECT_EQ(info.kind, RecorderKind::Binary);
  EXPECT_EQ(info.precision, "half");
  ASSERT_EQ(info.entries.size(), 5u);
  EXPECT_EQ(info.entries[0].path, "counts");
  EXPECT_EQ(info.entries[1].shape, (Shape{2, 2}));
  EXPECT_EQ(info.scalars.at("step"), 7);
  const std::string tree = format_record_tree(info);
  for (const char* s : {"format 1", "engine 0.1.0", "binary recorder", "precision half (float f16, int i16)",
                        "params: 1,048,593 in 5 tensors", "encoder  (1,048,580 in 2 tensors)", "layers",
                        "9  (1,048,576 in 1 tensor)", "w  float f16 [1024, 1024]  1,048,576  trainable  id 6",
                        "counts  int i16 [3]  3  buffer", "mask  bool bool [4]  4  constant", "step = 7"})
    EXPECT_NE(tree.find(s), std::string::npos) << "'" << s << "' not in:\n" << tree;
  EXPECT_LT(tree.find("9  ("), tree.find("10  (")) << "numeric segments sort as numbers:\n" << tree;

  // The same header from a JSON record.
  JsonFileRecorder<HalfPrecisionSettings>{}.save(rec, dir.path / "m.json");
  const RecordFileInfo json = inspect_record_file(dir.path / "m.json");
  EXPECT_EQ(json.kind, RecorderKind::Json);
  ASSERT_EQ(json.entries.size(), info.entries.size());
  for (std::size_t k = 0; k < json.entries.size(); ++k) {
    EXPECT_EQ(json.entries[k].path, info.entries[k].path);
    EXPECT_EQ(json.entries[k].shape, info.entries[k].shape);
    EXPECT_EQ(json.entries[k].byte_count, info.entries[k].byte_count);
  }
  EXPECT_NE(format_record_tree(json).find("json recorder"), std::string::npos);
}
}  // namespace
}  // namespace ember::records_test
