// Issue 12's boundary rules (ember.h's Handles, Strings and Structs paragraphs): handles carry a generation, so a
// stale handle is reported and never reaches the object that reuses its slot; lookups are safe from many threads;
// capacity 0 is a length query that leaves ember_last_error() alone; a newer caller's struct tail must be zero.
#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

// The low 32 bits of a handle value name its slot (and kind), the high 32 its generation (c_api/src/
// handle_slots.hpp). The tests read them only to prove that a slot really was reused, which is the case under test.
uint32_t slot_bits(const void* h) { return static_cast<uint32_t>(reinterpret_cast<std::uintptr_t>(h)); }

Tensor sum_of(const ember_tensor* y) {
  ember_tensor* s = nullptr;
  EXPECT_EQ(ember_tensor_reduce_all(y, EMBER_REDUCE_SUM, &s), EMBER_OK) << ember_last_error();
  return Tensor(s);
}

Tensor filled(float v, int64_t n = 3) {
  std::vector<float> data(static_cast<std::size_t>(n), v);
  return f32(data, {n});
}

// ---------------------------------------------------------------- generations

TEST(HandleGenerations, StaleTensorNeverReachesTheObjectReusingItsSlot) {
  ember_tensor* stale = filled(1).release();
  EMBER_ASSERT_OK(ember_tensor_free(stale));
  // Many new tensors: the freed slot is reused (the free list hands the latest freed slot out first), and so is the
  // freed object's memory; each new tensor holds its own value.
  std::vector<Tensor> fresh;
  bool slot_reused = false;
  for (int i = 0; i < 2000; ++i) {
    fresh.push_back(filled(static_cast<float>(i + 2)));
    ASSERT_NE(fresh.back().get(), stale);
    slot_reused = slot_reused || slot_bits(fresh.back().get()) == slot_bits(stale);
  }
  EXPECT_TRUE(slot_reused) << "the test must reuse the stale handle's slot to mean anything";
  auto other = filled(5);
  ember_tensor* out = nullptr;
  int64_t numel = 0;
  float buf[3];
  size_t written = 0;
  EMBER_EXPECT_ERR(ember_tensor_numel(stale, &numel), EMBER_ERR_INVALID_HANDLE,
                   "tensor is an ember_tensor that was already freed");
  EMBER_EXPECT_ERR(ember_tensor_add(other.get(), stale, &out), EMBER_ERR_INVALID_HANDLE, "already freed");
  EXPECT_EQ(out, nullptr);
  EMBER_EXPECT_ERR(ember_tensor_copy_to(stale, EMBER_DTYPE_F32, buf, sizeof buf, &written), EMBER_ERR_INVALID_HANDLE,
                   "already freed");
  EMBER_EXPECT_ERR(ember_tensor_inplace_scalar(stale, EMBER_INPLACE_MUL, 0.0), EMBER_ERR_INVALID_HANDLE,
                   "already freed");
  for (int i = 0; i < 3; ++i)  // never a double free, however often
    EMBER_EXPECT_ERR(ember_tensor_free(stale), EMBER_ERR_INVALID_HANDLE, "handle is an ember_tensor that was already freed");
  for (std::size_t i = 0; i < fresh.size(); ++i)
    ASSERT_EQ(floats(fresh[i].get()), std::vector<float>(3, static_cast<float>(i + 2))) << "tensor " << i;
}

