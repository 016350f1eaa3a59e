// The fuzzer's handle pool, argument pickers and the checks of ember.h's error rules (fuzz_context.hpp).
#include "tests/fuzz/fuzz_context.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace ember_fuzz {
namespace {

// Frees a handle of kind k through its own ember_*_free.
ember_status free_of(Kind k, void* h) {
  switch (k) {
    case kDevice: return ember_device_free(static_cast<ember_device*>(h));
    case kTensor: return ember_tensor_free(static_cast<ember_tensor*>(h));
    case kGrads: return ember_grads_free(static_cast<ember_grads*>(h));
    case kModule: return ember_module_free(static_cast<ember_module*>(h));
    case kOptimizer: return ember_optimizer_free(static_cast<ember_optimizer*>(h));
    case kRecord: return ember_record_free(static_cast<ember_record*>(h));
    case kLoadReport: return ember_load_report_free(static_cast<ember_load_report*>(h));
    case kScheduler: return ember_scheduler_free(static_cast<ember_scheduler*>(h));
    case kVulkanPlan: return ember_vulkan_plan_free(static_cast<ember_vulkan_plan*>(h));
    case kVulkanReadback: return ember_vulkan_readback_free(static_cast<ember_vulkan_readback*>(h));
    case kKinds: break;
  }
  return EMBER_ERR_INTERNAL;
}
const char* free_name(Kind k) {
  static constexpr const char* kNames[kKinds] = {
      "ember_device_free",      "ember_tensor_free",    "ember_grads_free",         "ember_module_free",
      "ember_optimizer_free",   "ember_record_free",    "ember_load_report_free",   "ember_scheduler_free",
      "ember_vulkan_plan_free", "ember_vulkan_readback_free"};
  return kNames[k];
}

// An object that is no handle at all: its address must be reported as not a handle.
alignas(16) char g_not_a_handle[64];

}  // namespace

[[noreturn]] void violation(const char* fn, const std::string& what) {
  std::fprintf(stderr, "ember_fuzz: ember.h rule broken by %s: %s (last error: \"%s\")\n", fn, what.c_str(),
               ember_last_error());
  std::abort();
}

void Ctx::check(const char* name, ember_status s) {
  if (s == EMBER_OK) return;
  if (s < EMBER_ERR_INVALID_ARGUMENT || s > EMBER_ERR_DEVICE_LOST)
    violation(name, "returned a status outside ember_status_code: " + std::to_string(s));
  // "On failure a message naming the function and the problem is stored": "<name>: <what>".
  const char* m = ember_last_error();
  if (!m || !*m) violation(name, "failed with an empty ember_last_error()");
  const std::size_t n = std::strlen(name);
  if (std::strncmp(m, name, n) != 0 || m[n] != ':') violation(name, "failed with a message not naming it");
}

Ctx::~Ctx() {
  for (int k = 0; k < kKinds; ++k)
    for (std::size_t i = 0; i < kSlots; ++i) release(static_cast<Kind>(k), i);
  for (; no_grad_depth > 0; --no_grad_depth) check("ember_no_grad_exit", ember_no_grad_exit());
}

void Ctx::release(Kind k, std::size_t slot) {
  void*& h = pool_[k][slot];
  if (!h) return;
  // A slot's handle may already be gone (freed through an alias of its address that the input passed to a free),
  // so INVALID_HANDLE is a correct answer here; check() still applies.
  ember_clear_error();
  check(free_name(k), free_of(k, h));
  freed_[freed_next_++ % freed_.size()] = h;
  h = nullptr;
}

void Ctx::free_one(Kind k) { release(k, in.ConsumeIntegralInRange<std::size_t>(0, kSlots - 1)); }

bool Ctx::release_pooled(Kind k, void* h) {
  for (std::size_t i = 0; i < kSlots; ++i)
    if (pool_[k][i] == h) {
      release(k, i);
      return true;
    }
  return false;
}

