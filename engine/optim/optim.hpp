#pragma once
// Umbrella header for optimizers: gradients by ParamId, accumulation, clipping, SGD, Adam/AdamW, lr schedulers.
#include "engine/optim/accumulator.hpp"
#include "engine/optim/adam.hpp"
#include "engine/optim/clip.hpp"
#include "engine/optim/grads.hpp"
#include "engine/optim/scheduler.hpp"
#include "engine/optim/sgd.hpp"