// Every kind of handle: made, freed, its slot reused by a new one of the same kind; the stale one's free is refused
// and the new one still works (its free succeeds exactly once).
TEST(HandleGenerations, EveryKindRefusesItsStaleHandle) {
  struct Kind {
    const char* name;
    std::function<void*()> make;
    std::function<ember_status(void*)> free;
    std::function<ember_status(void*)> use;  // a read-only call on the handle
  };
  auto m = sequential({linear(2, 2)});
  auto x = f32({1, 2}, {1, 2});
  std::vector<Tensor> losses;
  std::size_t next_loss = 0;
  for (int i = 0; i < 2; ++i) losses.push_back(sum_of(forward(m.get(), x.get(), EMBER_MODE_TRAIN).get()));
  const std::vector<Kind> kinds = {
      {"ember_tensor", [] { return static_cast<void*>(filled(1).release()); },
       [](void* h) { return ember_tensor_free(static_cast<ember_tensor*>(h)); },
       [](void* h) { int64_t n; return ember_tensor_numel(static_cast<ember_tensor*>(h), &n); }},
      {"ember_device",
       [] { ember_device* d = nullptr; EXPECT_EQ(ember_device_create(EMBER_BACKEND_CPU, 0, &d), EMBER_OK); return static_cast<void*>(d); },
       [](void* h) { return ember_device_free(static_cast<ember_device*>(h)); },
       [](void* h) { int32_t b, i; return ember_device_info(static_cast<ember_device*>(h), &b, &i); }},
      {"ember_module", [] { return static_cast<void*>(sequential({linear(2, 2)}).release()); },
       [](void* h) { return ember_module_free(static_cast<ember_module*>(h)); },
       [](void* h) { size_t n; return ember_module_param_count(static_cast<ember_module*>(h), &n); }},
      {"ember_record",
       [&] { ember_record* r = nullptr; EXPECT_EQ(ember_module_to_record(m.get(), &r), EMBER_OK); return static_cast<void*>(r); },
       [](void* h) { return ember_record_free(static_cast<ember_record*>(h)); },
       [](void* h) { size_t n; return ember_record_entry_count(static_cast<ember_record*>(h), &n); }},
      {"ember_optimizer",
       [&] {
         ember_optimizer_options o;
         EXPECT_EQ(ember_optimizer_options_init(&o, EMBER_OPTIM_SGD), EMBER_OK);
         ember_optimizer* opt = nullptr;
         EXPECT_EQ(ember_optimizer_create(m.get(), &o, &opt), EMBER_OK);
         return static_cast<void*>(opt);
       },
       [](void* h) { return ember_optimizer_free(static_cast<ember_optimizer*>(h)); },
       [](void* h) { size_t n; return ember_optimizer_group_count(static_cast<ember_optimizer*>(h), &n); }},
      {"ember_grads",
       [&] {  // one handle made (the losses are made beforehand), so the latest freed slot is the one it gets
         ember_grads* g = nullptr;
         EXPECT_EQ(ember_tensor_backward(losses.at(next_loss++).get(), nullptr, &g), EMBER_OK) << ember_last_error();
         return static_cast<void*>(g);
       },
       [](void* h) { return ember_grads_free(static_cast<ember_grads*>(h)); },
       [&](void* h) { ember_tensor* w = nullptr; ember_module_param_value(m.get(), 0, &w);
                      ember_tensor* gw = nullptr;
                      const ember_status s = ember_grads_get(static_cast<ember_grads*>(h), w, &gw);
                      ember_tensor_free(gw); ember_tensor_free(w); return s; }},
  };
  for (const Kind& k : kinds) {
    SCOPED_TRACE(k.name);
    void* stale = k.make();
    ASSERT_NE(stale, nullptr) << ember_last_error();
    EMBER_ASSERT_OK(k.use(stale));
    EMBER_ASSERT_OK(k.free(stale));
    void* fresh = k.make();
    ASSERT_EQ(slot_bits(fresh), slot_bits(stale)) << "the latest freed slot is the next one handed out";
    ASSERT_NE(fresh, stale);
    EMBER_EXPECT_ERR(k.use(stale), EMBER_ERR_INVALID_HANDLE, "that was already freed");
    EMBER_EXPECT_ERR(k.free(stale), EMBER_ERR_INVALID_HANDLE, "that was already freed");
    EMBER_EXPECT_OK(k.use(fresh));  // untouched by the stale handle's calls
    EMBER_EXPECT_OK(k.free(fresh));
    EMBER_EXPECT_ERR(k.free(fresh), EMBER_ERR_INVALID_HANDLE, "already freed");
  }
}

