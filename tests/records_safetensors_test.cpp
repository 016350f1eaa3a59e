// safetensors files: round trips, the seed corpus of the parser fuzzer (every hostile file fails fast with its own
// clear error, allocating little), and PyTorch state_dicts loaded through the name map, compared with PyTorch's
// outputs (tests/reference/gen_torch_safetensors.py made the fixtures).
#include <chrono>
#include <set>

#include "records/safetensors.hpp"
#include "records/tensor_name.hpp"
#include "records/torch_names.hpp"
#include "tests/support/records_support.hpp"

namespace ember::records_test {
namespace {

const fs::path kSource = EMBER_TEST_SOURCE_DIR;
const fs::path kCorpus = kSource / "tests/fuzz/safetensors_corpus";
const fs::path kReference = kSource / "tests/reference";

std::string message_of(const fs::path& p) {
  try {
    SafetensorsFile::open(p).to_record();
  } catch (const RecordError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Safetensors, RoundTripEveryDtypeWithMetadataAndScalars) {
  TempDir dir;
  Record r;
  r.params["w"] = {0, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec<float>({1.5f, -2.f, 0.25f}, {3})};
  r.params["d"] = {0, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec<double>({1e-300, 3.0}, {1, 2})};
  r.params["h"] = {0, ParamKind::Float, ParamRole::Trainable,
                   TensorData::from_vec<float>({0.5f, 2.f}, {2}).convert(DType::F16)};
  r.params["n"] = {0, ParamKind::Int, ParamRole::Trainable, TensorData::from_vec<int64_t>({-7, 1LL << 40}, {2})};
  r.params["i"] = {0, ParamKind::Int, ParamRole::Trainable, TensorData::from_vec<int32_t>({3}, {})};
  r.params["m"] = {0, ParamKind::Bool, ParamRole::Trainable, TensorData::from_vec<bool>({true, false}, {2})};
  r.params["u"] = {0, ParamKind::Int, ParamRole::Trainable, TensorData::from_vec<uint8_t>({255, 0}, {2})};
  r.params["e"] = {0, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec<float>({}, {0, 4})};
  r.scalars["lr"] = 0.1;
  const fs::path p = dir.path / "x.safetensors";
  write_safetensors(r, p, {{"format", "pt"}});
  const auto f = SafetensorsFile::open(p);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.find("n")->stored_dtype, "I64");
  const Record back = f.to_record();
  ASSERT_EQ(back.params.size(), r.params.size());
  for (const auto& [name, pr] : r.params) {
    SCOPED_TRACE(name);
    const auto& b = back.params.at(name);
    EXPECT_EQ(b.kind, pr.kind);
    EXPECT_EQ(b.data.dtype, pr.data.dtype);
    EXPECT_EQ(b.data.shape, pr.data.shape);
    EXPECT_EQ(b.data.bytes, pr.data.bytes);
  }
  EXPECT_EQ(back.scalars.at("lr"), 0.1);
  std::set<uint64_t> ids;  // safetensors has no ids: each tensor gets a fresh one, so load_record takes them
  for (const auto& [name, pr] : back.params) EXPECT_TRUE(pr.id != 0 && ids.insert(pr.id).second) << name;
  EXPECT_EQ(read_bytes(p), safetensors_bytes(r, {{"format", "pt"}}));  // file and memory writers agree
  const auto bytes = read_bytes(p);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);  // the header is padded to a multiple of 8, as the reference writer does
}

// A module saved under its own (Ember) names loads back with plain load_record: no name map involved.
TEST(Safetensors, EmberNamedRecordsLoadWithLoadRecord) {
  TempDir dir;
  const auto net = valued_net();
  write_safetensors(into_record(net), dir.path / "net.safetensors");
  int calls = 0;
  const auto back = load_record(fresh_net(&calls), SafetensorsFile::open(dir.path / "net.safetensors").to_record());
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(into_record(back).params.at("weight").data.bytes, into_record(net).params.at("weight").data.bytes);
  EXPECT_EQ(into_record(back).params.at("mask").data.bytes, into_record(net).params.at("mask").data.bytes);
}

TEST(Safetensors, RawViewsTheMappingAndBf16Widens) {
  const auto f = SafetensorsFile::open(kCorpus / "valid_dtypes.safetensors");
  const auto* e = f.find("c.bf16");
  ASSERT_NE(e, nullptr);
  const auto raw = f.raw(*e);  // bytes 12..15 of the buffer: 0c 0d 0e 0f
  ASSERT_EQ(raw.size(), 4u);
  EXPECT_EQ(static_cast<int>(raw[0]), 12);
  const TensorData t = f.tensor(*e);
  EXPECT_EQ(t.dtype, DType::F32);
  uint32_t bits = 0;
  std::memcpy(&bits, t.bytes.data(), 4);
  EXPECT_EQ(bits, 0x0d0c0000u);  // the bf16 0x0d0c as the top half of an f32
  // The mapping outlives the SafetensorsFile it came from when a copy holds it.
  std::span<const std::byte> view;
  {
    const auto g = SafetensorsFile::open(kCorpus / "valid_dtypes.safetensors");
    const SafetensorsFile keep = g;
    view = keep.raw(*keep.find("f.u8"));
    EXPECT_EQ(static_cast<int>(view[0]), 26);
  }
}

TEST(Safetensors, ValidSeedsLoad) {
  for (const char* name : {"valid_dtypes", "valid_empty_tensor", "valid_no_tensor"}) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(SafetensorsFile::open(kCorpus / (std::string(name) + ".safetensors")).to_record());
  }
}

