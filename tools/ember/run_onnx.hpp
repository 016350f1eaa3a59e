#pragma once
// `ember run MODEL.onnx`: runs an ONNX model on .npy inputs through the C ABI (libember's ember_onnx_*), printing
// each output's shape and leading values, the load and forward times and the backend. libember is dlopen'ed only
// by this command, so the other commands (and `ember --help`) map neither it nor the protobuf/ONNX libraries.
#include <ostream>
#include <string>
#include <vector>

namespace ember::tools {

struct RunOnnxOptions {
  std::string model;                 // path of the .onnx file
  std::vector<std::string> inputs;   // .npy files, one per graph input, in order
  std::vector<std::string> outputs;  // .npy files for the first outputs, in order (may be fewer than the outputs)
  std::string backend = "cpu";       // cpu, vulkan, cuda
  bool list_ops = false;             // print the supported operators instead
  int shown = 8;                     // leading values printed per output
  int repeat = 1;                    // forward runs; beyond the first, their mean time is printed too
};

// Returns the exit code; failures throw ember::Error with libember's message.
int run_onnx(const RunOnnxOptions& options, std::ostream& out);

}  // namespace ember::tools
