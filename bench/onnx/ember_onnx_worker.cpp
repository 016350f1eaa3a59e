// Ember's side of the ONNX Runtime peer benchmark (bench/onnx/compare_ort.py drives it, beside ort_worker.js):
// models imported by OnnxModel on the CPU backend, one thread (Ember's pool and OpenBLAS), inference under no_grad,
// timed on request so the driver can interleave short blocks of both sides. The line protocol is ort_worker.js's:
//
//   load NAME MODEL.onnx INPUT.safetensors   -> "ok"      the model, and the tensor "input" of the file
//   time NAME ITERS                          -> seconds   ITERS forwards of NAME back to back (wall clock)
//   out NAME PATH                            -> "ok"      one forward, its first output written to PATH as raw f32
//   quit
// Any failure answers "error <message>" and the worker goes on.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/cpu/parallel.hpp"
#include "onnx/model.hpp"
#include "records/safetensors.hpp"

namespace {

using ember::capi::DynTensor;
using ember::onnx_import::OnnxModel;

struct Workload {
  std::unique_ptr<OnnxModel> model;
  std::vector<DynTensor> inputs;
};

std::string handle(std::map<std::string, Workload>& workloads, std::istringstream& words) {
  std::string cmd, name;
  words >> cmd >> name;
  if (cmd == "load") {
    std::string model_path, input_path;
    words >> model_path >> input_path;
    const auto file = ember::SafetensorsFile::open(input_path);
    const auto* entry = file.find("input");
    if (entry == nullptr) throw ember::ArgumentError(fmt::format("{} has no tensor 'input'", input_path));
    Workload w;
    w.model = std::make_unique<OnnxModel>(OnnxModel::load(model_path, ember::capi::cpu_device()));
    w.inputs.push_back(ember::capi::from_data(ember::capi::cpu_device(), file.tensor(*entry)));
    workloads[name] = std::move(w);
    return "ok";
  }
  const auto it = workloads.find(name);
  if (it == workloads.end()) throw ember::ArgumentError(fmt::format("unknown workload '{}'", name));
  Workload& w = it->second;
  if (cmd == "time") {
    long iters = 0;
    words >> iters;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iters; ++i) w.model->forward(w.inputs, /*training=*/false);
    return fmt::format("{:.9f}", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (cmd == "out") {
    std::string path;
    words >> path;
    const auto y = ember::capi::to_data(w.model->forward(w.inputs, false).at(0)).convert(ember::DType::F32);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(y.bytes.data()),
                                                static_cast<std::streamsize>(y.bytes.size()));
    return "ok";
  }
  throw ember::ArgumentError(fmt::format("unknown command '{}'", cmd));
}

}  // namespace

int main() {
  ember::cpu::set_num_threads(1);  // also OpenBLAS's: ORT's side runs with intraOpNumThreads 1
  ember::capi::no_grad_enter();    // inference: no autodiff graph is recorded
  std::map<std::string, Workload> workloads;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    if (line.rfind("quit", 0) == 0) break;
    std::string reply;
    try {
      reply = handle(workloads, words);
    } catch (const std::exception& e) {
      reply = std::string("error ") + e.what();
      for (char& c : reply)
        if (c == '\n') c = ' ';
    }
    std::cout << reply << '\n' << std::flush;
  }
  return 0;
}
