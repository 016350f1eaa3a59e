#pragma once
// All losses.
#include "engine/nn/loss/binary_cross_entropy.hpp"
#include "engine/nn/loss/cross_entropy.hpp"
#include "engine/nn/loss/huber.hpp"
#include "engine/nn/loss/mse.hpp"
#include "engine/nn/loss/reduction.hpp"
