#pragma once
// What a capture records (engine/compile/README.md): value cells and the flat list of ops over them.
//
// A Capture<B> tensor is a shared handle on a Cell holding B's value. While a Tape is active on the thread, every
// op Capture<B> runs also appends a closure that reads its input cells and rewrites its output cell; replaying the
// tape on new input values recomputes every cell the step wrote, with none of the host work (autodiff graph,
// module reflection, optimizer maps) that issued the ops the first time.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/ops.hpp"
#include "engine/optim/capture_hook.hpp"
#include "engine/tensor/host_check.hpp"

namespace ember::compile_detail {

// A value slot, type-erased so the compiled step can pair slots of any kind (state before / after the step).
struct CellBase {
  virtual ~CellBase() = default;
  virtual void copy_from(const CellBase& other) = 0;
  // A new cell holding this one's value (values are immutable: a snapshot of a cell is a shared handle on it).
  virtual std::shared_ptr<CellBase> clone() const = 0;
  // Drops the value (a device plan that replaced the tape lets its intermediates go: step_plan.hpp).
  virtual void reset() = 0;
};

template <class P>
struct Cell final : CellBase {
  std::optional<P> v;
  void copy_from(const CellBase& other) override { v = static_cast<const Cell&>(other).v; }
  std::shared_ptr<CellBase> clone() const override {
    auto c = std::make_shared<Cell>();
    c->v = v;
    return c;
  }
  void reset() override { v.reset(); }
};

// The per-step scalars of one recorded Adam update: the op reads `args`, which the compiled step refills before
// each replay through `advance` (one more step on the param's slot, for that call's lr).
struct AdamScalars {
  const void* optimizer = nullptr;
  double captured_lr = 0;
  std::function<AdamStepArgs(double lr)> advance;
  std::shared_ptr<AdamStepArgs> args;
};

class Tape final : public OptimizerCaptureListener, public HostCheckSink {
 public:
  std::vector<std::function<void()>> ops;
  std::vector<AdamScalars> adam;
  std::vector<const void*> optimizers;  // every optimizer that ran an update during the capture
  // Every cell made while recording (op results, constants, random draws), in creation order: what a caller that
  // replays part of the tape and runs the rest later (ember_compile's backward segment) snapshots in between.
  std::vector<std::shared_ptr<CellBase>> cells;
  // The indices in `ops` of the host checks (host_check): a device plan built from the tape leaves them to the
  // kernels' own deferred checks (a host read cannot be part of a command buffer).
  std::vector<std::size_t> check_ops;
  // The indices in `ops` of the random draws (each replay draws anew from ember's global generator).
  std::vector<std::size_t> random_ops;

  // The first reason found that this capture cannot be replayed (empty: it can).
  const std::string& refusal() const { return refusal_; }
  void refuse(std::string why) {
    if (refusal_.empty()) refusal_ = std::move(why);
  }
  // Host reads are allowed only inside a validation (host_check), which the tape re-runs on replay.
  bool reading_allowed() const { return check_depth_ > 0; }

  void update_begun(const void* optimizer, const std::string& kind) override {
    optimizers.push_back(optimizer);
    ++updates_;
    pending_kind_ = kind;
  }
  void adam_scalars(const void* optimizer, double lr, std::function<AdamStepArgs(double)> advance) override {
    pending_ = AdamScalars{optimizer, lr, std::move(advance), nullptr};
  }
  // Called by Capture<B>::float_adam_step while recording: the args cell its closure reads, or null when no
  // optimizer announced the update's scalars (then they would be frozen: the capture is refused).
  std::shared_ptr<AdamStepArgs> take_adam_scalars(const AdamStepArgs& now) {
    if (!pending_) {
      refuse("an Adam update whose step scalars no optimizer reported (they would be frozen at their captured values)");
      return std::make_shared<AdamStepArgs>(now);
    }
    pending_->args = std::make_shared<AdamStepArgs>(now);
    adam.push_back(std::move(*pending_));
    pending_.reset();
    return adam.back().args;
  }
  // Every optimizer update must have reported its scalars (only Adam / AdamW do); another's lr would be frozen.
  void finish() {
    if (updates_ != adam.size())
      refuse(pending_kind_ +
             "'s update takes its lr as a frozen host scalar (only Adam / AdamW report per-step "
             "scalars to a capture)");
  }

  void host_check(const std::function<void()>& check) override {
    ++check_depth_;
    try {
      check();
    } catch (...) {
      --check_depth_;
      throw;
    }
    --check_depth_;
    check_ops.push_back(ops.size());
    ops.push_back(check);
  }

 private:
  std::string refusal_;
  std::optional<AdamScalars> pending_;
  std::size_t updates_ = 0;
  std::string pending_kind_;
  int check_depth_ = 0;
};

// The tape recording on this thread, if any.
inline Tape*& active_tape() {
  static thread_local Tape* tape = nullptr;
  return tape;
}

// Makes `tape` the thread's recording tape (and its optimizer / host-check listener) for the scope.
class Recording {
 public:
  explicit Recording(Tape& tape)
      : prev_tape_(active_tape()), prev_opt_(optimizer_capture_listener()), prev_check_(host_check_sink()) {
    active_tape() = &tape;
    optimizer_capture_listener() = &tape;
    host_check_sink() = &tape;
  }
  ~Recording() {
    active_tape() = prev_tape_;
    optimizer_capture_listener() = prev_opt_;
    host_check_sink() = prev_check_;
  }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

 private:
  Tape* prev_tape_;
  OptimizerCaptureListener* prev_opt_;
  HostCheckSink* prev_check_;
};

}  // namespace ember::compile_detail
