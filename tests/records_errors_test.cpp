// Corrupt and hostile record files: each fails with a typed RecordError, fast (< 100 ms), allocating no more than
// a small constant beyond the file; nothing crashes. Counted through a replacement operator new.
#include <malloc.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "tests/support/records_support.hpp"

namespace ember::records_test {
std::atomic<bool> g_tracking{false};
std::atomic<uint64_t> g_total{0}, g_largest{0};
}  // namespace ember::records_test

namespace {
void* tracked_alloc(std::size_t n) {
  using namespace ember::records_test;
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  if (g_tracking.load(std::memory_order_relaxed)) {
    g_total += n;
    uint64_t prev = g_largest.load();
    while (n > prev && !g_largest.compare_exchange_weak(prev, n)) {
    }
  }
  return p;
}
}  // namespace
void* operator new(std::size_t n) { return tracked_alloc(n); }
void* operator new[](std::size_t n) { return tracked_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace ember::records_test {
namespace {

// ---------------------------------------------------------------- corrupt files
std::string preamble(uint32_t version, uint32_t kind, uint64_t length, uint64_t checksum) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "EMBERREC %08x %08x %016llx %016llx\n", version, kind,
                static_cast<unsigned long long>(length), static_cast<unsigned long long>(checksum));
  return buf;
}
std::vector<std::byte> wrap(std::span<const std::byte> body, uint32_t kind = 0, uint32_t version = 1) {
  const std::string p = preamble(version, kind, body.size(), record_checksum(body));
  std::vector<std::byte> out(p.size());
  std::memcpy(out.data(), p.data(), p.size());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}
std::span<const std::byte> body_of(const std::vector<std::byte>& file) {
  return std::span<const std::byte>(file).subspan(kRecordPreambleSize);
}

TEST(RecordErrors, WrongMagic) {
  for (auto kind : {RecorderKind::Binary, RecorderKind::Json}) {
    auto f = small_file(kind);
    f[0] = std::byte{'X'};
    try {
      (void)deserialize_record(f);
      FAIL();
    } catch (const RecordFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("wrong magic"), std::string::npos) << e.what();
    }
  }
  const std::string text = "just some text, long enough to fill a preamble and then quite a bit more .....";
  EXPECT_THROW((void)deserialize_record(std::as_bytes(std::span(text))), RecordFormatError);
}

TEST(RecordErrors, NewerFormatVersion) {
  const auto f = small_file(RecorderKind::Binary);
  const auto newer = wrap(body_of(f), 0, kRecordFormatVersion + 1);
  TempDir dir;
  write_bytes(dir.path / "new.rec", newer);
  try {
    (void)load_record_file(dir.path / "new.rec");
    FAIL();
  } catch (const RecordVersionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("format version 2 is newer"), std::string::npos) << what;
    EXPECT_NE(what.find("new.rec"), std::string::npos) << what;
  }
  EXPECT_THROW((void)deserialize_record(wrap(body_of(f), 0, 0)), RecordFormatError);
  EXPECT_THROW((void)deserialize_record(wrap(body_of(f), 7, 1)), RecordFormatError);  // unknown recorder kind
}

TEST(RecordErrors, TruncatedAtEveryOffset) {
  TempDir dir;
  for (auto kind : {RecorderKind::Binary, RecorderKind::Json}) {
    const auto f = small_file(kind);
    for (std::size_t n = 0; n < f.size(); ++n) {
      const std::span<const std::byte> cut(f.data(), n);
      EXPECT_THROW((void)deserialize_record(cut), RecordCorruptError) << "cut at " << n;
      if (n % 7 == 0 || n < 70) {  // and through files, on a sample of offsets
        write_bytes(dir.path / "t.rec", cut);
        EXPECT_THROW((void)load_record_file(dir.path / "t.rec"), RecordCorruptError) << "cut at " << n;
        EXPECT_THROW((void)inspect_record_file(dir.path / "t.rec"), RecordCorruptError) << "cut at " << n;
      }
    }
    auto longer = f;
    longer.push_back(std::byte{0});
    EXPECT_THROW((void)deserialize_record(longer), RecordCorruptError);
  }
}