TEST(HandleGenerations, WrongTypeForgedAndSmallValuesAreReported) {
  auto m = sequential({linear(2, 2)});
  auto a = filled(1);
  ember_tensor* out = nullptr;
  int64_t n = 0;
  auto* as_tensor = reinterpret_cast<ember_tensor*>(m.get());
  EMBER_EXPECT_ERR(ember_tensor_numel(as_tensor, &n), EMBER_ERR_INVALID_HANDLE,
                   "tensor is an ember_module, expected an ember_tensor");
  EMBER_EXPECT_ERR(ember_tensor_free(as_tensor), EMBER_ERR_INVALID_HANDLE, "is an ember_module, expected an ember_tensor");
  size_t count = 0;
  EMBER_EXPECT_OK(ember_module_param_count(m.get(), &count));  // the refused free left the module alone
  // A freed handle of another type says both.
  ember_module* gone = sequential({linear(2, 2)}).release();
  EMBER_ASSERT_OK(ember_module_free(gone));
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), reinterpret_cast<ember_tensor*>(gone), &out), EMBER_ERR_INVALID_HANDLE,
                   "is an ember_module (already freed), expected an ember_tensor");
  // Values Ember never issued: small integers, an address, a live handle with a generation not yet reached.
  const std::uintptr_t live = reinterpret_cast<std::uintptr_t>(a.get());
  int local = 0;
  for (std::uintptr_t forged : {std::uintptr_t{1}, std::uintptr_t{0x1000}, reinterpret_cast<std::uintptr_t>(&local),
                                live + (std::uintptr_t{1} << 32), live ^ 0x3}) {
    SCOPED_TRACE(forged);
    EMBER_EXPECT_ERR(ember_tensor_numel(reinterpret_cast<ember_tensor*>(forged), &n), EMBER_ERR_INVALID_HANDLE,
                     "not a value Ember issued");
    EMBER_EXPECT_ERR(ember_tensor_free(reinterpret_cast<ember_tensor*>(forged)), EMBER_ERR_INVALID_HANDLE,
                     "not a value Ember issued");
  }
  EXPECT_EQ(floats(a.get()), std::vector<float>(3, 1.0f));
}

