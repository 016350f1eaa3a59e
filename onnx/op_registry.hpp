#pragma once
// ONNX operators as Ember ops (issue 19): each operator is a converter from its node and input tensors to its
// outputs, written with the C runtime's ops (c_api/src/runtime/tensor_ops.hpp), so an imported graph runs on every
// backend (cpu, vulkan, cuda), records autodiff like any other runtime op (gradients reach the initializers, which
// are the model's Params), and needs no second interpreter. Converters live in onnx/ops/<family>.cpp, each family
// registering its operators in register_<family>_ops; op_registry.cpp calls every family once.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "c_api/src/runtime/tensor_ops.hpp"
#include "onnx/ir.hpp"

namespace ember::onnx_import {

using capi::DynDevice;
using capi::DynTensor;

class Executor;  // onnx/executor.hpp: runs (sub)graphs for If / Loop / Scan

// What a converter sees of one node while the graph runs.
struct OpContext {
  const Node& node;
  int64_t opset = 0;  // the model's opset of the node's domain
  const DynDevice& device;
  bool training = false;  // Dropout, BatchNormalization's training_mode default
  std::vector<std::optional<DynTensor>> inputs;  // one per node input; nullopt where the input is omitted ("")
  Executor* executor = nullptr;  // for subgraph attributes (If, Loop, Scan)

  std::size_t num_inputs() const { return inputs.size(); }
  std::size_t num_outputs() const { return node.outputs.size(); }
  bool has_input(std::size_t i) const { return i < inputs.size() && inputs[i].has_value(); }
  // The input, or an OnnxError naming the node when it is missing.
  const DynTensor& input(std::size_t i) const;
  // A small integer tensor input read to the host (shapes, axes, pads, starts/ends, repeats, k): any integer dtype,
  // at most 2^20 elements (an OnnxError beyond). Reads back from the device when the tensor lives on a GPU.
  std::vector<int64_t> ints(std::size_t i) const;
  // A scalar input of any dtype as a double (Clip's min/max, Pad's constant_value, Range's start/limit/delta).
  double scalar(std::size_t i) const;
  // An OnnxError "<node>: <what>", for rules the operator's inputs break.
  [[noreturn]] void fail(const std::string& what) const;
};

// Host data (initializers, Constant values, test inputs) as a tensor on `device`. float64 data becomes float32 on
// the backends that compute in float32 (Vulkan, CUDA: the runtime refuses float64 there), so a double model runs on
// a GPU in single precision rather than not at all; on the CPU it stays float64.
DynTensor upload(const DynDevice& device, const TensorData& data);

// ONNX's TensorProto.DataType (a Cast's `to`, EyeLike's `dtype`, ...) as Ember's DType; an UnsupportedDTypeError
// naming the type where Ember has none (int8, uint16/32/64, bfloat16, string, complex).
DType onnx_elem_dtype(const OpContext& ctx, int64_t elem);

// Returns one value per node output, in order; nullopt for an omitted optional output that was not computed.
using Converter = std::function<std::vector<std::optional<DynTensor>>(OpContext&)>;

class OpRegistry {
 public:
  // Registers op_type (default domain) for opsets [since, until]; a later add for an overlapping range of the same
  // op is a programming error (std::logic_error at first use).
  void add(std::string op_type, Converter fn, int64_t since = 1, int64_t until = 1000);
  // The converter of op_type at `opset`, or nullptr.
  const Converter* find(std::string_view op_type, int64_t opset) const;
  // Every registered operator name, sorted (the supported-operator list of the README and `ember run --list-ops`).
  std::vector<std::string> names() const;

 private:
  struct Entry {
    std::string op_type;
    int64_t since, until;
    Converter fn;
  };
  std::vector<Entry> entries_;
};

// Built once, on first use, from every family below.
const OpRegistry& op_registry();

// The families (one file each under onnx/ops/).
void register_core_ops(OpRegistry& r);         // Constant, Identity, If, Loop, Scan, ... (onnx/ops/core.cpp)
void register_elementwise_ops(OpRegistry& r);  // math, comparisons, logic, activations, Cast, Clip, Where
void register_shape_ops(OpRegistry& r);        // Reshape, Transpose, Gather, Slice, Concat, ..., TopK, CumSum
void register_reduce_ops(OpRegistry& r);       // Reduce*, ArgMax/ArgMin
void register_nn_ops(OpRegistry& r);           // Conv, pools, norms, Gemm/MatMul, Softmax, Dropout, Resize, Pad
void register_rnn_ops(OpRegistry& r);          // LSTM, GRU, RNN

}  // namespace ember::onnx_import