TEST(RecordErrors, BitFlipsAtEveryPosition) {
  TempDir dir;
  for (auto kind : {RecorderKind::Binary, RecorderKind::Json}) {
    const auto f = small_file(kind);
    const Record good = deserialize_record(f);
    std::size_t failed = 0;
    for (std::size_t bit = 0; bit < f.size() * 8; ++bit) {
      auto g = f;
      g[bit / 8] ^= std::byte(1u << (bit % 8));
      try {
        const Record r = deserialize_record(g);
        for (const auto& [path, p] : good.params) EXPECT_EQ(r.params.at(path).data.bytes, p.data.bytes);
      } catch (const RecordError&) {
        ++failed;
      }
      if (bit % 97 == 0) {
        write_bytes(dir.path / "b.rec", g);
        EXPECT_THROW((void)load_record_file(dir.path / "b.rec"), RecordError) << "bit " << bit;
      }
    }
    EXPECT_EQ(failed, f.size() * 8) << "FNV-1a-64 catches every single-bit flip";
    auto g = f;
    g[kRecordPreambleSize + 3] ^= std::byte{0x10};
    try {
      (void)deserialize_record(g);
      FAIL();
    } catch (const RecordCorruptError& e) {
      EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------- hostile files
// Crafted binary bodies (the layout documented in recorder.hpp), wrapped with a correct checksum.
struct Body {
  std::vector<std::byte> b;
  Body& u8(uint8_t v) { return raw(&v, 1); }
  Body& u64(uint64_t v) { return raw(&v, 8); }
  Body& i64(int64_t v) { return raw(&v, 8); }
  Body& str(std::string_view s) { return u64(s.size()).raw(s.data(), s.size()); }
  Body& raw(const void* p, std::size_t n) {
    const auto* c = static_cast<const std::byte*>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  // Endianness flag (cereal's portable archive), engine version, precision, no scalars.
  static Body header() {
    Body h;
    h.u8(1).str("0.1.0").str("full").str("f32").str("i32").u64(0);
    return h;
  }
  Body& entry(std::string_view path, std::vector<int64_t> dims, uint64_t bytes, std::string_view dtype = "f32") {
    str(path).u64(1).str("float").str("trainable").str(dtype).u64(dims.size());
    for (auto d : dims) i64(d);
    return u64(bytes);
  }
};

// Runs `f`, which must throw a RecordError, within 100 ms and allocating at most `budget` bytes in total.
template <class F>
void expect_fails_fast(const char* what, F&& f, uint64_t budget) {
  SCOPED_TRACE(what);
  g_total = 0;
  g_largest = 0;
  const auto t0 = std::chrono::steady_clock::now();
  g_tracking = true;
  bool threw = false;
  try {
    f();
  } catch (const RecordError&) {
    threw = true;
  }
  g_tracking = false;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(threw);
  EXPECT_LT(ms, 100.0);
  EXPECT_LE(g_total.load(), budget) << "largest block " << g_largest.load();
}

TEST(RecordErrors, CraftedBinaryBodyLoads) {  // the crafting below really follows the format
  Body b = Body::header();
  b.u64(1).entry("w", {2}, 8);
  const float v[2] = {1.5f, -2.f};
  b.raw(v, 8);
  const Record r = deserialize_record(wrap(b.b));
  EXPECT_EQ(r.params.at("w").data.to_vec<float>(), (std::vector<float>{1.5f, -2.f}));
}

TEST(RecordErrors, HostileSizesFailFastWithoutLargeAllocations) {
  TempDir dir;
  constexpr uint64_t kSmall = 256 << 10;  // "a small constant": 256 KiB for everything the attempt allocates
  // A 16-byte file, and a bare preamble claiming a petabyte body.
  write_bytes(dir.path / "16.rec", std::as_bytes(std::span("EMBERREC 0000000", 16)));
  expect_fails_fast("16-byte file", [&] { (void)load_record_file(dir.path / "16.rec"); }, kSmall);
  const std::string peta = preamble(1, 0, uint64_t(1) << 50, 0);
  write_bytes(dir.path / "peta.rec", std::as_bytes(std::span(peta)));
  expect_fails_fast("preamble claims 2^50 body bytes", [&] { (void)load_record_file(dir.path / "peta.rec"); }, kSmall);
  expect_fails_fast("... inspected", [&] { (void)inspect_record_file(dir.path / "peta.rec"); }, kSmall);

  struct Case { const char* what; Body body; };
  std::vector<Case> cases;
  { Body b; b.u8(1).u64(uint64_t(1) << 62).str("x"); cases.push_back({"huge engine-version length", b}); }
  { Body b; b.u8(1).u64(5000).raw(std::string(5000, 'v').data(), 5000); cases.push_back({"over-long string", b}); }
  { Body b; b.u8(1).str("0.1.0").str("full").str("f32").str("i32").u64(uint64_t(1) << 60); cases.push_back({"huge scalar count", b}); }
  { Body b = Body::header(); b.u64(uint64_t(1) << 60); cases.push_back({"huge entry count", b}); }
  { Body b = Body::header(); b.u64(1000); b.entry("w", {1}, 4); cases.push_back({"entry count beyond the body", b}); }
  { Body b = Body::header(); b.u64(1).str("w").u64(1).str("float").str("trainable").str("f32").u64(uint64_t(1) << 40); cases.push_back({"huge rank", b}); }
  { Body b = Body::header(); b.u64(1).entry("w", {1 << 30, 1 << 30}, uint64_t(1) << 62); cases.push_back({"huge shape", b}); }
  { Body b = Body::header(); b.u64(1).entry("w", {int64_t(1) << 62, 16}, 0); cases.push_back({"shape product overflow", b}); }
  { Body b = Body::header(); b.u64(1).entry("w", {-4}, 0); cases.push_back({"negative dim", b}); }
  { Body b = Body::header(); b.u64(1).entry("w", {30}, 120); cases.push_back({"payload beyond the body", b}); }
  { Body b = Body::header(); b.u64(1).entry("w", {4}, 12); cases.push_back({"byte count != shape x dtype", b}); }
  { Body b = Body::header(); b.u64(2).entry("w", {1}, 4).entry("v", {1}, 4).u64(0).i64(0); cases.push_back({"payload sum != rest", b}); }
  { Body b = Body::header(); b.u64(1).entry("w", {1}, 4, "f16"); cases.push_back({"dtype against precision", b}); }
  { Body b = Body::header(); b.u64(1).entry("w", {1}, 4, "q8"); cases.push_back({"unknown dtype", b}); }
  { Body b = Body::header(); b.u64(2).entry("w", {0}, 0).entry("w", {0}, 0); cases.push_back({"duplicate path", b}); }
  { Body b; b.u8(1).str("0.1.0").str("tiny").str("f32").str("i32").u64(0).u64(0); cases.push_back({"unknown precision", b}); }
  for (auto& c : cases) {
    const auto file = wrap(c.body.b);
    expect_fails_fast(c.what, [&] { (void)deserialize_record(file); }, kSmall);
    write_bytes(dir.path / "h.rec", file);
    expect_fails_fast(c.what, [&] { (void)load_record_file(dir.path / "h.rec"); }, kSmall);
    expect_fails_fast(c.what, [&] { (void)inspect_record_file(dir.path / "h.rec"); }, kSmall);
  }
}

TEST(RecordErrors, HostileJsonFailsFast) {
  constexpr uint64_t kSmall = 1 << 20;  // rapidjson's pools and stacks; the bodies are < 64 KiB
  auto json = [](const std::string& s) { return wrap(std::as_bytes(std::span(s)), 1); };
  const std::string head = R"({"engine_version": "0.1.0", "precision": "full", "float_dtype": "f32", "int_dtype": "i32", "scalars": [], )";
  auto entry = [](const std::string& shape, const std::string& bytes, const std::string& values) {
    return R"({"path": "w", "id": 1, "kind": "float", "role": "trainable", "dtype": "f32", "shape": )" + shape +
           R"(, "bytes": )" + bytes + R"(, "values": )" + values + "}";
  };
  EXPECT_NO_THROW((void)deserialize_record(json(head + R"("params": [)" + entry("[2]", "8", "[1, 2]") + "]}")));
  const std::pair<const char*, std::string> cases[] = {
      {"huge shape, no values", head + R"("params": [)" + entry("[1000000000000000]", "4000000000000000", "[]") + "]}"},
      {"shape overflow", head + R"("params": [)" + entry("[4611686018427387904, 16]", "0", "[]") + "]}"},
      {"values != shape", head + R"("params": [)" + entry("[3]", "12", "[1, 2]") + "]}"},
      {"rank 9", head + R"("params": [)" + entry("[1,1,1,1,1,1,1,1,1]", "4", "[1]") + "]}"},
      {"string for number", head + R"("params": [)" + entry("[1]", "4", R"(["x"])") + "]}"},
      {"missing field", R"({"engine_version": "0.1.0"})"},
      {"not an object", "[1, 2, 3]"},
      {"not json", "{\"engine_version\": "},
      {"deep nesting", std::string(60000, '[') + std::string(60000, ']')},
      {"trailing value", head + R"("params": []} {})"},
  };
  for (const auto& [what, body] : cases)
    expect_fails_fast(what, [&] { (void)deserialize_record(json(body)); }, kSmall + 4 * body.size());
  // Int values that do not fit the stored dtype.
  std::string ints = head;
  ints += R"("params": [{"path": "c", "id": 1, "kind": "int", "role": "buffer", "dtype": "i32", "shape": [1], "bytes": 4, "values": [5000000000]}]})";
  try {
    (void)deserialize_record(json(ints));
    FAIL();
  } catch (const RecordFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("param 'c': value 5000000000"), std::string::npos) << e.what();
  }
}

// Random mutations of valid bodies, re-checksummed so the parser sees them: never a crash, always a RecordError
// or a record, fast and small.
TEST(RecordErrors, FuzzedBodiesWithValidChecksums) {
  std::mt19937_64 rng(1234);
  for (auto kind : {RecorderKind::Binary, RecorderKind::Json}) {
    const auto f = small_file(kind);
    const std::vector<std::byte> body(body_of(f).begin(), body_of(f).end());
    for (int iter = 0; iter < 3000; ++iter) {
      auto b = body;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % b.size();
        switch (rng() % 4) {
          case 0: b[at] = std::byte(rng()); break;
          case 1: b[at] ^= std::byte(1u << (rng() % 8)); break;
          case 2: b.erase(b.begin() + static_cast<std::ptrdiff_t>(at)); break;
          default: b[at] = std::byte{0xff}; break;
        }
      }
      const auto file = wrap(b, static_cast<uint32_t>(kind));
      g_total = 0;
      g_tracking = true;
      const auto t0 = std::chrono::steady_clock::now();
      try {
        (void)deserialize_record(file);
      } catch (const RecordError&) {
      }
      g_tracking = false;
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ASSERT_LT(ms, 100.0) << "iteration " << iter;
      ASSERT_LE(g_total.load(), (1u << 20) + 8 * file.size()) << "iteration " << iter;
    }
  }
}

}  // namespace
}  // namespace ember::records_test