// Lookups from many threads while other threads create and free handles (reusing slots all the time): every live
// handle resolves to its own value, every stale one stays refused. Run under TSan this also checks the memory order.
TEST(HandleGenerations, ConcurrentLookupsChurnAndStaleHandles) {
  constexpr int kShared = 8, kReaders = 3, kChurners = 2, kRounds = 4000;
  std::vector<Tensor> shared;
  for (int i = 0; i < kShared; ++i) shared.push_back(filled(static_cast<float>(i), 1));
  std::vector<ember_tensor*> stale;
  for (int i = 0; i < 16; ++i) {
    stale.push_back(filled(-1, 1).release());
    ASSERT_EQ(ember_tensor_free(stale.back()), EMBER_OK);
  }
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < kReaders; ++r)
    threads.emplace_back([&, r] {
      for (int i = 0; i < kRounds; ++i) {
        const int k = (i * 7 + r) % kShared;
        float v = -1;
        size_t written = 0;
        if (ember_tensor_copy_to(shared[k].get(), EMBER_DTYPE_F32, &v, sizeof v, &written) != EMBER_OK ||
            v != static_cast<float>(k))
          ++errors;
        int64_t n = 0;
        if (ember_tensor_numel(stale[i % stale.size()], &n) != EMBER_ERR_INVALID_HANDLE) ++errors;
      }
    });
  for (int c = 0; c < kChurners; ++c)
    threads.emplace_back([&, c] {
      for (int i = 0; i < kRounds; ++i) {
        ember_tensor* t = nullptr;
        const float v = static_cast<float>(100 + c);
        const int64_t one = 1;
        if (ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, &v, sizeof v, &one, 1, &t) != EMBER_OK) ++errors;
        float back = 0;
        size_t written = 0;
        if (ember_tensor_copy_to(t, EMBER_DTYPE_F32, &back, sizeof back, &written) != EMBER_OK || back != v) ++errors;
        if (ember_tensor_free(t) != EMBER_OK) ++errors;
        if (ember_tensor_free(t) != EMBER_ERR_INVALID_HANDLE) ++errors;  // freed by this thread: stale at once
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
}

// Two threads freeing the same handle at once: exactly one frees it.
TEST(HandleGenerations, RacingFreesFreeOnce) {
  for (int round = 0; round < 300; ++round) {
    ember_tensor* t = filled(1, 1).release();
    std::atomic<int> ok{0}, refused{0}, other{0};
    std::atomic<bool> go{false};
    auto racer = [&] {
      while (!go.load()) {
      }
      const ember_status s = ember_tensor_free(t);
      (s == EMBER_OK ? ok : s == EMBER_ERR_INVALID_HANDLE ? refused : other) += 1;
    };
    std::thread a(racer), b(racer);
    go = true;
    a.join();
    b.join();
    ASSERT_EQ(ok.load(), 1) << "round " << round;
    ASSERT_EQ(refused.load(), 1) << "round " << round;
    ASSERT_EQ(other.load(), 0) << "round " << round;
  }
}

// ---------------------------------------------------------------- length queries

// A length query keeps the last error: the message of an earlier failure survives it.
class LengthQuery : public ::testing::Test {
 protected:
  void SetUp() override {
    ember_tensor* out = nullptr;
    ASSERT_EQ(ember_tensor_add(nullptr, nullptr, &out), EMBER_ERR_NULL_HANDLE);
    before_ = ember_last_error();
    ASSERT_FALSE(before_.empty());
  }
  void expect_untouched() { EXPECT_EQ(std::string(ember_last_error()), before_); }
  std::string before_;
};

TEST_F(LengthQuery, StringsAnswerTheirLength) {
  auto m = sequential({linear(2, 2)});
  size_t length = 99;
  EXPECT_EQ(ember_module_param_name(m.get(), 0, nullptr, 0, &length), EMBER_OK);
  EXPECT_EQ(length, std::strlen("layers.0.weight"));
  expect_untouched();

  ember_module* root = nullptr;
  ember_module* child = nullptr;
  EMBER_ASSERT_OK(ember_module_create(nullptr, &root));
  Module r(root);
  EMBER_ASSERT_OK(ember_module_create(nullptr, &child));
  Module c(child);
  EMBER_ASSERT_OK(ember_module_add_child(root, "encoder", child));
  SetUp();
  length = 99;
  EXPECT_EQ(ember_module_child_name(root, 0, nullptr, 0, &length), EMBER_OK);
  EXPECT_EQ(length, std::strlen("encoder"));
  expect_untouched();
  // Too small but not 0 keeps its status, truncation and message.
  char small[4];
  EMBER_EXPECT_ERR(ember_module_child_name(root, 0, small, sizeof small, &length), EMBER_ERR_BUFFER_TOO_SMALL,
                   "buffer of 4 bytes");
  EXPECT_STREQ(small, "enc");
}

// The case: a failed strict load's message and report text, measured before being read.
TEST_F(LengthQuery, FailedStrictLoadReportSurvivesItsLengthQuery) {
  auto small = sequential({linear(2, 2)});
  auto big = sequential({linear(2, 3)});
  ember_record* rec = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(small.get(), &rec));
  RecordH r(rec);
  ember_load_report* report = nullptr;
  ASSERT_EQ(ember_module_load_record(big.get(), rec, EMBER_LOAD_STRICT, &report), EMBER_ERR_RECORD);
  Report rep(report);
  const std::string load_error = ember_last_error();
  size_t length = 0;
  ASSERT_EQ(ember_load_report_text(report, nullptr, 0, &length), EMBER_OK);
  EXPECT_EQ(std::string(ember_last_error()), load_error);
  std::string text(length + 1, '\0');
  EMBER_ASSERT_OK(ember_load_report_text(report, text.data(), text.size(), &length));
  EXPECT_EQ(std::strlen(text.c_str()), length);
  EXPECT_NE(text.find("layers.0.weight"), std::string::npos) << text;
  EXPECT_EQ(std::string(ember_last_error()), load_error);
}

TEST_F(LengthQuery, ByteSizesCountsAndRanks) {
  auto m = sequential({linear(2, 2)});
  ember_record* rec = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(m.get(), &rec));
  RecordH r(rec);
  SetUp();
  size_t size = 0;
  EXPECT_EQ(ember_record_to_bytes(rec, nullptr, nullptr, 0, &size), EMBER_OK);
  expect_untouched();
  std::vector<char> bytes(size);
  size_t again = 0;
  EMBER_ASSERT_OK(ember_record_to_bytes(rec, nullptr, bytes.data(), bytes.size(), &again));
  EXPECT_EQ(again, size);
  SetUp();
  EMBER_EXPECT_ERR(ember_record_to_bytes(rec, nullptr, bytes.data(), size - 1, &again), EMBER_ERR_BUFFER_TOO_SMALL,
                   "buffer of " + std::to_string(size - 1) + " bytes");

  SetUp();
  size_t count = 0;
  EXPECT_EQ(ember_backend_list(nullptr, 0, &count), EMBER_OK);
  EXPECT_GE(count, 1u);
  expect_untouched();

  auto t = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  size_t rank = 0;
  EXPECT_EQ(ember_tensor_shape(t.get(), nullptr, 0, &rank), EMBER_OK);
  EXPECT_EQ(rank, 2u);
  expect_untouched();
  size_t written = 0;
  EXPECT_EQ(ember_tensor_copy_to(t.get(), EMBER_DTYPE_F64, nullptr, 0, &written), EMBER_OK);
  EXPECT_EQ(written, 6 * sizeof(double));
  expect_untouched();
  // Without a size pointer there is nothing to answer: capacity 0 is then simply too small.
  EMBER_EXPECT_ERR(ember_tensor_copy_to(t.get(), EMBER_DTYPE_F32, nullptr, 0, nullptr), EMBER_ERR_BUFFER_TOO_SMALL,
                   "buffer of 0 bytes for 24 bytes");
}

