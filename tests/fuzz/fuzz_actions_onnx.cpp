// The fuzzer's ONNX rows (issue 19, h-onnx-surface; declared in fuzz_actions.hpp, placed in kActions by
// fuzz_actions.cpp): ember_onnx_load_memory on a small valid model (two inputs, two outputs, an initializer) with a
// few bytes changed, or on bytes taken from the input as they are; ember_onnx_load on the harness's paths (records,
// a directory, missing files); forward with any tensors, counts and modes; names, infos and the operator list with
// any index and buffer. Whatever they get, they must report, never crash or read past a buffer.
#include <vector>

#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {
namespace {

// tests/c_api/onnx_models/two_io.onnx: sum = a + b, prod = a * b * scale, a and b float [2, 3].
const unsigned char kTwoIo[] = {
  0x08, 0x08, 0x3a, 0xcc, 0x01, 0x0a, 0x15, 0x0a, 0x01, 0x61, 0x0a, 0x01,
  0x62, 0x12, 0x03, 0x73, 0x75, 0x6d, 0x1a, 0x03, 0x61, 0x64, 0x64, 0x22,
  0x03, 0x41, 0x64, 0x64, 0x0a, 0x14, 0x0a, 0x01, 0x61, 0x0a, 0x01, 0x62,
  0x12, 0x02, 0x61, 0x62, 0x1a, 0x03, 0x6d, 0x75, 0x6c, 0x22, 0x03, 0x4d,
  0x75, 0x6c, 0x0a, 0x21, 0x0a, 0x02, 0x61, 0x62, 0x0a, 0x05, 0x73, 0x63,
  0x61, 0x6c, 0x65, 0x12, 0x04, 0x70, 0x72, 0x6f, 0x64, 0x1a, 0x09, 0x73,
  0x63, 0x61, 0x6c, 0x65, 0x5f, 0x6d, 0x75, 0x6c, 0x22, 0x03, 0x4d, 0x75,
  0x6c, 0x12, 0x06, 0x74, 0x77, 0x6f, 0x5f, 0x69, 0x6f, 0x2a, 0x19, 0x08,
  0x03, 0x10, 0x01, 0x42, 0x05, 0x73, 0x63, 0x61, 0x6c, 0x65, 0x4a, 0x0c,
  0x00, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x80, 0xbf, 0x00, 0x00, 0x00, 0x40,
  0x5a, 0x13, 0x0a, 0x01, 0x61, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01, 0x12,
  0x08, 0x0a, 0x02, 0x08, 0x02, 0x0a, 0x02, 0x08, 0x03, 0x5a, 0x13, 0x0a,
  0x01, 0x62, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01, 0x12, 0x08, 0x0a, 0x02,
  0x08, 0x02, 0x0a, 0x02, 0x08, 0x03, 0x62, 0x15, 0x0a, 0x03, 0x73, 0x75,
  0x6d, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01, 0x12, 0x08, 0x0a, 0x02, 0x08,
  0x02, 0x0a, 0x02, 0x08, 0x03, 0x62, 0x16, 0x0a, 0x04, 0x70, 0x72, 0x6f,
  0x64, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01, 0x12, 0x08, 0x0a, 0x02, 0x08,
  0x02, 0x0a, 0x02, 0x08, 0x03, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d
};

// Model bytes: the valid model with up to 4 bytes overwritten, or up to 512 bytes from the input.
std::vector<unsigned char> model_bytes(Ctx& c) {
  if (c.flag()) return c.in.ConsumeBytes<unsigned char>(c.in.ConsumeIntegralInRange<std::size_t>(0, 512));
  std::vector<unsigned char> b(std::begin(kTwoIo), std::end(kTwoIo));
  const int changes = c.in.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < changes; ++i) b[c.in.ConsumeIntegralInRange<std::size_t>(0, b.size() - 1)] = c.in.ConsumeIntegral<unsigned char>();
  if (c.flag()) b.resize(c.in.ConsumeIntegralInRange<std::size_t>(0, b.size()));  // truncated
  return b;
}

}  // namespace

void onnx(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: {
      const std::vector<unsigned char> b = model_bytes(c);
      // The exact-size heap copy lets ASan see any read past the end.
      std::vector<unsigned char> exact(b);
      MAKE(ember_onnx_load_memory, c.flag() ? static_cast<const void*>(exact.data()) : nullptr, exact.size(), c.device());
      break;
    }
    case 1: MAKE(ember_onnx_load, c.path(), c.device()); break;
    case 2: {
      ember_module* m = c.module();
      std::vector<ember_tensor*> xs = c.tensors();
      const std::size_t n_out = c.in.ConsumeIntegralInRange<std::size_t>(0, 3);
      std::vector<ember_tensor*> ys(n_out, nullptr);
      const auto* inputs = reinterpret_cast<const ember_tensor* const*>(xs.data());
      const ember_status s = CALL(ember_onnx_forward, m, c.flag() ? inputs : nullptr, xs.size(),
                                  n_out && c.flag() ? ys.data() : nullptr, n_out, c.choice(2));
      for (ember_tensor* y : ys) {
        if (s != EMBER_OK && y) violation("ember_onnx_forward", "failed with an output set");
        if (s == EMBER_OK && y) c.keep(y, "ember_onnx_forward");
      }
      break;
    }
    case 3: {
      size_t n = 0;
      CALL(ember_onnx_input_count, c.module(), c.flag() ? &n : nullptr);
      CALL(ember_onnx_output_count, c.module(), c.flag() ? &n : nullptr);
      break;
    }
    case 4: {
      std::vector<char> buf(c.capacity());
      size_t len = 0;
      const auto index = static_cast<size_t>(c.size());
      if (c.flag())
        CALL(ember_onnx_input_name, c.module(), index, buf.empty() ? nullptr : buf.data(), buf.size(), &len);
      else
        CALL(ember_onnx_output_name, c.module(), index, buf.empty() ? nullptr : buf.data(), buf.size(), &len);
      break;
    }
    case 5: {
      std::vector<int64_t> dims(c.in.ConsumeIntegralInRange<std::size_t>(0, 4));
      int32_t dtype = 0;
      int64_t rank = 0;
      CALL(ember_onnx_input_info, c.module(), static_cast<size_t>(c.size()), c.flag() ? &dtype : nullptr,
           dims.empty() ? nullptr : dims.data(), dims.size(), c.flag() ? &rank : nullptr);
      break;
    }
    default: {
      size_t n = 0;
      CALL(ember_onnx_operator_count, c.flag() ? &n : nullptr);
      std::vector<char> buf(c.capacity());
      size_t len = 0;
      CALL(ember_onnx_operator_name, static_cast<size_t>(c.size()), buf.empty() ? nullptr : buf.data(), buf.size(),
           c.flag() ? &len : nullptr);
      break;
    }
  }
}

}  // namespace ember_fuzz
