#pragma once
// A Vulkan context: the instance/device/queue Ember runs on, created by Ember or adopted from a host application
// (a game engine that already owns them), plus what hangs off it: the memory pools, the pipelines and the command
// stream. Every Vulkan tensor points at its context; ops on one context are serialized by its mutex.
#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/host_allocator.hpp"
#include "backends/vulkan/queue_choice.hpp"
#include "backends/vulkan/vk_check.hpp"
#include "backends/vulkan/vk_functions.hpp"

namespace ember::vk {

class Allocator;
class LossInjection;
class Pipelines;
class Stream;

// How Ember creates its own device (ignored for adopted devices, except `validation` which only reports).
struct ContextOptions {
  // Enable VK_LAYER_KHRONOS_validation and a VK_EXT_debug_utils messenger; every warning or error message is
  // counted and kept (validation_messages()). Also switched on by EMBER_VULKAN_VALIDATION=1.
  bool validation = false;
  // With validation: also the layer's synchronization validation (VK_EXT_validation_features), which reports
  // read-after-write / write-after-read hazards between commands that lack a barrier. A CPU driver such as lavapipe
  // executes commands in order, so a missing barrier never shows in results there; this is what catches it.
  // Off with EMBER_VULKAN_SYNC_VALIDATION=0 (it costs time on long graphs).
  bool synchronization_validation = true;
  // Tensor memory is never host-visible to Ember, even where the device's memory is (integrated GPUs, lavapipe):
  // uploads and reads go through staging buffers and recorded copies, as on a discrete GPU, so unified-memory
  // machines test that path too. Also switched on by EMBER_VULKAN_DEVICE_LOCAL=1.
  bool device_local_tensors = false;
  // Physical device index in enumeration order; -1 picks the first discrete GPU, else integrated, else any
  // (EMBER_VULKAN_DEVICE=n overrides).
  int device_index = -1;
  // Initial VkPipelineCache contents from a previous save_pipeline_cache() (ignored when it does not match).
  std::vector<uint8_t> pipeline_cache;
  // Called with every validation warning/error message as it happens, on the thread that made the Vulkan call
  // (tests fail the running test from here).
  std::function<void(const std::string&)> on_validation_message;
  // Dispatches recorded per command buffer before it is submitted (so long graphs execute while Ember records).
  // 0: Ember never submits by itself (the caller's flush policy): batches grow without bound, no op waits on a fence,
  // and device-side checks are read later (Stream::poll_errors) instead of synchronously.
  uint32_t dispatches_per_submit = 64;

  // Settings a host sets when adopting its device (ember.h's ember_vulkan_adopt_options; issue 17).
  HostAllocator host_allocator;             // set: the blocks' memory comes from the host (memory.hpp)
  VkDeviceSize memory_budget = 0;           // bytes Ember may hold; 0: no limit (own devices too)
  VkBufferUsageFlags tensor_buffer_usage = 0;  // extra usages of tensor memory (vertex, indirect; own devices too)
  // false: Int tensors are stored and computed as int32 (shaders/int64.glsl). Ember's own device also goes without
  // shaderInt64 when EMBER_VULKAN_NO_INT64=1 or when the device lacks it.
  bool shader_int64 = true;
  bool timeline_semaphore = true;           // false: only host-record mode (no submits of Ember's own)
  // true: f16 variants of the shaders that have one (today the GEMM behind matmul and conv2d: f16 operands and
  // products, f32 sums; about three significant digits). Ember's own device also turns them on with
  // EMBER_VULKAN_FLOAT16=1, in both cases only where the device has shaderFloat16.
  bool shader_float16 = false;
  // true: f16 storage variants (issue 17 part 6, where the device has storageBuffer16BitAccess): a plan keeps an f16
  // copy of each weight its GEMMs read as the B operand, made once when the plan is built, and reads it through the
  // GEMM's B16 variant (half the weight bytes per replay; weights rounded to f16, arithmetic unchanged). Eager ops
  // are unaffected. Ember's own device: also EMBER_VULKAN_FLOAT16=storage.
  bool storage_float16 = false;
  // true: each f16 variant exactly where the device reports its feature (shaderFloat16: arithmetic,
  // storageBuffer16BitAccess: storage), whatever the two flags above say. For an adopted device it says the host
  // enabled every one of those features its physical device has. Ember's own device: also EMBER_VULKAN_FLOAT16=auto.
  bool float16_auto = false;
  VkPipelineCache host_pipeline_cache = VK_NULL_HANDLE;  // the host's cache Ember compiles into

