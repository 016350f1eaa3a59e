// Splitting fused chains (fused_chain_split.hpp).
#include "backends/vulkan/fused_chain_split.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "engine/fusion/instr_operands.hpp"

namespace ember::vk {

using fusion::instr_operands;
using fusion::InstrKind;

fusion::Program extract_program(const fusion::Program& p, int32_t root, std::vector<std::size_t>& input_map) {
  fusion::Program q;
  input_map.clear();
  std::vector<int32_t> reg(p.instrs.size(), -1);     // old register -> new
  std::vector<int32_t> input(p.inputs.size(), -1);   // old input -> new
  // Post-order from root: operands before their users, root last.
  auto visit = [&](auto&& self, int32_t r) -> int32_t {
    if (reg[static_cast<std::size_t>(r)] >= 0) return reg[static_cast<std::size_t>(r)];
    fusion::Instr i = p.instrs[static_cast<std::size_t>(r)];
    const auto ops = instr_operands(i);
    std::vector<int32_t> mapped;
    for (int32_t o : ops) mapped.push_back(self(self, o));
    if (i.kind == InstrKind::Input) {
      int32_t& j = input[static_cast<std::size_t>(i.op)];
      if (j < 0) {
        j = static_cast<int32_t>(q.inputs.size());
        q.inputs.push_back(p.inputs[static_cast<std::size_t>(i.op)]);
        input_map.push_back(static_cast<std::size_t>(i.op));
      }
      i.op = j;
    }
    if (mapped.size() > 0) i.a = mapped[0];
    if (mapped.size() > 1) i.b = mapped[1];
    if (mapped.size() > 2) i.c = mapped[2];
    q.instrs.push_back(std::move(i));
    return reg[static_cast<std::size_t>(r)] = static_cast<int32_t>(q.instrs.size() - 1);
  };
  q.out = visit(visit, root);
  q.shape = p.instrs[static_cast<std::size_t>(root)].shape;
  return q;
}

std::optional<int32_t> split_point(const fusion::Program& p, const std::vector<int32_t>& alias,
                                   std::size_t max_bindings) {
  std::vector<std::set<int32_t>> reads(p.instrs.size());  // the distinct tensors under each register
  std::optional<int32_t> best;
  std::size_t best_reads = 1;
  for (std::size_t k = 0; k < p.instrs.size(); ++k) {
    const auto& i = p.instrs[k];
    if (i.kind == InstrKind::Input) {
      reads[k].insert(alias[static_cast<std::size_t>(i.op)]);
      continue;
    }
    for (int32_t o : instr_operands(i)) {
      const auto& under = reads[static_cast<std::size_t>(o)];
      reads[k].insert(under.begin(), under.end());
    }
    if (static_cast<int32_t>(k) == p.out || reads[k].size() > max_bindings) continue;
    if (reads[k].size() >= best_reads && reads[k].size() >= 2) {
      best = static_cast<int32_t>(k);
      best_reads = reads[k].size();
    }
  }
  return best;
}

}  // namespace ember::vk
