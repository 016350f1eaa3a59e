// The executor's slot plan (onnx/executor.hpp SlotPlan, h-cnn): OnnxModel runs a graph without subgraphs through
// numbered slots; the results and errors must be the Scope path's, and every value must be dropped right after
// the last step that touches it (graph outputs never).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "onnx/executor.hpp"
#include "onnx/model.hpp"
#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

using test::node;

ValueInfo info(std::string name) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = DType::F32;
  return v;
}

DynTensor tensor(std::vector<float> v, Shape s) {
  return capi::from_data(capi::cpu_device(), TensorData::from_vec<float>(std::move(v), std::move(s)));
}

std::vector<float> values(const DynTensor& t) { return capi::to_data(t).to_vec<float>(); }

// a = x + w read twice by one node and once more later, an omitted optional input (Clip's min), a value nothing
// reads (u), an input read after other values died, outputs that later nodes also read.
Model planned_model() {
  Model m;
  m.opsets[""] = 13;
  m.graph.inputs.push_back(info("x"));
  for (const char* out : {"y", "z", "q"}) m.graph.outputs.push_back(info(out));
  m.graph.initializers.emplace_back("w", TensorData::from_vec<float>({1.f, -2.f}, Shape{2}));
  m.graph.initializers.emplace_back("hi", TensorData::from_vec<float>({0.5f}, Shape{}));
  m.graph.nodes.push_back(node("Add", {"x", "w"}, {"a"}));
  m.graph.nodes.push_back(node("Mul", {"a", "a"}, {"p"}));
  m.graph.nodes.push_back(node("Relu", {"a"}, {"r"}));
  m.graph.nodes.push_back(node("Add", {"p", "r"}, {"y"}));
  m.graph.nodes.push_back(node("Identity", {"y"}, {"z"}));
  m.graph.nodes.push_back(node("Clip", {"r", "", "hi"}, {"c"}));
  m.graph.nodes.push_back(node("Identity", {"x"}, {"u"}));
  m.graph.nodes.push_back(node("Sub", {"c", "x"}, {"q"}));
  for (std::size_t i = 0; i < m.graph.nodes.size(); ++i) m.graph.nodes[i].index = static_cast<int64_t>(i);
  return m;
}

TEST(OnnxSlotPlan, GivesTheScopePathsResults) {
  const Model ir = planned_model();
  OnnxModel model = OnnxModel::from_ir(ir, capi::cpu_device());
  const DynTensor x = tensor({0.25f, 3.f, -1.f, 0.75f}, Shape{2, 2});
  const std::vector<DynTensor> planned = model.forward({x});
  Executor exec(capi::cpu_device(), {{"", 13}}, false);
  const std::vector<DynTensor> scoped = exec.run(ir.graph, {x});
  ASSERT_EQ(planned.size(), 3u);
  ASSERT_EQ(scoped.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(capi::shape(planned[i]), capi::shape(scoped[i])) << "output " << i;
    EXPECT_EQ(values(planned[i]), values(scoped[i])) << "output " << i;
  }
  // x = [[0.25, 3], [-1, 0.75]], a = [[1.25, 1], [0, -1.25]]: y = a * a + relu(a), q = min(relu(a), 0.5) - x.
  EXPECT_EQ(values(planned[0]), (std::vector<float>{2.8125f, 2.f, 0.f, 1.5625f}));
  EXPECT_EQ(values(planned[2]), (std::vector<float>{0.25f, -2.5f, 1.f, -0.75f}));
  // A second call with another batch size reuses the plan.
  const std::vector<DynTensor> again = model.forward({tensor({1.f, 1.f}, Shape{1, 2})});
  EXPECT_EQ(values(again[1]), (std::vector<float>{6.f, 1.f}));
}

TEST(OnnxSlotPlan, DropsEachValueAfterTheLastStepThatTouchesIt) {
  const Model ir = planned_model();
  const ConverterTable table = converter_table(ir.graph, 13);
  const std::optional<SlotPlan> plan = plan_slots(ir.graph, table);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->steps.size(), ir.graph.nodes.size());
  // Each name's slot, and the last step that reads or writes it.
  std::map<std::string, std::size_t> slot, last;
  slot["x"] = plan->input_slots.at(0);
  slot["w"] = plan->initializer_slots.at(0);
  slot["hi"] = plan->initializer_slots.at(1);
  for (std::size_t s = 0; s < plan->steps.size(); ++s) {
    const Node& n = *plan->steps[s].node;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) {
        EXPECT_EQ(plan->steps[s].inputs[i], SlotPlan::kNone);
        continue;
      }
      EXPECT_EQ(plan->steps[s].inputs[i], slot.at(n.inputs[i])) << n.describe();
      last[n.inputs[i]] = s;
    }
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
      slot[n.outputs[i]] = plan->steps[s].outputs[i];
      last[n.outputs[i]] = s;
    }
  }
  EXPECT_EQ(slot.size(), plan->slots);
  for (const auto& [name, s] : slot) {
    int releases = 0;
    for (std::size_t step = 0; step < plan->steps.size(); ++step)
      for (std::size_t r : plan->steps[step].release)
        if (r == s) {
          ++releases;
          EXPECT_EQ(step, last.at(name)) << name << " is dropped at another step than its last";
        }
    const bool output = name == "y" || name == "z" || name == "q";
    EXPECT_EQ(releases, output ? 0 : 1) << name;
  }
}

TEST(OnnxSlotPlan, LeavesSubgraphsAndUnknownOperatorsToTheScopePath) {
  Model ir = planned_model();
  ConverterTable table = converter_table(ir.graph, 13);
  table.erase(&ir.graph.nodes[2]);
  EXPECT_FALSE(plan_slots(ir.graph, table));
  Graph branch;
  branch.outputs.push_back(info("x"));
  ir.graph.nodes[6] = node("If", {"x"}, {"u"}, {{"then_branch", test::graph_attr(branch)},
                                                  {"else_branch", test::graph_attr(branch)}});
  EXPECT_FALSE(plan_slots(ir.graph, converter_table(ir.graph, 13)));
}

TEST(OnnxSlotPlan, NamesTheFailingNodeAsTheScopePathDoes) {
  Model ir;
  ir.opsets[""] = 13;
  ir.graph.inputs.push_back(info("x"));
  ir.graph.outputs.push_back(info("y"));
  ir.graph.initializers.emplace_back("w", TensorData::from_vec<float>({1.f, 2.f, 3.f}, Shape{3}));
  ir.graph.nodes.push_back(node("Add", {"x", "w"}, {"y"}));
  ir.graph.nodes[0].name = "the_add";
  OnnxModel model = OnnxModel::from_ir(ir, capi::cpu_device());
  const DynTensor x = tensor({1.f, 2.f}, Shape{1, 2});
  std::string planned, scoped;
  try {
    model.forward({x});
  } catch (const OnnxError& e) {
    planned = e.what();
  }
  try {
    Executor(capi::cpu_device(), {{"", 13}}, false).run(ir.graph, {x});
  } catch (const OnnxError& e) {
    scoped = e.what();
  }
  EXPECT_NE(planned.find("the_add"), std::string::npos) << planned;
  EXPECT_EQ(planned, scoped);
}

}  // namespace
}  // namespace ember::onnx_import