// Every hostile seed: a RecordFormatError naming the file and saying what is wrong, within 100 ms, allocating at
// most a small multiple of the file (the JSON DOM) plus 256 KiB, and never printing a raw control byte.
TEST(Safetensors, HostileSeedsFailFastWithClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hostile_header_huge", "exceeds the limit"},
      {"hostile_header_past_end", "runs past the end of the file"},
      {"hostile_offsets_past_end", "tensor 'x': data_offsets [0, 16] run past the end of the 8-byte buffer"},
      {"hostile_overlap", "tensor 'y' (bytes [4, 12]) overlaps tensor 'x' (bytes [0, 8])"},
      {"hostile_gap", "bytes [4, 8] of the buffer belong to no tensor"},
      {"hostile_bad_dtype", "tensor 'x': dtype 'Q7' is not one Ember reads"},
      {"hostile_shape_overflow", "overflows"},
      {"hostile_shape_mismatch", "shape [3] of F32 is 12 bytes, data_offsets [0, 8] hold 8"},
      {"hostile_not_json", "not valid JSON"},
      {"hostile_deep_nesting", "tensor 'x': the entry is not an object"},
      {"hostile_escape_in_name", "holds a control character (U+001B"},
      {"hostile_invalid_utf8_name", "not valid JSON"},
      {"hostile_duplicate_name", "tensor 'x' appears twice"},
      {"hostile_duplicate_field", "tensor 'x': shape appears twice"},
  };
  for (const auto& [name, want] : cases) {
    SCOPED_TRACE(name);
    const fs::path p = kCorpus / (name + ".safetensors");
    const uint64_t size = fs::file_size(p);
    g_total = 0;
    g_largest = 0;
    const auto t0 = std::chrono::steady_clock::now();
    g_tracking = true;
    const std::string msg = message_of(p);
    g_tracking = false;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_NE(msg.find("safetensors " + p.string() + ": "), std::string::npos) << msg;
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
    EXPECT_LT(ms, 100.0);
    EXPECT_LE(g_total.load(), 64 * size + (256 << 10)) << "largest block " << g_largest.load();
    for (char c : msg) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n') << msg;
  }
  // The control character is quoted escaped.
  EXPECT_NE(message_of(kCorpus / "hostile_escape_in_name.safetensors").find("'\\x1b[31mred'"), std::string::npos);
}

TEST(Safetensors, TruncationsAndBitFlipsNeverCrash) {
  TempDir dir;
  const auto good = read_bytes(kCorpus / "valid_dtypes.safetensors");
  const fs::path p = dir.path / "m.safetensors";
  std::size_t errors = 0;
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    write_bytes(p, std::span<const std::byte>(good).first(cut));
    errors += message_of(p) != "(no error)";
  }
  EXPECT_EQ(errors, good.size());  // every strict prefix is refused
  for (std::size_t i = 0; i < good.size(); ++i) {
    auto bad = good;
    bad[i] ^= std::byte{0x41};
    write_bytes(p, bad);
    (void)message_of(p);  // an error or a (differently valued) record; never a crash
  }
}