// ---------------------------------------------------------------- unknown struct tails

// A struct from a "newer ember.h": Ember's struct followed by fields this version does not know.
template <class T>
struct Newer {
  T known;
  unsigned char unknown[24];
};

template <class T>
Newer<T> newer(const T& known, int nonzero_at) {
  Newer<T> n;
  std::memset(&n, 0, sizeof n);
  n.known = known;
  n.known.struct_size = static_cast<uint32_t>(sizeof n);
  if (nonzero_at >= 0) n.unknown[nonzero_at] = 0x5a;
  return n;
}

// Each versioned input struct through a function that reads it: a zero tail is accepted (the call behaves as with
// Ember's own struct), a non-zero byte is refused with the struct's name and the byte's offset.
TEST(StructTails, NonZeroUnknownTailsAreRefusedZeroTailsAccepted) {
  auto x = f32(std::vector<float>(16, 1.0f), {1, 1, 4, 4});
  auto w = f32(std::vector<float>(9, 0.5f), {1, 1, 3, 3});
  auto m = sequential({linear(2, 2)});
  struct Row {
    const char* name;
    std::size_t size;
    std::function<ember_status(int nonzero_at)> call;  // -1: all zero
  };
  const std::vector<Row> rows = {
      {"ember_conv2d_options", sizeof(ember_conv2d_options),
       [&](int at) {
         ember_conv2d_options o;
         ember_conv2d_options_init(&o);
         auto n = newer(o, at);
         ember_tensor* out = nullptr;
         const ember_status s = ember_tensor_conv2d(x.get(), w.get(), nullptr, &n.known, &out);
         ember_tensor_free(out);
         return s;
       }},
      {"ember_pool2d_options", sizeof(ember_pool2d_options),
       [&](int at) {
         ember_pool2d_options o;
         ember_pool2d_options_init(&o);
         auto n = newer(o, at);
         ember_tensor* out = nullptr;
         const ember_status s = ember_tensor_max_pool2d(x.get(), &n.known, &out);
         ember_tensor_free(out);
         return s;
       }},
      {"ember_layer_desc", sizeof(ember_layer_desc),
       [&](int at) {
         auto n = newer(linear(2, 2), at);
         ember_module* out = nullptr;
         const ember_status s = ember_module_layer(nullptr, &n.known, &out);
         ember_module_free(out);
         return s;
       }},
      {"ember_layer_desc", sizeof(ember_layer_desc),  // the array form steps by the caller's struct_size
       [&](int at) {
         Newer<ember_layer_desc> two[2] = {newer(linear(2, 2), -1), newer(layer(EMBER_LAYER_RELU), at)};
         ember_module* out = nullptr;
         const ember_status s = ember_module_sequential(nullptr, &two[0].known, 2, &out);
         ember_module_free(out);
         return s;
       }},
      {"ember_record_options", sizeof(ember_record_options),
       [&](int at) {
         ember_record_options o;
         ember_record_options_init(&o);
         auto n = newer(o, at);
         ember_record* rec = nullptr;
         EXPECT_EQ(ember_module_to_record(m.get(), &rec), EMBER_OK);
         size_t size = 0;
         const ember_status s = ember_record_to_bytes(rec, &n.known, nullptr, 0, &size);
         ember_record_free(rec);
         return s;
       }},
      {"ember_optimizer_options", sizeof(ember_optimizer_options),
       [&](int at) {
         ember_optimizer_options o;
         ember_optimizer_options_init(&o, EMBER_OPTIM_ADAM);
         auto n = newer(o, at);
         ember_optimizer* out = nullptr;
         const ember_status s = ember_optimizer_create(m.get(), &n.known, &out);
         ember_optimizer_free(out);
         return s;
       }},
      {"ember_backward_options", sizeof(ember_backward_options),
       [&](int at) {
         ember_backward_options o;
         ember_backward_options_init(&o);
         auto n = newer(o, at);
         auto loss = sum_of(forward(m.get(), f32({1, 2}, {1, 2}).get(), EMBER_MODE_TRAIN).get());
         return ember_tensor_backward_ex(loss.get(), nullptr, &n.known, nullptr);
       }},
      {"ember_scheduler_options", sizeof(ember_scheduler_options),
       [&](int at) {
         ember_optimizer_options oo;
         ember_optimizer_options_init(&oo, EMBER_OPTIM_SGD);
         ember_optimizer* opt = nullptr;
         EXPECT_EQ(ember_optimizer_create(m.get(), &oo, &opt), EMBER_OK);
         ember_scheduler_options o;
         ember_scheduler_options_init(&o, EMBER_SCHED_EXPONENTIAL);
         auto n = newer(o, at);
         ember_scheduler* out = nullptr;
         const ember_status s = ember_scheduler_create(opt, &n.known, &out);
         ember_scheduler_free(out);
         ember_optimizer_free(opt);
         return s;
       }},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    EMBER_EXPECT_OK(row.call(-1));
    for (int at : {0, 23}) {
      ember_clear_error();
      EXPECT_EQ(row.call(at), EMBER_ERR_INVALID_ARGUMENT);
      const std::string msg = ember_last_error();
      EXPECT_TRUE(has_phrase(msg, std::string("(") + row.name + ")")) << msg;
      EXPECT_TRUE(has_phrase(msg, "offset " + std::to_string(row.size + static_cast<std::size_t>(at)))) << msg;
    }
  }
}

