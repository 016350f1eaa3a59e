#pragma once
// Umbrella header for the typed engine.
#include "engine/autodiff/autodiff_backend.hpp"
#include "engine/fusion/fusion_backend.hpp"
#include "engine/tensor/display.hpp"
#include "engine/tensor/fft.hpp"
#include "engine/tensor/module_ops.hpp"
#include "engine/tensor/tensor.hpp"
#include "engine/tensor/shape_ops_tensor.hpp"