TEST(Safetensors, WriterRefusesBadNamesBeforeTouchingTheFile) {
  TempDir dir;
  Record r;
  r.params["ok\x1b[2J"] = {0, ParamKind::Float, ParamRole::Trainable, TensorData::from_vec<float>({1.f}, {1})};
  const fs::path p = dir.path / "x.safetensors";
  try {
    write_safetensors(r, p);
    FAIL() << "no error";
  } catch (const RecordFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("'ok\\x1b[2J'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 0);  // no temporary left
}

TEST(TensorNames, ValidationAndEscaping) {
  EXPECT_EQ(tensor_name_problem("layers.0.weight"), "");
  EXPECT_EQ(tensor_name_problem("poids.é.重み"), "");
  EXPECT_NE(tensor_name_problem(""), "");
  EXPECT_NE(tensor_name_problem(std::string("a\xe6\x00\xff", 4)), "");
  EXPECT_NE(tensor_name_problem("\xc0\xaf"), "");          // overlong '/'
  EXPECT_NE(tensor_name_problem("\xed\xa0\x80"), "");      // a surrogate
  EXPECT_NE(tensor_name_problem("a\tb"), "");
  EXPECT_NE(tensor_name_problem("a\xc2\x85"), "");         // NEL, a C1 control
  EXPECT_EQ(escape_file_text(std::string("a\xe6\x00\xff\\", 5)), "a\\xe6\\x00\\xff\\\\");
  EXPECT_EQ(escape_file_text("\x1b[0m é"), "\\x1b[0m é");
}

// ---------------------------------------------------------------- PyTorch state_dicts
template <class Bk>
struct TinyCnn {
  BOOST_HANA_DEFINE_STRUCT(TinyCnn, (nn::Conv2d<Bk>, conv), (nn::BatchNorm2d<Bk>, bn), (nn::Linear<Bk>, fc));
  Tensor<Bk, 2> forward(const Tensor<Bk, 4>& x) const {
    const auto h = bn.forward(conv.forward(x)).relu();
    return fc.forward(h.template reshape<2>(std::array<int64_t, 2>{x.dims()[0], h.numel() / x.dims()[0]}));
  }
};
template <class Bk>
struct TinyEmb {
  BOOST_HANA_DEFINE_STRUCT(TinyEmb, (nn::Embedding<Bk>, emb), (nn::LayerNorm<Bk>, norm), (nn::Linear<Bk>, head));
  Tensor<Bk, 3> forward(const Tensor<Bk, 2, Int>& idx) const { return head.forward(norm.forward(emb.forward(idx))); }
};

auto make_mlp() {
  return nn::sequential<B>(nn::LinearConfig{5, 8}.init<B>(), nn::ReLU{}, nn::LinearConfig{8, 3}.init<B>());
}
TinyCnn<B> make_cnn() {
  return {nn::Conv2dConfig{.in_channels = 2, .out_channels = 4, .kernel_size = {3, 3}, .padding = {1, 1}}.init<B>(),
          nn::BatchNorm2dConfig{4}.init<B>(), nn::LinearConfig{100, 3}.init<B>()};
}
TinyEmb<B> make_emb() {
  return {nn::EmbeddingConfig{10, 6}.init<B>(), nn::LayerNormConfig{6}.init<B>(), nn::LinearConfig{6, 6}.init<B>()};
}

Record fixture(const char* name) { return SafetensorsFile::open(kReference / name).to_record(); }

template <std::size_t D>
void expect_close(const Tensor<B, D>& got, const TensorData& want) {
  const TensorData gd = got.into_data();
  ASSERT_EQ(gd.shape, want.shape);
  const auto g = gd.to_vec<float>(), w = want.to_vec<float>();
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-5) << "element " << i;
}

TEST(TorchStateDict, GoldenOutputsMatchPyTorch) {
  const Record io = fixture("torch_io.safetensors");
  auto in = [&](const char* k) { return io.params.at(k).data; };
  {
    const auto mlp = load_torch_state_dict(make_mlp(), fixture("torch_mlp.safetensors"));
    expect_close(mlp.forward(Tensor<B, 2>::from_data(in("mlp.input"))), in("mlp.output"));
  }
  {
    std::vector<std::string> dropped;
    LoadReport rep;
    const auto cnn =
        eval(load_torch_state_dict(make_cnn(), fixture("torch_cnn.safetensors"), LoadMode::Strict, &rep, &dropped));
    EXPECT_TRUE(rep.ok()) << rep.to_string();
    EXPECT_EQ(dropped, std::vector<std::string>{"bn.num_batches_tracked"});
    expect_close(cnn.forward(Tensor<B, 4>::from_data(in("cnn.input"))), in("cnn.output"));
  }
  {
    const auto emb = load_torch_state_dict(make_emb(), fixture("torch_emb.safetensors"));
    expect_close(emb.forward(Tensor<B, 2, Int>::from_data(in("emb.input"))), in("emb.output"));
  }
}

TEST(TorchStateDict, ExportIsWhatPyTorchSaved) {
  const Record torch = fixture("torch_cnn.safetensors");
  const auto cnn = load_torch_state_dict(make_cnn(), torch);
  const Record out = torch_state_dict(cnn);
  ASSERT_EQ(out.params.size(), torch.params.size());
  for (const auto& [key, pr] : torch.params) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(out.params.count(key));
    EXPECT_EQ(out.params.at(key).data.shape, pr.data.shape);
    if (key != "bn.num_batches_tracked") {
      EXPECT_EQ(out.params.at(key).data.bytes, pr.data.bytes);
    }
  }
  // And it loads back, through a file, to the same module.
  TempDir dir;
  write_safetensors(out, dir.path / "cnn.safetensors");
  const auto again = load_torch_state_dict(make_cnn(), SafetensorsFile::open(dir.path / "cnn.safetensors").to_record());
  EXPECT_EQ(into_record(again).params.at("fc.weight").data.bytes, into_record(cnn).params.at("fc.weight").data.bytes);
}