void Ctx::keep_raw(Kind k, void* h, const char* made_by) {
  // A tensor that was just made must answer queries (its handle is live and its value is complete).
  if (k == kTensor) {
    size_t rank = 0;
    int64_t numel = 0;
    if (ember_tensor_rank(static_cast<ember_tensor*>(h), &rank) != EMBER_OK ||
        ember_tensor_numel(static_cast<ember_tensor*>(h), &numel) != EMBER_OK || numel < 0)
      violation(made_by, "made a tensor that does not answer ember_tensor_rank / ember_tensor_numel");
  }
  const std::size_t slot = in.ConsumeIntegralInRange<std::size_t>(0, kSlots - 1);
  release(k, slot);
  pool_[k][slot] = h;
}

void* Ctx::pick_raw(Kind k) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return nullptr;
    case 1: {  // a live handle of another type
      const int other = (k + 1 + in.ConsumeIntegralInRange<int>(0, kKinds - 2)) % kKinds;
      return pool_[other][in.ConsumeIntegralInRange<std::size_t>(0, kSlots - 1)];
    }
    case 2: return freed_[in.ConsumeIntegralInRange<std::size_t>(0, freed_.size() - 1)];
    case 3: return g_not_a_handle + 16 * in.ConsumeIntegralInRange<int>(0, 3);
    default: return pool_[k][in.ConsumeIntegralInRange<std::size_t>(0, kSlots - 1)];
  }
}

std::vector<ember_tensor*> Ctx::tensors() {
  std::vector<ember_tensor*> v(in.ConsumeIntegralInRange<std::size_t>(0, 4));
  for (auto& t : v) t = tensor();
  return v;
}

int32_t Ctx::choice(int32_t n) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return -1;
    case 1: return n;
    case 2: return in.PickValueInArray({std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                        n + 1, 255});
    default: return in.ConsumeIntegralInRange<int32_t>(0, n - 1);
  }
}

int64_t Ctx::dim() {
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0)
    return in.PickValueInArray<int64_t>({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                         -9, 8, 1 << 20, EMBER_SLICE_END});
  return in.ConsumeIntegralInRange<int64_t>(-3, 3);
}

int64_t Ctx::size() {
  // Sizes stay tiny unless hostile: a hostile one either overflows (refused by the shape checks) or asks for far
  // more memory than exists (an allocation that fails and must come back as EMBER_ERR_OUT_OF_MEMORY).
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0)
    return in.PickValueInArray<int64_t>({-1, -7, std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int64_t>::max(), int64_t{1} << 31, int64_t{1} << 40,
                                         int64_t{1} << 59, int64_t{1} << 62});
  return in.ConsumeIntegralInRange<int64_t>(0, 4);
}

double Ctx::real() {
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0)
    return in.PickValueInArray<double>({std::numeric_limits<double>::quiet_NaN(),
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(), 1e300, -1e300, 1e-310, 0.0, -0.0,
                                        9.3e18, -9.3e18, 3e38, 4e38});
  return static_cast<double>(in.ConsumeIntegralInRange<int>(-40, 40)) / 8.0;
}

std::size_t Ctx::capacity() {
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) return 0;
  return in.ConsumeIntegralInRange<std::size_t>(1, 96);
}

std::vector<int64_t> Ctx::shape() {
  std::size_t rank = in.ConsumeIntegralInRange<std::size_t>(0, 4);
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) rank = 9;  // above EMBER_MAX_RANK
  std::vector<int64_t> dims(rank);
  for (auto& d : dims) d = size();
  return dims;
}

uint32_t Ctx::struct_size(uint32_t full) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return 0;
    case 1: return 4;
    case 2: return full - 4;
    case 3: return full + 64;  // a newer caller: larger than this library's struct (the caller's buffer is that big)
    default: return full;
  }
}

const std::string& scratch_dir() {
  // Never destroyed: the atexit handler that removes the dir (fuzz_harness.cpp) runs after static destructors.
  static const std::string* dir = [] {
    char tmpl[] = "/tmp/ember_fuzz_XXXXXX";
    const char* d = mkdtemp(tmpl);
    return new std::string(d ? d : "/tmp");
  }();
  return *dir;
}

const char* Ctx::path() {
  const std::string& dir = scratch_dir();
  static const std::string a = dir + "/a.rec", b = dir + "/b.rec", missing = dir + "/no/such/dir.rec";
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return nullptr;
    case 1: return "";
    case 2: return missing.c_str();
    case 3: return dir.c_str();  // a directory, not a file
    case 4: return b.c_str();
    default: return a.c_str();
  }
}

}  // namespace ember_fuzz