  // --- issue 17 part 8: the queue of Ember's own device (queue_choice.hpp; EMBER_VULKAN_QUEUE overrides).
  QueuePreference queue_preference = QueuePreference::AsyncCompute;
  int queue_family = -1;     // >= 0: this family, whatever its flags (it needs VK_QUEUE_COMPUTE_BIT)
  uint32_t queue_index = 0;  // the queue of the family Ember uses (it creates queue_index + 1 queues)
};

// The error of a submit on a context without timeline semaphores.
inline constexpr const char* kNoTimelineMessage =
    "vulkan: this device was adopted without timeline semaphores: use host-record mode";

// A device the host application owns (interop.hpp, and ember.h's ember_vulkan_device_desc). Ember never destroys
// these objects; it shares the queue, calling lock/unlock around each use when given.
struct ExternalDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  uint32_t queue_index = 0;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;  // null: the loader's
  void (*lock_queue)(void* user) = nullptr;
  void (*unlock_queue)(void* user) = nullptr;
  void* user = nullptr;
};

// What Ember needs from a device it is handed (query before creating the device).
struct Requirements {
  uint32_t api_version = VK_API_VERSION_1_2;
  std::vector<const char*> device_extensions;  // none beyond core 1.2 today
  // Features that must be enabled: shaderInt64 (Int tensors are int64), timelineSemaphore (host sync).
  bool shader_int64 = true;
  bool timeline_semaphore = true;
  VkQueueFlags queue_flags = VK_QUEUE_COMPUTE_BIT;
};
Requirements requirements();

struct DeviceInfo {
  std::string name;
  uint32_t vendor_id = 0, device_id = 0, api_version = 0;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  VkDeviceSize max_storage_buffer_range = 0;
  VkDeviceSize min_storage_buffer_offset_alignment = 0;
  uint32_t max_compute_shared_memory = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_count_x = 0;
  uint32_t subgroup_size = 0;
  bool unified_memory = false;  // integrated / CPU device: device-local memory is host-visible
  bool device_local_tensors = false;  // ContextOptions::device_local_tensors: tensors are never mapped
  bool synchronization_validation = false;  // the validation layer checks hazards between commands
};

class Context {
 public:
  // Creates an instance and device of Ember's own.
  explicit Context(const ContextOptions& options);
  // Adopts the host's device (never destroyed by Ember).
  Context(const ExternalDevice& external, const ContextOptions& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Functions& fn() const { return fn_; }
  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  uint32_t queue_index() const { return queue_index_; }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_props_; }
  bool owns_device() const { return owns_device_; }
  // Int tensors are int64 on the device (shaderInt64 enabled); false: int32, wrapping around at 32 bits.
  bool int64() const { return int64_; }
  // Ember's timeline semaphore exists and Ember may submit; false: adopted without timeline semaphores, usable in
  // host-record mode only (every submit path throws timeline_required_message()).
  bool timeline_semaphores() const { return timeline_semaphores_; }
  // f16 shader variants are used (ContextOptions::shader_float16 on a device with shaderFloat16).
  bool float16() const { return float16_; }
  // f16 storage variants are used (ContextOptions::storage_float16 / float16_auto, storageBuffer16BitAccess).
  bool float16_storage() const { return float16_storage_; }

  Allocator& allocator() { return *allocator_; }
  Pipelines& pipelines() { return *pipelines_; }
  Stream& stream() { return *stream_; }
  bool has_stream() const { return stream_ != nullptr; }  // false while the context is being built
  // Held while recording or submitting: one Ember op at a time per context.
  std::recursive_mutex& mutex() { return mutex_; }

  // Runs f with the (possibly shared) queue locked by the host's callbacks.
  void with_queue(const std::function<void(VkQueue)>& f);