TEST(TorchStateDict, StrictRefusesWithAReportPartialLoadsWhatMatches) {
  const Record torch = fixture("torch_cnn.safetensors");
  Record fewer = torch;
  fewer.params.erase("fc.bias");
  fewer.params["extra.weight"] = torch.params.at("fc.bias");
  fewer.params["conv.weight"].data = TensorData::from_vec<float>({1.f}, {1});
  try {
    (void)load_torch_state_dict(make_cnn(), fewer);
    FAIL() << "strict load accepted a mismatching state_dict";
  } catch (const LoadError& e) {
    EXPECT_EQ(e.report.missing, std::vector<std::string>{"fc.bias"});
    EXPECT_EQ(e.report.unexpected, std::vector<std::string>{"extra.weight"});
    ASSERT_EQ(e.report.mismatched.size(), 1u);
    EXPECT_EQ(e.report.mismatched[0].rfind("conv.weight: shape [1] in record", 0), 0u) << e.report.mismatched[0];
  }
  LoadReport rep;
  const auto before = make_cnn();
  const auto cnn = load_torch_state_dict(before, fewer, LoadMode::Partial, &rep);
  EXPECT_EQ(rep.missing.size() + rep.unexpected.size() + rep.mismatched.size(), 3u);
  EXPECT_EQ(into_record(cnn).params.at("bn.gamma").data.bytes, torch.params.at("bn.weight").data.bytes);
  EXPECT_EQ(into_record(cnn).params.at("conv.weight").data.bytes,
            into_record(before).params.at("conv.weight").data.bytes);
}

TEST(TorchStateDict, TheMapKnowsTheLayoutNotTheShape) {
  const TorchNameMap map = torch_name_map(make_emb());
  for (const TorchName& n : map.names) {
    SCOPED_TRACE(n.ember);
    EXPECT_EQ(n.transpose, n.ember == "head.weight");  // square [6, 6]: only the type says Linear
  }
  const TorchNameMap mlp = torch_name_map(make_mlp());
  ASSERT_EQ(mlp.names.size(), 4u);
  EXPECT_EQ(mlp.names[0].ember, "layers.0.weight");
  EXPECT_EQ(mlp.names[0].torch, "0.weight");
}

}  // namespace
}  // namespace ember::records_test
