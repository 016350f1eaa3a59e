// Issue 12, the FFI-clean ember.h: the numeric version, an _init for every struct, constants FFI tools can read,
// the <enum>_t typedefs (int32_t, so int arguments keep compiling in C++).
#include <cstring>
#include <string>
#include <type_traits>

#include "tests/c_api/capi_support.hpp"

namespace {

using namespace ember::capi_test;

TEST(FfiHeader, VersionNumberFollowsTheVersionMacrosAndTheLoadedLibrary) {
  static_assert(EMBER_VERSION_NUMBER ==
                EMBER_VERSION_MAJOR * 1000000 + EMBER_VERSION_MINOR * 1000 + EMBER_VERSION_PATCH);
  EXPECT_EQ(ember_version_number(), EMBER_VERSION_NUMBER);
  const std::string dotted = std::to_string(EMBER_VERSION_MAJOR) + "." + std::to_string(EMBER_VERSION_MINOR) + "." +
                             std::to_string(EMBER_VERSION_PATCH);
  EXPECT_EQ(std::string(ember_version()), dotted);  // the header's macros are the library's version
}

TEST(FfiHeader, ConstantsKeepTheirValuesAndTypes) {
  // A literal now, not INT64_MAX: still int64_t's type and value.
  static_assert(std::is_same_v<decltype(EMBER_SLICE_END), int64_t>);
  static_assert(EMBER_SLICE_END == INT64_MAX);
#ifndef EMBER_MAX_RANK
#error "EMBER_MAX_RANK must stay visible to #ifdef"
#endif
  static_assert(EMBER_MAX_RANK == 8);
  static_assert(sizeof(ember_param_info::shape) == EMBER_MAX_RANK * sizeof(int64_t));
  static_assert(std::is_same_v<ember_dtype_t, int32_t> && std::is_same_v<ember_layer_kind_t, int32_t>);
}

TEST(FfiHeader, EnumTypedParamsAndFieldsTakeInts) {
  // C++ callers that pass an int32_t (not the enum) where a typed param is declared must keep compiling.
  const int32_t cpu = EMBER_BACKEND_CPU;
  ember_backend_info info;
  EMBER_ASSERT_OK(ember_backend_info_init(&info));
  EMBER_ASSERT_OK(ember_backend_query(cpu, &info));
  const int32_t backend = info.backend;
  EXPECT_EQ(backend, EMBER_BACKEND_CPU);
  EXPECT_EQ(info.float_dtype, EMBER_DTYPE_F32);
}

// Every byte of *s is zero except struct_size, which is sizeof(S); the bytes after it are untouched.
template <class S, class Init>
void expect_zero_init(Init init, const char* null_phrase) {
  struct Padded {
    S value;
    unsigned char after[32];
  } p;
  std::memset(static_cast<void*>(&p), 0xA5, sizeof p);
  ASSERT_EQ(init(&p.value), EMBER_OK) << ember_last_error();
  EXPECT_EQ(p.value.struct_size, sizeof(S));
  S expected;
  std::memset(static_cast<void*>(&expected), 0, sizeof expected);
  expected.struct_size = sizeof(S);
  EXPECT_EQ(std::memcmp(&p.value, &expected, sizeof(S)), 0) << "a field other than struct_size is not zero";
  for (unsigned char b : p.after) ASSERT_EQ(b, 0xA5) << "wrote past sizeof";
  EMBER_EXPECT_ERR(init(nullptr), EMBER_ERR_INVALID_ARGUMENT, null_phrase);
}

TEST(FfiHeader, EveryNewInitSetsStructSizeAndZeroesTheRest) {
  expect_zero_init<ember_backend_info>(ember_backend_info_init, "info is NULL");
  expect_zero_init<ember_param_info>(ember_param_info_init, "info is NULL");
  expect_zero_init<ember_vulkan_requirements>(ember_vulkan_requirements_init, "out is NULL");
  expect_zero_init<ember_vulkan_device_desc>(ember_vulkan_device_desc_init, "desc is NULL");
  expect_zero_init<ember_vulkan_plan_tensor_info>(ember_vulkan_plan_tensor_info_init, "info is NULL");
  expect_zero_init<ember_vulkan_memory_request>(ember_vulkan_memory_request_init, "request is NULL");
  expect_zero_init<ember_vulkan_memory_block>(ember_vulkan_memory_block_init, "block is NULL");
  expect_zero_init<ember_vulkan_memory_stats>(ember_vulkan_memory_stats_init, "stats is NULL");
  expect_zero_init<ember_vulkan_buffer_state>(ember_vulkan_buffer_state_init, "state is NULL");
  expect_zero_init<ember_vulkan_requirements2>(ember_vulkan_requirements2_init, "out is NULL");
}

TEST(FfiHeader, InitializedStructsAreAcceptedByTheirQueries) {
  ember_module* m = nullptr;
  ember_layer_desc d;
  EMBER_ASSERT_OK(ember_layer_init(&d, EMBER_LAYER_LINEAR));
  d.in_features = 3;
  d.out_features = 2;
  EMBER_ASSERT_OK(ember_module_sequential(nullptr, &d, 1, &m));
  ember_param_info info;
  EMBER_ASSERT_OK(ember_param_info_init(&info));
  EMBER_EXPECT_OK(ember_module_param_info(m, 0, &info));
  EXPECT_EQ(info.rank, 2u);
  EXPECT_EQ(info.numel, 6);
  ember_module_free(m);
  // Needs no device, with or without the Vulkan backend.
  ember_vulkan_requirements2 req;
  EMBER_ASSERT_OK(ember_vulkan_requirements2_init(&req));
  const ember_status s = ember_vulkan_requirements_query2(&req);
  EXPECT_TRUE(s == EMBER_OK || s == EMBER_ERR_UNSUPPORTED) << ember_last_error();
}

}  // namespace
