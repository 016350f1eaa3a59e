#pragma once
// The autodiff graph: every recorded float op creates a Node that knows its parents and how to turn the gradient
// of its output into gradients of its inputs. Nodes are owned by the tensors that refer to them (shared_ptr), so
// a graph lives exactly as long as some tensor can still reach it; backward() also releases the closures it ran.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/tensor/error.hpp"

namespace ember::autodiff {

inline uint64_t next_node_id() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

// While a NoGrad is alive on a thread, ops on that thread record nothing.
inline bool& no_grad_flag() {
  thread_local bool flag = false;
  return flag;
}
class NoGrad {
 public:
  NoGrad() : previous_(no_grad_flag()) { no_grad_flag() = true; }
  ~NoGrad() { no_grad_flag() = previous_; }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

template <class FP>
struct Node;

// What a backward step receives: which parents need a gradient, and where to put them.
template <class FP>
struct BackwardCtx {
  std::vector<bool> need;
  std::vector<std::optional<FP>> grads;
};

template <class FP>
struct Node {
  uint64_t id = next_node_id();
  bool leaf = false;      // created by require_grad: its gradient is kept in Gradients
  bool released = false;  // its backward step already ran and was freed
  std::vector<std::shared_ptr<Node>> parents;  // null entries: inputs that are not tracked
  std::function<void(const FP& grad, BackwardCtx<FP>& ctx)> backward;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Iterative teardown: releasing a long chain through the parents' own destructors would recurse once per node
  // and overflow the stack (a graph of ~100k ops that is dropped without backward). Parents whose last owner is
  // this teardown hand their own parents over before they die, so every destructor below runs with no parents.
  ~Node() {
    std::vector<std::shared_ptr<Node>> pending = std::move(parents);
    while (!pending.empty()) {
      std::shared_ptr<Node> p = std::move(pending.back());
      pending.pop_back();
      if (p && p.use_count() == 1) {
        for (auto& q : p->parents) pending.push_back(std::move(q));
        p->parents.clear();
      }
    }  // p released at the end of each iteration, parent-less
  }
};

// An autodiff float tensor: the inner value plus the node that produced it (null when nothing is tracked).
template <class FP>
struct AdTensor {
  FP value;
  std::shared_ptr<Node<FP>> node;
};

// Gradients of the leaves reached by one backward pass, keyed by node id.
template <class FP>
class Gradients {
 public:
  std::optional<FP> get(uint64_t id) const {
    auto it = map_.find(id);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<FP> remove(uint64_t id) {
    auto it = map_.find(id);
    if (it == map_.end()) return std::nullopt;
    FP g = std::move(it->second);
    map_.erase(it);
    return g;
  }
  void put(uint64_t id, FP g) { map_.insert_or_assign(id, std::move(g)); }
  std::size_t size() const { return map_.size(); }

 private:
  std::unordered_map<uint64_t, FP> map_;
};

// Records `out` as produced from `inputs` unless no input is tracked or recording is off.
template <class FP, class F>
AdTensor<FP> record(FP out, std::initializer_list<const AdTensor<FP>*> inputs, F&& backward) {
  AdTensor<FP> r{std::move(out), nullptr};
  if (no_grad_flag()) return r;
  bool any = false;
  for (auto* in : inputs) any = any || in->node != nullptr;
  if (!any) return r;
  auto node = std::make_shared<Node<FP>>();
  for (auto* in : inputs) node->parents.push_back(in->node);
  node->backward = std::forward<F>(backward);
  r.node = std::move(node);
  return r;
}

template <class FP>
AdTensor<FP> record_many(FP out, const std::vector<const AdTensor<FP>*>& inputs,
                         std::function<void(const FP&, BackwardCtx<FP>&)> backward) {
  AdTensor<FP> r{std::move(out), nullptr};
  if (no_grad_flag()) return r;
  bool any = false;
  for (auto* in : inputs) any = any || in->node != nullptr;
  if (!any) return r;
  auto node = std::make_shared<Node<FP>>();
  for (auto* in : inputs) node->parents.push_back(in->node);
  node->backward = std::move(backward);
  r.node = std::move(node);
  return r;
}

// Reverse pass from `root` seeded with `seed`. A node's parents always have smaller ids (they existed before it),
// so visiting reachable nodes by decreasing id is a topological order. `add` sums two gradients.
template <class FP, class Add>
Gradients<FP> run_backward(const std::shared_ptr<Node<FP>>& root, FP seed, Add&& add) {
  Gradients<FP> result;
  // Owning pointers: clearing a node's parents below may drop the last other reference to them.
  std::vector<std::shared_ptr<Node<FP>>> order;
  std::unordered_set<Node<FP>*> seen;
  std::vector<std::shared_ptr<Node<FP>>> stack{root};
  seen.insert(root.get());
  while (!stack.empty()) {
    auto n = std::move(stack.back());
    stack.pop_back();
    for (auto& p : n->parents)
      if (p && seen.insert(p.get()).second) stack.push_back(p);
    order.push_back(std::move(n));
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a->id > b->id; });
  std::unordered_map<uint64_t, FP> pending;
  pending.emplace(root->id, std::move(seed));
  for (auto& n : order) {
    auto it = pending.find(n->id);
    if (it == pending.end()) continue;
    FP g = std::move(it->second);
    pending.erase(it);
    if (n->leaf) {
      result.put(n->id, std::move(g));
      continue;
    }
    if (n->released)  // like PyTorch: a silent partial gradient would be worse than an error
      throw ArgumentError(
          "backward: part of this graph was already freed by an earlier backward(); run the forward pass again "
          "(each backward consumes the graph it runs through)");
    if (!n->backward) continue;
    BackwardCtx<FP> ctx;
    ctx.need.resize(n->parents.size());
    ctx.grads.resize(n->parents.size());
    for (std::size_t i = 0; i < n->parents.size(); ++i) ctx.need[i] = n->parents[i] != nullptr;
    n->backward(g, ctx);
    for (std::size_t i = 0; i < n->parents.size(); ++i) {
      if (!n->parents[i] || !ctx.grads[i]) continue;
      auto [pit, fresh] = pending.try_emplace(n->parents[i]->id, *ctx.grads[i]);
      if (!fresh) pit->second = add(pit->second, *ctx.grads[i]);  // used twice: gradients accumulate
    }
    // Free the graph: the closure holds saved tensors, the parents hold the rest of the graph.
    n->backward = nullptr;
    n->parents.clear();
    n->released = true;
  }
  return result;
}

}  // namespace ember::autodiff
