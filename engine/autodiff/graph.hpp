#pragma once
// The autodiff graph: every recorded float op creates a Node that knows its parents and how to turn the gradient
// of its output into gradients of its inputs. Nodes are owned by the tensors that refer to them (shared_ptr), so
// a graph lives exactly as long as some tensor can still reach it; backward() also releases the closures it ran,
// unless asked to retain the graph for another pass.
//
// Values are immutable, so an "in-place" update of a tracked tensor gives its holder a new value. Each node counts
// such updates of the value it stands for (`version`, PyTorch's version counter) and remembers its parents' counts
// when it was recorded; a backward step whose inputs were updated since fails as in PyTorch instead of differentiating
// a function the caller no longer computes. Nothing of this runs when nothing is recorded.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
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
  std::vector<uint64_t> parent_versions;       // each parent's `version` when this node was recorded
  std::function<void(const FP& grad, BackwardCtx<FP>& ctx)> backward;
  // In-place updates of this node's value (of the leaf, or of the op result it stands for) since it was made.
  std::atomic<uint64_t> version{0};
  // A leaf's accumulated gradient (Tensor.grad): shared by every tensor of this leaf, read and written under
  // grad_slot_mutex() (backward passes on several threads may reach one leaf).
  std::optional<FP> grad;

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

inline std::mutex& grad_slot_mutex() {
  static std::mutex mu;
  return mu;
}

template <class FP>
void add_parent(Node<FP>& node, const std::shared_ptr<Node<FP>>& parent) {
  node.parents.push_back(parent);
  node.parent_versions.push_back(parent ? parent->version.load(std::memory_order_acquire) : 0);
}

// Records `out` as produced from `inputs` unless no input is tracked or recording is off.
template <class FP, class F>
AdTensor<FP> record(FP out, std::initializer_list<const AdTensor<FP>*> inputs, F&& backward) {
  AdTensor<FP> r{std::move(out), nullptr};
  if (no_grad_flag()) return r;
  bool any = false;
  for (auto* in : inputs) any = any || in->node != nullptr;
  if (!any) return r;
  auto node = std::make_shared<Node<FP>>();
  for (auto* in : inputs) add_parent(*node, in->node);
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
  for (auto* in : inputs) add_parent(*node, in->node);
  node->backward = std::move(backward);
  r.node = std::move(node);
  return r;
}

// One starting point of a reverse pass and the gradient it is seeded with.
template <class FP>
struct BackwardRoot {
  std::shared_ptr<Node<FP>> node;
  FP seed;
};

struct BackwardOptions {
  bool retain_graph = false;  // keep every closure and edge, so another pass can run through the same graph
};

// What a pass reports: the nodes asked for (`capture`, by node) or, without a capture set, every leaf reached;
// each with its total gradient.
template <class FP>
struct Reached {
  std::shared_ptr<Node<FP>> node;
  FP grad;
};

// Reverse pass from `roots`. A node's parents always have smaller ids (they existed before it), so visiting
// reachable nodes by decreasing id is a topological order: when a node is visited, every gradient flowing into it
// has arrived. `add` sums two gradients.
template <class FP, class Add>
std::vector<Reached<FP>> run_backward_from(std::vector<BackwardRoot<FP>> roots, const BackwardOptions& options,
                                           const std::unordered_set<const Node<FP>*>* capture, Add&& add) {
  std::vector<Reached<FP>> result;
  // Owning pointers: clearing a node's parents below may drop the last other reference to them.
  std::vector<std::shared_ptr<Node<FP>>> order;
  std::unordered_set<Node<FP>*> seen;
  std::vector<std::shared_ptr<Node<FP>>> stack;
  std::unordered_map<uint64_t, FP> pending;
  for (auto& r : roots) {
    if (seen.insert(r.node.get()).second) stack.push_back(r.node);
    auto [it, fresh] = pending.try_emplace(r.node->id, r.seed);
    if (!fresh) it->second = add(it->second, r.seed);  // one tensor given twice as an output: seeds add up
  }
  while (!stack.empty()) {
    auto n = std::move(stack.back());
    stack.pop_back();
    for (auto& p : n->parents)
      if (p && seen.insert(p.get()).second) stack.push_back(p);
    order.push_back(std::move(n));
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a->id > b->id; });
  for (auto& n : order) {
    auto it = pending.find(n->id);
    if (it == pending.end()) continue;
    FP g = std::move(it->second);
    pending.erase(it);
    const bool wanted = capture ? capture->count(n.get()) > 0 : n->leaf;
    if (n->leaf) {
      if (wanted) result.push_back({n, std::move(g)});
      continue;
    }
    if (wanted) result.push_back({n, g});
    if (n->released)  // like PyTorch: a silent partial gradient would be worse than an error
      throw ArgumentError(
          "backward: part of this graph was already freed by an earlier backward(); run the forward pass again, or "
          "pass retain_graph to the earlier backward (each backward without it consumes the graph it runs through)");
    if (!n->backward) continue;
    for (std::size_t i = 0; i < n->parents.size(); ++i) {
      const auto& p = n->parents[i];
      if (!p) continue;
      const uint64_t now = p->version.load(std::memory_order_acquire);
      if (now != n->parent_versions[i])  // PyTorch's words, so that its users recognize the error
        throw ArgumentError(fmt::format(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "input {} of an op is at version {}; expected version {} instead",
            i, now, n->parent_versions[i]));
    }
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
    if (options.retain_graph) continue;
    // Free the graph: the closure holds saved tensors, the parents hold the rest of the graph.
    n->backward = nullptr;
    n->parents.clear();
    n->parent_versions.clear();
    n->released = true;
  }
  return result;
}

// Reverse pass from `root` seeded with `seed`, freeing the graph: the gradients of the leaves reached.
template <class FP, class Add>
Gradients<FP> run_backward(const std::shared_ptr<Node<FP>>& root, FP seed, Add&& add) {
  std::vector<BackwardRoot<FP>> roots;
  roots.push_back({root, std::move(seed)});
  Gradients<FP> result;
  for (auto& r : run_backward_from<FP>(std::move(roots), BackwardOptions{}, nullptr, std::forward<Add>(add)))
    result.put(r.node->id, std::move(r.grad));
  return result;
}

}  // namespace ember::autodiff