namespace ember::records_test {
namespace {

// A param path holding the bytes e6 00 ff (not UTF-8, with a NUL) used to load and reach terminals raw: now the
// record is refused, the message quotes the path escaped, and saving such a name is refused too.
TEST(RecordErrors, NonUtf8ParamPathIsRefusedAndEscaped) {
  Body b = Body::header();
  b.u64(1).entry(std::string_view("w\xe6\x00\xff", 4), {1}, 4);
  const float v = 1.f;
  b.raw(&v, 4);
  try {
    deserialize_record(wrap(b.b));
    FAIL() << "the record loaded";
  } catch (const RecordFormatError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("param path: the name 'w\\xe6\\x00\\xff' is not valid UTF-8"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\xe6'), std::string::npos);
  }
  Body esc = Body::header();
  esc.u64(1).entry("w\x1b]0;pwned\x07", {1}, 4);
  esc.raw(&v, 4);
  EXPECT_THROW(deserialize_record(wrap(esc.b)), RecordFormatError);
  Record r;
  r.params[std::string("w\xe6\x00\xff", 4)] = {1, ParamKind::Float, ParamRole::Trainable,
                                               TensorData::from_vec<float>({1.f}, {1})};
  EXPECT_THROW(DefaultFileRecorder{}.to_bytes(r), RecordFormatError);
}

}  // namespace
}  // namespace ember::records_test