// The Vulkan input structs, read before any Vulkan object is touched (so fake non-NULL handles are safe here): a zero
// tail gets to the next check (its message proves the struct was accepted), a non-zero byte is refused by name.
TEST(StructTails, VulkanAdoptStructs) {
  ember_vulkan_device_desc desc{};
  desc.struct_size = sizeof desc;
  ember_device* d = nullptr;
  if (ember_vulkan_device_adopt(&desc, &d) == EMBER_ERR_UNSUPPORTED) GTEST_SKIP() << ember_last_error();
  auto expect_refused = [](ember_status s, const char* name, std::size_t offset) {
    EXPECT_EQ(s, EMBER_ERR_INVALID_ARGUMENT);
    const std::string msg = ember_last_error();
    EXPECT_TRUE(has_phrase(msg, std::string("(") + name + ")")) << msg;
    EXPECT_TRUE(has_phrase(msg, "offset " + std::to_string(offset))) << msg;
  };
  auto n = newer(desc, -1);
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt(&n.known, &d), EMBER_ERR_INVALID_ARGUMENT,
                   "instance, physical_device and device are required");
  n = newer(desc, 3);
  expect_refused(ember_vulkan_device_adopt(&n.known, &d), "ember_vulkan_device_desc", sizeof desc + 3);

  // A desc that passes its checks (never used: every call below fails before the device is touched).
  desc.instance = desc.physical_device = desc.device = reinterpret_cast<void*>(std::uintptr_t{0x10});
  ember_vulkan_adopt_options o;
  EMBER_ASSERT_OK(ember_vulkan_adopt_options_init(&o));
  o.shader_int64 = 7;  // refused after the struct is read: proves a zero tail was accepted
  auto on = newer(o, -1);
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt_ex(&desc, &on.known, &d), EMBER_ERR_INVALID_ARGUMENT, "shader_int64 is 7");
  on = newer(o, 0);
  expect_refused(ember_vulkan_device_adopt_ex(&desc, &on.known, &d), "ember_vulkan_adopt_options", sizeof o);

  ember_vulkan_allocator a;
  EMBER_ASSERT_OK(ember_vulkan_allocator_init(&a));
  auto an = newer(a, -1);
  o.allocator = &an.known;
  EMBER_EXPECT_ERR(ember_vulkan_device_adopt_ex(&desc, &o, &d), EMBER_ERR_INVALID_ARGUMENT,
                   "allocate_memory and free_memory are both required");
  an = newer(a, 23);
  expect_refused(ember_vulkan_device_adopt_ex(&desc, &o, &d), "ember_vulkan_allocator", sizeof a + 23);
  EXPECT_EQ(d, nullptr);
}

}  // namespace
}  // namespace ember::capi_test
