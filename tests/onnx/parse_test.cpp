// The protobuf parser on well-formed and hostile files (onnx/parse.hpp): models are built here with ONNX's own
// protobuf classes, serialized, and read back through OnnxModel::from_bytes / load. Every hostile file must end in
// a clear OnnxError, without a crash and without any allocation near the sizes it declares (a counting operator new
// checks the largest single allocation while the parser runs).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>

#include "onnx/model.hpp"

namespace {
std::atomic<bool> g_track{false};
std::atomic<std::size_t> g_largest{0};
}  // namespace

// Counts the largest single allocation while g_track is set (the hostile-size tests). noinline: GCC would otherwise
// see malloc / free pairs across inlined new / delete and warn (-Wmismatched-new-delete).
[[gnu::noinline]] void* operator new(std::size_t n) {
  if (g_track.load(std::memory_order_relaxed)) {
    std::size_t prev = g_largest.load(std::memory_order_relaxed);
    while (n > prev && !g_largest.compare_exchange_weak(prev, n)) {
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace ember::onnx_import {
namespace {

namespace fs = std::filesystem;

void add_value_info(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                    int elem_type, const std::vector<std::string>& dims) {
  auto* v = list->Add();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                          std::vector<std::string> outs, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

// x [batch, 2] -> y = Identity(x); w2 = Identity(w) with w = [1.5, -2] (raw_data); k = Identity(c), c int64 typed.
onnx::ModelProto small_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("small");
  add_value_info(g->mutable_input(), "x", onnx::TensorProto_DataType_FLOAT, {"batch", "2"});
  add_value_info(g->mutable_output(), "y", onnx::TensorProto_DataType_FLOAT, {"batch", "2"});
  add_value_info(g->mutable_output(), "w2", onnx::TensorProto_DataType_FLOAT, {"2"});
  add_value_info(g->mutable_output(), "k", onnx::TensorProto_DataType_INT64, {"3"});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto_DataType_FLOAT);
  w->add_dims(2);
  const float wv[2] = {1.5f, -2.f};
  w->set_raw_data(std::string(reinterpret_cast<const char*>(wv), sizeof wv));
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto_DataType_INT64);
  c->add_dims(3);
  for (int64_t v : {4, -5, 6}) c->add_int64_data(v);
  add_node(g, "Identity", {"w"}, {"w2"});
  add_node(g, "Identity", {"x"}, {"y"});
  add_node(g, "Identity", {"c"}, {"k"});
  return m;
}

std::vector<std::byte> bytes_of(const onnx::ModelProto& m) {
  const std::string s = m.SerializeAsString();
  return {reinterpret_cast<const std::byte*>(s.data()), reinterpret_cast<const std::byte*>(s.data()) + s.size()};
}

OnnxModel load_bytes(const onnx::ModelProto& m, const fs::path& dir = {}) {
  return OnnxModel::from_bytes(bytes_of(m), capi::cpu_device(), dir);
}

// The OnnxError message of loading `m`, with the largest allocation made meanwhile in `largest`.
std::string load_error(const onnx::ModelProto& m, std::size_t* largest = nullptr, const fs::path& dir = {}) {
  const std::vector<std::byte> b = bytes_of(m);
  g_largest = 0;
  g_track = true;
  std::string msg;
  try {
    OnnxModel::from_bytes(b, capi::cpu_device(), dir);
  } catch (const OnnxError& e) {
    msg = e.what();
  } catch (const std::exception& e) {
    msg = std::string("not an OnnxError: ") + e.what();
  }
  g_track = false;
  if (largest) *largest = g_largest;
  return msg;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "message: " << (haystack)

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("ember_onnx_parse_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

TEST(OnnxParse, ReadsValueInfosInitializersAndRuns) {
  OnnxModel m = load_bytes(small_model());
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].name, "x");
  EXPECT_EQ(m.inputs()[0].dtype, DType::F32);
  EXPECT_EQ(*m.inputs()[0].dims, (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(m.inputs()[0].dim_params[0], "batch");
  ASSERT_EQ(m.outputs().size(), 3u);
  ASSERT_EQ(m.params().size(), 2u);
  EXPECT_EQ(m.params()[0].first, "w");
  EXPECT_TRUE(capi::requires_grad(m.params()[0].second));
  EXPECT_FALSE(capi::requires_grad(m.params()[1].second));
  const DynTensor x = capi::from_data(capi::cpu_device(), TensorData::from_vec<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2}));
  const auto out = m.forward({x});
  EXPECT_EQ(capi::to_data(out[0]).to_vec<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(capi::to_data(out[1]).to_vec<float>(), (std::vector<float>{1.5f, -2.f}));
  EXPECT_EQ(capi::to_data(out[2]).to_vec<int64_t>(), (std::vector<int64_t>{4, -5, 6}));
}

TEST(OnnxParse, GarbageAndTruncatedFilesAreOnnxErrors) {
  const std::vector<std::byte> junk(64, std::byte{0xff});
  EXPECT_THROW(OnnxModel::from_bytes(junk, capi::cpu_device()), OnnxError);
  std::vector<std::byte> b = bytes_of(small_model());
  b.resize(b.size() / 2);
  EXPECT_THROW(OnnxModel::from_bytes(b, capi::cpu_device()), OnnxError);
  EXPECT_THROW(OnnxModel::from_bytes({}, capi::cpu_device()), OnnxError);  // no graph
}

TEST(OnnxParse, HugeDeclaredSizesAreRefusedWithoutAllocating) {
  std::size_t largest = 0;
  {  // 2^40 x 2^40 elements: the element count overflows any limit
    onnx::ModelProto m = small_model();
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_dims();
    w->add_dims(int64_t{1} << 40);
    w->add_dims(int64_t{1} << 40);
    const std::string msg = load_error(m, &largest);
    EXPECT_CONTAINS(msg, "initializer 'w'");
    EXPECT_CONTAINS(msg, "limit");
    EXPECT_LT(largest, std::size_t{1} << 20);
  }
  {  // 10^8 floats declared (400 MB, under the limit), 8 bytes of raw_data: refused before the 400 MB exist
    onnx::ModelProto m = small_model();
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->set_dims(0, 100000000);
    const std::string msg = load_error(m, &largest);
    EXPECT_CONTAINS(msg, "raw_data has 8 bytes");
    EXPECT_LT(largest, std::size_t{1} << 20);
  }
  {  // the same through the typed field
    onnx::ModelProto m = small_model();
    m.mutable_graph()->mutable_initializer(1)->set_dims(0, 100000000);
    const std::string msg = load_error(m, &largest);
    EXPECT_CONTAINS(msg, "3 stored values");
    EXPECT_LT(largest, std::size_t{1} << 20);
  }
  {  // negative dim, rank 9
    onnx::ModelProto m = small_model();
    m.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
    EXPECT_CONTAINS(load_error(m), "negative dim");
    onnx::ModelProto r = small_model();
    for (int i = 0; i < 8; ++i) r.mutable_graph()->mutable_initializer(0)->add_dims(1);
    EXPECT_CONTAINS(load_error(r), "rank 9");
  }
  {  // a tighter limit from the caller
    ParseLimits limits;
    limits.max_tensor_bytes = 4;
    EXPECT_THROW(OnnxModel::from_bytes(bytes_of(small_model()), capi::cpu_device(), {}, limits), OnnxError);
    limits = ParseLimits{};
    limits.max_file_bytes = 16;
    EXPECT_THROW(OnnxModel::from_bytes(bytes_of(small_model()), capi::cpu_device(), {}, limits), OnnxError);
  }
}

TEST(OnnxParse, UnsupportedDTypesNameTheType) {
  onnx::ModelProto m = small_model();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_data_type(onnx::TensorProto_DataType_INT8);
  try {
    load_bytes(m);
    FAIL() << "int8 accepted";
  } catch (const UnsupportedDTypeError& e) {
    EXPECT_CONTAINS(e.what(), "int8");
  }
  w->set_data_type(977);
  EXPECT_CONTAINS(load_error(m), "element type 977");
  onnx::ModelProto in = small_model();
  in.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto_DataType_BFLOAT16);
  OnnxModel loaded = load_bytes(in);  // an input of a dtype Ember lacks is declared, not refused at load
  EXPECT_FALSE(loaded.inputs()[0].dtype.has_value());
}

TEST(OnnxParse, GraphErrorsAreReported) {
  {  // a cycle: a = Identity(b), b = Identity(a)
    onnx::ModelProto m = small_model();
    add_node(m.mutable_graph(), "Identity", {"b"}, {"a"});
    add_node(m.mutable_graph(), "Identity", {"a"}, {"b"});
    EXPECT_CONTAINS(load_error(m), "cycle");
  }
  {  // an input nobody defines
    onnx::ModelProto m = small_model();
    add_node(m.mutable_graph(), "Identity", {"ghost"}, {"z"}, "haunted");
    const std::string msg = load_error(m);
    EXPECT_CONTAINS(msg, "'ghost'");
    EXPECT_CONTAINS(msg, "'haunted'");
  }
  {  // an output defined twice
    onnx::ModelProto m = small_model();
    add_node(m.mutable_graph(), "Identity", {"x"}, {"y"});
    EXPECT_CONTAINS(load_error(m), "defined twice");
  }
  {  // every unsupported operator at once, with node and opset
    onnx::ModelProto m = small_model();
    add_node(m.mutable_graph(), "FrobnicateA", {"x"}, {"fa"}, "first");
    add_node(m.mutable_graph(), "FrobnicateB", {"fa"}, {"fb"}, "second");
    add_node(m.mutable_graph(), "Relu", {"x"}, {"fc"})->set_domain("com.example");
    try {
      load_bytes(m);
      FAIL() << "unsupported operators accepted";
    } catch (const UnsupportedOperatorError& e) {
      EXPECT_CONTAINS(e.what(), "3 node(s)");
      EXPECT_CONTAINS(e.what(), "'FrobnicateA' node 'first'");
      EXPECT_CONTAINS(e.what(), "'FrobnicateB' node 'second'");
      EXPECT_CONTAINS(e.what(), "at opset 13");
      EXPECT_CONTAINS(e.what(), "'com.example'");
    }
  }
  {  // subgraphs nested past the limit
    onnx::ModelProto m = small_model();
    onnx::GraphProto* g = m.mutable_graph();
    for (int i = 0; i < 40; ++i) {
      auto* n = add_node(g, "If", {"x"}, {"o" + std::to_string(i)});
      auto* a = n->add_attribute();
      a->set_name("then_branch");
      a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
      g = a->mutable_g();
    }
    EXPECT_CONTAINS(load_error(m), "nested deeper");
  }
}

class OnnxExternalData : public ::testing::Test {
 protected:
  // The model of small_model() with w stored in `location` at `offset` (`length` bytes when >= 0).
  static onnx::ModelProto with_external(const std::string& location, int64_t offset, int64_t length) {
    onnx::ModelProto m = small_model();
    auto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    if (length >= 0) add("length", std::to_string(length));
    return m;
  }
};

TEST_F(OnnxExternalData, ReadsInsideTheModelDirectory) {
  const fs::path dir = temp_dir("ok");
  const float wv[2] = {7.f, 8.f};
  write_file(dir / "weights.bin", "pad!" + std::string(reinterpret_cast<const char*>(wv), sizeof wv) + "tail");
  OnnxModel m = load_bytes(with_external("weights.bin", 4, 8), dir);
  EXPECT_EQ(capi::to_data(m.params()[0].second).to_vec<float>(), (std::vector<float>{7.f, 8.f}));
  // the same through a model file in that directory
  write_file(dir / "model.onnx", with_external("weights.bin", 4, 8).SerializeAsString());
  OnnxModel f = OnnxModel::load(dir / "model.onnx", capi::cpu_device());
  EXPECT_EQ(capi::to_data(f.params()[0].second).to_vec<float>(), (std::vector<float>{7.f, 8.f}));
}

TEST_F(OnnxExternalData, HostileLocationsAndRangesAreRefused) {
  const fs::path dir = temp_dir("hostile");
  fs::create_directories(dir / "model");
  write_file(dir / "model" / "w.bin", std::string(8, 'a'));
  write_file(dir / "secret.bin", std::string(8, 's'));
  const fs::path mdir = dir / "model";
  std::size_t largest = 0;
  EXPECT_CONTAINS(load_error(with_external("w.bin", 4, 8), &largest, mdir), "past the end");
  EXPECT_CONTAINS(load_error(with_external("w.bin", 9, -1), &largest, mdir), "offset 9 is past the end");
  EXPECT_CONTAINS(load_error(with_external("w.bin", 0, 4), &largest, mdir), "needs 8");
  EXPECT_CONTAINS(load_error(with_external("w.bin", 0, int64_t{1} << 40), &largest, mdir), "past the end");
  EXPECT_LT(largest, std::size_t{1} << 20);
  EXPECT_CONTAINS(load_error(with_external("../secret.bin", 0, 8), nullptr, mdir), "(..)");
  EXPECT_CONTAINS(load_error(with_external("sub/../../secret.bin", 0, 8), nullptr, mdir), "(..)");
  EXPECT_CONTAINS(load_error(with_external((dir / "secret.bin").string(), 0, 8), nullptr, mdir), "absolute");
  fs::create_symlink(dir / "secret.bin", mdir / "link.bin");
  EXPECT_CONTAINS(load_error(with_external("link.bin", 0, 8), nullptr, mdir), "outside the model's directory");
  EXPECT_CONTAINS(load_error(with_external("missing.bin", 0, 8), nullptr, mdir), "cannot be opened");
  EXPECT_CONTAINS(load_error(with_external("w.bin", 0, 8)), "without a directory");  // from_bytes, no dir
  onnx::ModelProto bad_offset = with_external("w.bin", 0, 8);
  bad_offset.mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("-1");
  EXPECT_CONTAINS(load_error(bad_offset, nullptr, mdir), "is not a size");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember::onnx_import
