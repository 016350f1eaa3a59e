#pragma once
// What the CUDA ops do differently while a compiled training step is captured into a CUDA graph (issue 14,
// compiled_step_graph.cpp). A graph's kernels keep the arguments they were captured with, and a graph cannot wait
// for the host, so while DeviceContext::capture points at a GraphCapture:
//  * per-step values (Adam's lr and bias corrections, a dropout mask's key) are read by the kernels from a device
//    block (`step_words`) that each replay refills from the host before it launches the graph, instead of being
//    passed by value;
//  * validations (an index out of range) write their flag into the graph's own error words (`defer_check`) and are
//    reported by the replay after it ran, instead of being read back at once;
//  * every block allocated is kept for the graph's lifetime (`keep`): its kernels write there on every launch, so the
//    memory must never return to the caching allocator's free lists while the graph exists; so is every generated
//    kernel's library and every cuFFT plan the graph runs (`resources`), which their caches would otherwise unload or
//    destroy when they evict them;
//  * host uploads, read backs, copies between devices and new cuFFT plans are refused: a graph would repeat an
//    upload's values, and cannot contain a wait.
// The capture belongs to the thread that builds the graph. Another thread's op on the device meanwhile would be
// captured into it (the device has one stream): that op throws instead, and the build declines (`interfered`).
// Plain C++ (no CUDA types), shared by the .cu files and compiled_step_graph.cpp.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "backends/cuda/allocator.hpp"
#include "engine/tensor/error.hpp"

namespace ember::cuda {

class GraphCapture {
 public:
  // Room for per-step words and checks: a step needing more declines the graph (it replays op by op).
  static constexpr std::size_t kWordBytes = 64 * 1024;
  static constexpr std::size_t kChecks = 256;
  static constexpr std::size_t kAlign = 16;

  // words: kWordBytes of device memory; errors: kChecks pairs of device words [set, offending value].
  GraphCapture(std::shared_ptr<Block> words, std::shared_ptr<Block> errors)
      : words_(std::move(words)), errors_(std::move(errors)) {
    keep.push_back(words_);
    keep.push_back(errors_);
  }

  // A device block of `bytes` that each replay fills (at blocks()[i].offset of the per-step words) before the
  // launch; the kernel reads its value there.
  const void* step_words(std::size_t bytes) {
    const std::size_t at = (used_ + kAlign - 1) / kAlign * kAlign;
    if (at + bytes > kWordBytes)
      throw ArgumentError("the step needs more than 64 KiB of per-step scalars (a CUDA graph's limit here)");
    blocks_.push_back({at, bytes});
    used_ = at + bytes;
    return static_cast<const unsigned char*>(words_->ptr) + at;
  }
  // The two device words a validation kernel flags (zeroed before each launch), and what to throw when it did.
  unsigned long long* defer_check(std::function<void(int64_t offending)> report) {
    if (reports_.size() == kChecks)
      throw ArgumentError("the step makes more than 256 device checks (a CUDA graph's limit here)");
    reports_.push_back(std::move(report));
    return static_cast<unsigned long long*>(errors_->ptr) + 2 * (reports_.size() - 1);
  }

  struct WordBlock {
    std::size_t offset, bytes;
  };
  const std::vector<WordBlock>& blocks() const { return blocks_; }
  std::size_t word_bytes() const { return used_; }
  const std::vector<std::function<void(int64_t)>>& reports() const { return reports_; }
  void* words_device() const { return words_->ptr; }
  void* errors_device() const { return errors_->ptr; }

  // Every block allocated during the capture, and the blocks above.
  std::vector<std::shared_ptr<Block>> keep;
  // What the graph's nodes use beyond memory: the loaded libraries of Fusion's generated kernels, cuFFT plans.
  std::vector<std::shared_ptr<void>> resources;
  // The building thread; set when another thread's op met the capture (the graph may hold that op: declined).
  const std::thread::id owner = std::this_thread::get_id();
  std::atomic<bool> interfered{false};

 private:
  std::shared_ptr<Block> words_, errors_;
  std::vector<WordBlock> blocks_;
  std::size_t used_ = 0;
  std::vector<std::function<void(int64_t)>> reports_;
};

}  // namespace ember::cuda
