#pragma once
// Tensor handles shared by the caller and the modules / optimizers that hold them as params.
//
// A caller-made param is the caller's own handle (ember_module_add_param, ember_optimizer_create_params): an
// in-place update through any holder (an optimizer step, a load, a lazy layer's materialization) is seen through
// that same pointer by everyone, as a torch.nn.Parameter is one object. Such a handle has two kinds of owners:
// holders (modules, optimizers: retain / release) and caller references (one per time ember.h handed the pointer
// out: creation, ember_module_param). ember_tensor_free drops one caller reference; the handle is deleted when the
// last owner of either kind is gone. A caller can never drop a holder's reference: freeing more often than it was
// handed the pointer is reported as freeing a dead handle.
#include "ember.h"

namespace ember::capi {

// A holder keeps the live handle `t` (checked by the caller of retain_tensor) alive until release_tensor.
void retain_tensor(ember_tensor* t);
void release_tensor(ember_tensor* t) noexcept;
// A held handle handed out to the caller once more (it then frees it once more).
void add_caller_ref(ember_tensor* t);
// For ember_tensor_free of a live handle: true when holders remain (one caller reference dropped, the handle stays);
// false when the handle has no holder and is to be freed now. Throws StatusError when the caller has no reference.
bool caller_free_shared_tensor(ember_tensor* t);

}  // namespace ember::capi
