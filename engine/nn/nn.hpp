#pragma once
// Umbrella header for ember::nn: layers, activations, initializers and losses.
//
// Conventions (Burn-style): a layer with params is `template <Backend B> struct X` reflected with
// BOOST_HANA_DEFINE_STRUCT, built by `XConfig{...}.init<B>(device)` with lazy params (nothing is sampled or
// allocated until first use); a layer without params (activations, pools, Dropout) is a plain struct with a
// templated forward, backend-independent, and carries no record entries.
#include "engine/module/module.hpp"
#include "engine/nn/activation/gelu.hpp"
#include "engine/nn/activation/leaky_relu.hpp"
#include "engine/nn/activation/prelu.hpp"
#include "engine/nn/activation/relu.hpp"
#include "engine/nn/activation/sigmoid.hpp"
#include "engine/nn/activation/silu.hpp"
#include "engine/nn/activation/softmax.hpp"
#include "engine/nn/activation/softplus.hpp"
#include "engine/nn/activation/tanh.hpp"
#include "engine/nn/activation/threshold.hpp"
#include "engine/nn/batch_norm.hpp"
#include "engine/nn/conv1d.hpp"
#include "engine/nn/conv2d.hpp"
#include "engine/nn/dropout.hpp"
#include "engine/nn/embedding.hpp"
#include "engine/nn/identity.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/layer_norm.hpp"
#include "engine/nn/linear.hpp"
#include "engine/nn/loss/loss.hpp"
#include "engine/nn/pool2d.hpp"
#include "engine/nn/positional_embedding.hpp"
#include "engine/nn/multihead_attention.hpp"
#include "engine/nn/transformer_decoder.hpp"
#include "engine/nn/transformer_encoder.hpp"
#include "engine/nn/sequential.hpp"
