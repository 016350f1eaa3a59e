// ember.h: ember_module_forward_rnn (issue 13): an LSTM / GRU module with initial states and per-sequence lengths.
#include <fmt/format.h>

#include "c_api/src/boundary.hpp"
#include "c_api/src/module_tree.hpp"

using namespace ember;
using namespace ember::capi;

extern "C" {

ember_status ember_module_forward_rnn(ember_module* module, const ember_tensor* x, const ember_tensor* h0,
                                      const ember_tensor* c0, const int64_t* lengths, size_t num_lengths,
                                      int32_t mode, ember_tensor** output, ember_tensor** h_n, ember_tensor** c_n) {
  return guard(__func__, [&] {
    if (!output) throw ArgumentError("output is NULL");
    if (!h_n) throw ArgumentError("h_n is NULL");
    *output = nullptr;
    *h_n = nullptr;
    if (c_n) *c_n = nullptr;
    if (mode != EMBER_MODE_EVAL && mode != EMBER_MODE_TRAIN) throw ArgumentError(fmt::format("unknown mode {}", mode));
    const std::shared_ptr<ModuleState> state = use(module, "module");
    const DynTensor& xt = use(x, "x");
    const DynTensor* h0t = h0 ? &use(h0, "h0") : nullptr;
    const DynTensor* c0t = c0 ? &use(c0, "c0") : nullptr;
    // The count is checked against x's batch before the caller's array is read.
    std::vector<int64_t> lens;
    if (lengths || num_lengths) {
      if (!lengths) throw ArgumentError(fmt::format("lengths is NULL but num_lengths is {}", num_lengths));
      const Shape s = shape(xt);
      if (s.rank() != 3) throw ShapeError(fmt::format("x must be rank 3, got {}", s.to_string()));
      if (num_lengths != static_cast<size_t>(s[0]) && num_lengths != static_cast<size_t>(s[1]))
        throw ShapeError(fmt::format("{} lengths for x of shape {}", num_lengths, s.to_string()));
      lens.assign(lengths, lengths + num_lengths);
    }
    const bool train = mode == EMBER_MODE_TRAIN;
    auto run = [&] { return forward_rnn(*state, xt, h0t, c0t, lens, train); };
    std::vector<DynTensor> r = state->tree ? tree_forward_with(*state, run) : run();
    if (r.size() == 3 && !c_n) throw ArgumentError("c_n is NULL (an LSTM has a cell state)");
    *output = make_handle<ember_tensor>(std::move(r[0]));
    *h_n = make_handle<ember_tensor>(std::move(r[1]));
    if (r.size() == 3) *c_n = make_handle<ember_tensor>(std::move(r[2]));
  });
}

}  // extern "C"
