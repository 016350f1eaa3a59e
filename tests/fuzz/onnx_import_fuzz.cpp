// The ONNX importer fuzzer (libFuzzer; built in the clang + ASan/UBSan build of run_fuzz.sh, run by the
// onnx_import_fuzz test): every input is a model for OnnxModel::from_bytes (onnx/model.hpp) — hostile protobuf
// sizes, external-data offsets and paths, cyclic graphs, absurd shapes. Rules:
//   - a refused model fails with an OnnxError (never another exception, a crash or a hang);
//   - an accepted one holds no more parameter bytes than its input could describe (8 per input byte: a varint of
//     one byte can stand for an int64 element);
//   - an accepted one whose inputs all have small static shapes runs forward on zeros, failing only with Ember's
//     typed errors.
// Seeds: tests/fuzz/onnx_corpus (gen_corpus.py), whose hostile files are also gtest cases (tests/onnx/parse_test.cpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "onnx/model.hpp"

namespace {

[[noreturn]] void broken(const char* rule, const char* what = "") {
  std::fprintf(stderr, "onnx_import_fuzz: %s %s\n", rule, what);
  std::abort();
}

constexpr int64_t kMaxForwardElements = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  using namespace ember::onnx_import;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  ParseLimits limits;  // small, so that an accepted tensor never makes a slow iteration
  limits.max_tensor_bytes = uint64_t{1} << 20;
  limits.max_nodes = 4096;
  std::optional<OnnxModel> m;
  try {
    // No model directory: external data must be refused as such, whatever its location says.
    m.emplace(OnnxModel::from_bytes(bytes, capi::cpu_device(), {}, limits));
  } catch (const OnnxError&) {
    return 0;
  } catch (const std::exception& e) {
    broken("from_bytes threw something other than an OnnxError:", e.what());
  }
  uint64_t param_bytes = 0;
  for (const auto& [name, t] : m->params()) param_bytes += capi::to_data(t).bytes.size();
  if (param_bytes > 8 * uint64_t{size} + 64) broken("the params hold more bytes than the input could describe");

  std::vector<DynTensor> inputs;
  for (const ValueInfo& v : m->inputs()) {
    if (!v.dtype || !v.dims || !v.non_tensor_kind.empty()) return 0;
    int64_t n = 1;
    for (int64_t d : *v.dims) {
      if (d < 0 || d > kMaxForwardElements) return 0;
      n *= d;
      if (n > kMaxForwardElements) return 0;
    }
    try {
      inputs.push_back(capi::full(capi::cpu_device(), *v.dtype, Shape{std::vector<int64_t>(*v.dims)}, 0.0));
    } catch (const Error&) {
      return 0;  // a rank Ember has no tensors of
    }
  }
  try {
    (void)m->forward(inputs);
  } catch (const Error&) {
    // Ember's typed errors (OnnxError, ShapeError, UnsupportedError, ...) are how a model that cannot run fails.
  } catch (const std::exception& e) {
    broken("forward threw an untyped exception:", e.what());
  }
  return 0;
}