  // Validation-layer / debug-utils messages of severity warning or error seen so far (only with validation on).
  std::size_t validation_message_count() const { return validation_count_.load(); }
  std::vector<std::string> validation_messages() const;
  void clear_validation_messages();

  // Waits for all work Ember submitted on this context.
  void synchronize();

  std::vector<uint8_t> save_pipeline_cache() const;

  // State an op family keeps per context beyond pipelines (VkFFT's plans): created by make() on the first call
  // with `key`, destroyed once Ember's work has finished and before the allocator and the device go.
  struct Extension {
    virtual ~Extension() = default;
  };
  Extension& extension(const std::string& key, const std::function<std::unique_ptr<Extension>()>& make);

  // --- issue 17 part 8: device lost (simulated: device_lost.hpp). A VK_ERROR_DEVICE_LOST seen by check() or
  // throw_result() marks the context lost; from then on ensure_alive() throws DeviceLost at once, and every path
  // that would record, submit or wait calls it first: nothing touches the queue or a fence again. Destroying the
  // context stays valid (it only destroys objects, which Vulkan allows on a lost device).
  void check(VkResult r, const char* call) {
    if (r != VK_SUCCESS) throw_result(r, call);
  }
  [[noreturn]] void throw_result(VkResult r, const char* call);
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  void ensure_alive() const;
  // Simulates a loss (device_lost.hpp): the submit or blocking wait after `after` more of them reports
  // VK_ERROR_DEVICE_LOST. Also armed by EMBER_VULKAN_INJECT_DEVICE_LOST at creation.
  void simulate_device_lost(uint32_t after);
  // Submits / waits / queries Ember made after a simulated loss was reported (0 unless simulated).
  uint64_t calls_after_simulated_loss() const;

 private:
  void mark_lost(const char* call);
  void release() noexcept;
  void create_instance(const ContextOptions& options);
  void pick_physical_device(const ContextOptions& options);
  void create_device(const ContextOptions& options);
  void install_messenger();
  // ContextOptions::float16_auto on an adopted device: the f16 variants its physical device has features for.
  void adopt_float16_auto();
  void read_info(const ContextOptions& options);
  void create_subsystems(const ContextOptions& options);
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* self);

  Functions fn_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t queue_index_ = 0;
  bool owns_instance_ = false;
  bool owns_device_ = false;
  bool int64_ = true;
  bool timeline_semaphores_ = true;
  bool float16_ = false;
  bool float16_storage_ = false;
  bool validation_ = false;
  bool sync_validation_ = false;
  ExternalDevice external_{};
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  VkPhysicalDeviceMemoryProperties memory_props_{};

  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<Stream> stream_;
  std::vector<std::pair<std::string, std::unique_ptr<Extension>>> extensions_;
  std::recursive_mutex mutex_;

  // Device lost: set once; lost_call_ (the call that saw it) is written before lost_ and read after it.
  std::atomic<bool> lost_{false};
  mutable std::mutex lost_mutex_;
  std::string lost_call_;
  std::unique_ptr<LossInjection> injection_;

  std::function<void(const std::string&)> on_message_;
  std::atomic<std::size_t> validation_count_{0};
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

// The process-wide default context (what a default-constructed VulkanDevice means), created on first use with
// options from the environment. Throws VulkanError when no Vulkan device exists.
std::shared_ptr<Context> default_context();
// Whether a Vulkan device can be created here at all (tests use it to skip with a message); fills `why` if not.
bool available(std::string* why = nullptr);
// How many physical devices the Vulkan loader reports, enumerated with a throwaway instance (no layers, no
// extensions: cheap, and it says nothing about validation); 0 with the reason in `why` when there is no loader,
// no driver or no device. Never throws.
uint32_t physical_device_count(std::string* why = nullptr);
// Replaces the default context's options before its first use (tests turn validation on this way).
void set_default_options(const ContextOptions& options);
// Releases the default context now (it is otherwise left to the OS at exit, see context.cpp); tensors still
// holding it keep it alive until they go. The next default_context() creates a new one.
void shutdown_default();

}  // namespace ember::vk
