// ONNX operators of the rnn family: LSTM, GRU, RNN (h-onnx-seq).
#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

void register_rnn_ops(OpRegistry& r) { (void)r; }

}  // namespace ember::onnx_import
