// issue 13 from C: safetensors files as records, and PyTorch state_dicts (tests/reference/torch_*.safetensors,
// made by gen_torch_safetensors.py with PyTorch 1.13) loaded through the name map into both kinds of C modules,
// compared with PyTorch's outputs; the inverse map; hostile files as EMBER_ERR_RECORD with escaped names.
#include <filesystem>

#include "records/safetensors.hpp"
#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

const std::filesystem::path kSource = EMBER_TEST_SOURCE_DIR;

std::string fixture(const char* name) { return (kSource / "tests/reference" / name).string(); }

// PyTorch's inputs and outputs (read with the C++ reader: this test is about the C functions that use them).
ember::TensorData io(const std::string& key) {
  return ember::SafetensorsFile::open(fixture("torch_io.safetensors")).to_record().params.at(key).data;
}

RecordH read(const std::string& path) {
  ember_record* r = nullptr;
  EXPECT_EQ(ember_record_read_safetensors(path.c_str(), &r), EMBER_OK) << ember_last_error();
  return RecordH(r);
}

TEST(CapiSafetensors, SequentialLoadsAPyTorchMlpAndGivesItsOutputs) {
  const ember_layer_desc layers[] = {linear(5, 8), layer(EMBER_LAYER_RELU), linear(8, 3)};
  ember_module* m = nullptr;
  EMBER_ASSERT_OK(ember_module_sequential(nullptr, layers, 3, &m));
  Module mod(m);
  const RecordH sd = read(fixture("torch_mlp.safetensors"));
  ember_load_report* rep = nullptr;
  EMBER_ASSERT_OK(ember_module_load_torch_state_dict(m, sd.get(), EMBER_LOAD_STRICT, &rep));
  Report report(rep);
  size_t missing = 1, unexpected = 1, mismatched = 1;
  EMBER_ASSERT_OK(ember_load_report_counts(rep, &missing, &unexpected, &mismatched));
  EXPECT_EQ(missing + unexpected + mismatched, 0u);
  const auto in = io("mlp.input"), want = io("mlp.output");
  const Tensor x = f32(in.to_vec<float>(), in.shape.dims);
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_module_forward(m, x.get(), EMBER_MODE_EVAL, &y));
  const Tensor out(y);
  const auto got = floats(y), w = want.to_vec<float>();
  ASSERT_EQ(got.size(), w.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], w[i], 1e-5) << i;
}

TEST(CapiSafetensors, TreeLoadsAPyTorchCnnStateDictAndExportsItBack) {
  ember_module* root = nullptr;
  EMBER_ASSERT_OK(ember_module_create(nullptr, &root));
  Module r(root);
  ember_layer_desc conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 2;
  conv.out_features = 4;
  conv.kernel_size[0] = conv.kernel_size[1] = 3;
  conv.padding[0] = conv.padding[1] = 1;
  ember_layer_desc bn = layer(EMBER_LAYER_BATCH_NORM2D);
  bn.in_features = 4;
  const std::pair<const char*, ember_layer_desc> children[] = {{"conv", conv}, {"bn", bn}, {"fc", linear(100, 3)}};
  for (const auto& [name, desc] : children) {
    ember_module* c = nullptr;
    EMBER_ASSERT_OK(ember_module_layer(nullptr, &desc, &c));
    Module child(c);
    EMBER_ASSERT_OK(ember_module_add_child(root, name, c));
  }
  const RecordH sd = read(fixture("torch_cnn.safetensors"));
  EMBER_ASSERT_OK(ember_module_load_torch_state_dict(root, sd.get(), EMBER_LOAD_STRICT, nullptr));
  // fc.weight arrives transposed: Ember's [100, 3] is PyTorch's [3, 100].
  ember_tensor* w = nullptr;
  EMBER_ASSERT_OK(ember_module_find_param(root, "fc.weight", &w));
  const Tensor fc(w);
  EXPECT_EQ(shape_of(w), (std::vector<int64_t>{100, 3}));
  const auto torch = ember::SafetensorsFile::open(fixture("torch_cnn.safetensors")).to_record();
  const auto tw = torch.params.at("fc.weight").data.to_vec<float>();  // [3, 100]
  const auto ew = floats(w);
  EXPECT_EQ(ew[1 * 3 + 2], tw[2 * 100 + 1]);
  // The inverse map: PyTorch's keys and layouts, through a file.
  ember_record* back = nullptr;
  EMBER_ASSERT_OK(ember_module_to_torch_state_dict(root, &back));
  const RecordH b(back);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ember_capi_st_" + std::to_string(::getpid()) + ".safetensors")).string();
  EMBER_ASSERT_OK(ember_record_write_safetensors(back, path.c_str()));
  const auto again = ember::SafetensorsFile::open(path).to_record();
  std::filesystem::remove(path);
  ASSERT_EQ(again.params.size(), torch.params.size());
  for (const auto& [key, pr] : torch.params) {
    if (key != "bn.num_batches_tracked") {
      EXPECT_EQ(again.params.at(key).data.bytes, pr.data.bytes) << key;
    }
  }
}

TEST(CapiSafetensors, StrictMismatchReportsPartialLoads) {
  const ember_layer_desc layers[] = {linear(5, 8), layer(EMBER_LAYER_RELU), linear(8, 4)};
  ember_module* m = nullptr;
  EMBER_ASSERT_OK(ember_module_sequential(nullptr, layers, 3, &m));
  Module mod(m);
  const RecordH sd = read(fixture("torch_mlp.safetensors"));
  ember_load_report* rep = nullptr;
  EMBER_EXPECT_ERR(ember_module_load_torch_state_dict(m, sd.get(), EMBER_LOAD_STRICT, &rep), EMBER_ERR_RECORD,
                   "layers.2.weight: shape [8, 3] in record, [8, 4] in module");
  Report strict(rep);
  EMBER_ASSERT_OK(ember_module_load_torch_state_dict(m, sd.get(), EMBER_LOAD_PARTIAL, &rep));
  Report partial(rep);
  size_t missing = 0, unexpected = 0, mismatched = 0;
  EMBER_ASSERT_OK(ember_load_report_counts(rep, &missing, &unexpected, &mismatched));
  EXPECT_EQ(mismatched, 2u);
  EXPECT_EQ(missing + unexpected, 0u);
}

TEST(CapiSafetensors, HostileFilesAreRecordErrorsWithEscapedNames) {
  const auto corpus = kSource / "tests/fuzz/safetensors_corpus";
  ember_record* r = nullptr;
  EMBER_EXPECT_ERR(ember_record_read_safetensors((corpus / "hostile_overlap.safetensors").c_str(), &r),
                   EMBER_ERR_RECORD, "overlaps tensor 'x'");
  EMBER_EXPECT_ERR(ember_record_read_safetensors((corpus / "hostile_escape_in_name.safetensors").c_str(), &r),
                   EMBER_ERR_RECORD, "'\\x1b[31mred'");
  EMBER_EXPECT_ERR(ember_record_read_safetensors((corpus / "absent.safetensors").c_str(), &r), EMBER_ERR_IO,
                   "cannot open");
  EXPECT_EQ(r, nullptr);
}

}  // namespace
}  // namespace ember::capi_test
