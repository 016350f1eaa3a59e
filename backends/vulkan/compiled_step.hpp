#pragma once
// A compiled training step's Vulkan plan, submitted by the host itself (issue 14): ember::compile on
// Autodiff<Capture<Vulkan>> records each captured signature into a vk::Plan (compiled_step_plan.cpp), which Ember
// submits on every later call. A game engine that trains in its own frames records that plan once into a command
// buffer of its own and submits it like any other work:
//
//   auto step = ember::compile<Autodiff<Capture<Vulkan>>>(fn, model, adam);
//   step(lr, x, y); step(lr, x, y);                 // the first call makes Adam's moments, the second captures
//   vk::Plan& plan = ember::vulkan::training_plan(step);
//   plan.bind_input(0, x_buffer, 0);               // the step's tensor arguments, in order (TRANSFER_SRC)
//   plan.bind_input(1, y_buffer, 0);
//   plan.bind_output(0, loss_buffer, 0);           // its results (TRANSFER_DST)
//   plan.record(frame_cb);                          // once; then per frame:
//   step.prepare_plan(lr);                          // the optimizer counts a step; lr and bias corrections written
//   /* vkQueueSubmit(frame_cb), and before the next prepare_plan the host knows it executed (its fence) */
//
// The step's params and optimizer moments live in the plan's storage, which the caller's module and optimizer hold
// after the capture: each submit updates them in place (read them through the module as usual, once the submit
// executed). prepare_plan writes host-visible words the plan reads, so it must not run while a submit of the plan
// is pending. A module the caller replaces afterwards is read only by Ember's own replays (a call of `step`).
#include "backends/vulkan/plan.hpp"
#include "engine/compile/step_plan.hpp"

namespace ember::vulkan {

// The Vulkan plan of a compiled step's device plan; ArgumentError when there is none.
vk::Plan& plan_of(const compile_detail::StepPlan* p);

template <class Step>
vk::Plan& training_plan(const Step& step) {
  return plan_of(step.device_plan());
}

}  // namespace ember::vulkan
