#pragma once
// Helpers for the C ABI tests: owning wrappers for ember.h handles, status assertions that print
// ember_last_error(), and host <-> tensor conversions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ember.h"

namespace ember::capi_test {

#define EMBER_ASSERT_OK(call) ASSERT_EQ((call), EMBER_OK) << #call << ": " << ember_last_error()
#define EMBER_EXPECT_OK(call) EXPECT_EQ((call), EMBER_OK) << #call << ": " << ember_last_error()

// Whether `needle` occurs in `message` as a whole phrase: non-empty, and neither end inside a longer word ("rank 2"
// matches "has rank 2, expected" but not "rank 25"; "x" matches "x is NULL" but not "max").
inline bool has_phrase(const std::string& message, const std::string& needle) {
  if (needle.empty()) return false;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (auto at = message.find(needle); at != std::string::npos; at = message.find(needle, at + 1)) {
    const auto end = at + needle.size();
    const bool starts_clean = at == 0 || !word(needle.front()) || !word(message[at - 1]);
    const bool ends_clean = end == message.size() || !word(needle.back()) || !word(message[end]);
    if (starts_clean && ends_clean) return true;
  }
  return false;
}

// The checks of EMBER_EXPECT_ERR: the status, the message's "function: " prefix (when the call text is a direct
// ember_* call) and the phrase.
inline ::testing::AssertionResult failed_with(const char* call_text, ember_status got, ember_status want,
                                              const std::string& message, const std::string& needle) {
  if (got != want)
    return ::testing::AssertionFailure() << call_text << " gave " << ember_status_name(got) << ", expected "
                                         << ember_status_name(want) << ": \"" << message << "\"";
  std::string call(call_text);
  const auto open = call.find('(');
  const std::string fn = open == std::string::npos ? "" : call.substr(0, open);
  const bool direct = fn.rfind("ember_", 0) == 0 && fn.find_first_of(" :.>") == std::string::npos;
  if (direct && message.rfind(fn + ": ", 0) != 0)
    return ::testing::AssertionFailure() << call_text << ": message \"" << message << "\" does not start with \""
                                         << fn << ": \"";
  if (!has_phrase(message, needle))
    return ::testing::AssertionFailure() << call_text << ": message \"" << message << "\" lacks the phrase \""
                                         << needle << "\"";
  return ::testing::AssertionSuccess();
}

// The call failed with `status`, its message names the function and contains `needle` as a whole phrase. The last
// error is cleared first, so the message checked is this call's, never one left over from an earlier call.
#define EMBER_EXPECT_ERR(call, status, needle)                                                                   \
  do {                                                                                                           \
    ember_clear_error();                                                                                         \
    const ember_status s_ = (call);                                                                              \
    EXPECT_TRUE(::ember::capi_test::failed_with(#call, s_, (status), ember_last_error(), (needle)));             \
  } while (0)

struct TensorFree {
  void operator()(ember_tensor* t) const { ember_tensor_free(t); }
};
struct GradsFree {
  void operator()(ember_grads* g) const { ember_grads_free(g); }
};
struct ModuleFree {
  void operator()(ember_module* m) const { ember_module_free(m); }
};
struct OptimFree {
  void operator()(ember_optimizer* o) const { ember_optimizer_free(o); }
};
struct RecordFree {
  void operator()(ember_record* r) const { ember_record_free(r); }
};
struct ReportFree {
  void operator()(ember_load_report* r) const { ember_load_report_free(r); }
};
using Tensor = std::unique_ptr<ember_tensor, TensorFree>;
using Grads = std::unique_ptr<ember_grads, GradsFree>;
using Module = std::unique_ptr<ember_module, ModuleFree>;
using Optim = std::unique_ptr<ember_optimizer, OptimFree>;
using RecordH = std::unique_ptr<ember_record, RecordFree>;
using Report = std::unique_ptr<ember_load_report, ReportFree>;

inline Tensor f32(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, v.data(), v.size() * sizeof(float), shape.data(),
                                   shape.size(), &t),
            EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}
inline Tensor i64(const std::vector<int64_t>& v, const std::vector<int64_t>& shape) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_I64, v.data(), v.size() * sizeof(int64_t), shape.data(),
                                   shape.size(), &t),
            EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}

inline std::vector<int64_t> shape_of(const ember_tensor* t) {
  int64_t dims[EMBER_MAX_RANK];
  size_t rank = 0;
  EXPECT_EQ(ember_tensor_shape(t, dims, EMBER_MAX_RANK, &rank), EMBER_OK) << ember_last_error();
  return std::vector<int64_t>(dims, dims + rank);
}
inline std::vector<float> floats(const ember_tensor* t) {
  int64_t n = 0;
  EXPECT_EQ(ember_tensor_numel(t, &n), EMBER_OK) << ember_last_error();
  std::vector<float> v(static_cast<std::size_t>(n));
  EXPECT_EQ(ember_tensor_copy_to(t, EMBER_DTYPE_F32, v.data(), v.size() * sizeof(float), nullptr), EMBER_OK)
      << ember_last_error();
  return v;
}
inline std::vector<int64_t> ints(const ember_tensor* t) {
  int64_t n = 0;
  EXPECT_EQ(ember_tensor_numel(t, &n), EMBER_OK) << ember_last_error();
  std::vector<int64_t> v(static_cast<std::size_t>(n));
  EXPECT_EQ(ember_tensor_copy_to(t, EMBER_DTYPE_I64, v.data(), v.size() * sizeof(int64_t), nullptr), EMBER_OK)
      << ember_last_error();
  return v;
}

inline ember_layer_desc layer(int32_t kind) {
  ember_layer_desc d;
  EXPECT_EQ(ember_layer_init(&d, kind), EMBER_OK) << ember_last_error();
  return d;
}
inline ember_layer_desc linear(int64_t in, int64_t out, bool bias = true) {
  ember_layer_desc d = layer(EMBER_LAYER_LINEAR);
  d.in_features = in;
  d.out_features = out;
  d.bias = bias;
  return d;
}
inline Module sequential(const std::vector<ember_layer_desc>& layers) {
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_sequential(nullptr, layers.data(), layers.size(), &m), EMBER_OK) << ember_last_error();
  return Module(m);
}

inline std::string param_name(const ember_module* m, size_t i) {
  char buf[256];
  size_t len = 0;
  EXPECT_EQ(ember_module_param_name(m, i, buf, sizeof buf, &len), EMBER_OK) << ember_last_error();
  return std::string(buf, len);
}

inline Tensor forward(ember_module* m, const ember_tensor* x, int32_t mode = EMBER_MODE_EVAL) {
  ember_tensor* y = nullptr;
  EXPECT_EQ(ember_module_forward(m, x, mode, &y), EMBER_OK) << ember_last_error();
  return Tensor(y);
}

// A temporary file path, removed at scope end.
struct TempPath {
  std::string path;
  explicit TempPath(const std::string& name)
      : path(::testing::TempDir() + "ember_capi_" + std::to_string(::getpid()) + "_" + name) {}
  ~TempPath() { std::remove(path.c_str()); }
};

}  // namespace ember::capi_test
