// The fuzzer's RNN rows (issue 13, h-rnn; declared in fuzz_actions.hpp, placed in kActions by fuzz_actions.cpp):
// LSTM / GRU modules with fuzzed sizes (mostly tiny, sometimes negative or huge: refused before any allocation),
// and ember_module_forward_rnn on them or on any module of the pool, with fuzzed inputs, states, lengths (values
// and count: NULL with a count, too few, zero, past the sequence) and out pointers (NULL or not).
#include <vector>

#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {

void rnn(Ctx& c) {
  if (c.flag()) {
    Padded<ember_layer_desc> d;
    Ctx::check("ember_layer_init", ember_layer_init(&d.value, c.flag() ? EMBER_LAYER_LSTM : EMBER_LAYER_GRU));
    d.value.in_features = c.size();
    d.value.out_features = c.size();
    d.value.num_layers = c.size();
    d.value.bidirectional = c.choice(2);
    d.value.batch_first = c.choice(2);
    d.value.bias = c.choice(2);
    if (c.flag()) d.value.p = c.real();
    d.value.struct_size = c.struct_size(sizeof d.value);
    if (c.flag()) MAKE(ember_module_sequential, c.device(), &d.value, size_t{1});
    else MAKE(ember_module_layer, c.device(), &d.value);
    return;
  }
  std::vector<int64_t> lengths(c.in.ConsumeIntegralInRange<std::size_t>(0, 4));
  for (auto& v : lengths) v = c.in.ConsumeIntegralInRange<int64_t>(-1, 6);
  const int64_t* lp = c.flag() ? lengths.data() : nullptr;  // NULL with a count must be refused
  ember_tensor *out = nullptr, *h_n = nullptr, *c_n = nullptr;
  const ember_tensor* h0 = c.flag() ? c.tensor() : nullptr;
  const ember_tensor* c0 = c.flag() ? c.tensor() : nullptr;
  CALL(ember_module_forward_rnn, c.module(), c.tensor(), h0, c0, lp, lengths.size(), c.choice(3),
       c.flag() ? &out : nullptr, c.flag() ? &h_n : nullptr, c.flag() ? &c_n : nullptr);
  if (out) c.keep(out, "ember_module_forward_rnn");
  if (h_n) c.keep(h_n, "ember_module_forward_rnn");
  if (c_n) c.keep(c_n, "ember_module_forward_rnn");
}

}  // namespace ember_fuzz
