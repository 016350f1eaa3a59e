#pragma once
// Param<T>: a module parameter (T is a Tensor<B, D, K>) with a stable ParamId and lazy initialization.
//
// A freshly configured module holds Uninitialized params: the init function, device, require_grad and shape. The
// value is materialized once, on the first val(); shape, device, num_params and load_record never materialize, so
// loading a record into a fresh module never allocates random weights first. Copies of a Param share the lazy
// state, so a copied module initializes once and both copies see the same values.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "engine/tensor/tensor.hpp"

namespace ember {

// Values are append-only: they are stored in record files.
enum class ParamKind : int32_t { Float = 0, Int = 1, Bool = 2 };

enum class ParamRole : int32_t {
  Trainable = 0,  // updated by optimizers (unless frozen)
  Buffer = 1,     // recorded, updated by the module itself (BatchNorm running statistics), never by optimizers
  Constant = 2,   // recorded, never updated
};

template <class K>
constexpr ParamKind param_kind_of() {
  if constexpr (std::is_same_v<K, Float>) return ParamKind::Float;
  else if constexpr (std::is_same_v<K, Int>) return ParamKind::Int;
  else return ParamKind::Bool;
}

inline const char* param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::Float: return "float";
    case ParamKind::Int: return "int";
    case ParamKind::Bool: return "bool";
  }
  return "unknown";
}

struct ParamId {
  uint64_t value = 0;
  static ParamId next() {
    static std::atomic<uint64_t> counter{1};
    return {counter.fetch_add(1, std::memory_order_relaxed)};
  }
  bool operator==(const ParamId&) const = default;
  auto operator<=>(const ParamId&) const = default;
};

template <class T>
struct IsTensor : std::false_type {};
template <Backend B, std::size_t D, TensorKind K>
struct IsTensor<Tensor<B, D, K>> : std::true_type {};

template <class T>
class Param {
  static_assert(IsTensor<T>::value, "Param<T> holds a Tensor<B, D, K>");

 public:
  using Value = T;
  using Device = typename T::Device;
  using Init = std::function<T(const Device&)>;

  Param() = default;

  static Param initialized(ParamId id, T value, bool require_grad = true, ParamRole role = ParamRole::Trainable) {
    Param p;
    p.id_ = id;
    p.state_ = std::make_shared<State>();
    p.state_->role = role;
    if (role != ParamRole::Trainable) require_grad = false;
    p.state_->shape = value.shape();
    p.state_->device = value.device();
    p.state_->require_grad = require_grad && T::is_float;
    p.state_->value = apply_grad(std::move(value), p.state_->require_grad);
    return p;
  }
  static Param uninitialized(ParamId id, Init init, const Device& device, bool require_grad, Shape shape,
                             ParamRole role = ParamRole::Trainable) {
    Param p;
    p.id_ = id;
    p.state_ = std::make_shared<State>();
    p.state_->role = role;
    if (role != ParamRole::Trainable) require_grad = false;
    p.state_->init = std::move(init);
    p.state_->device = device;
    p.state_->require_grad = require_grad && T::is_float;
    p.state_->shape = std::move(shape);
    return p;
  }

  ParamId id() const { return id_; }
  bool empty() const { return state_ == nullptr; }
  bool is_initialized() const {
    if (!state_) return false;
    std::lock_guard lock(state_->mu);
    return state_->value.has_value();
  }
  // The value, materialized on first access (thread-safe).
  const T& val() const {
    if (!state_) throw ArgumentError("Param::val: empty parameter");
    std::lock_guard lock(state_->mu);
    if (!state_->value) {
      T v = state_->init(state_->device);
      if (!(v.shape() == state_->shape))
        throw ShapeError(fmt::format("Param: initializer produced {}, expected {}", v.shape().to_string(),
                                     state_->shape.to_string()));
      state_->value = apply_grad(std::move(v), state_->require_grad);
      state_->init = nullptr;  // release what the initializer captured
    }
    return *state_->value;
  }
  Shape shape() const { return state_ ? state_->shape : Shape{}; }
  Device device() const { return state_ ? state_->device : Device{}; }
  bool require_grad() const { return state_ && state_->require_grad; }
  ParamRole role() const { return state_ ? state_->role : ParamRole::Trainable; }
  static constexpr ParamKind kind = param_kind_of<typename T::Kind>();

  // Same id and value with another require_grad (freezing); lazy params stay lazy.
  Param with_require_grad(bool on) const {
    if (!state_) return *this;
    if (is_initialized()) return initialized(id_, val(), on, role());
    return uninitialized(id_, state_->init, state_->device, on, state_->shape, role());
  }
  // Same id, new value (e.g. after an optimizer step); require_grad carries over.
  Param with_value(T v) const { return initialized(id_, std::move(v), require_grad(), role()); }

 private:
  struct State {
    std::mutex mu;
    std::optional<T> value;
    Init init;
    Device device{};
    bool require_grad = true;
    ParamRole role = ParamRole::Trainable;
    Shape shape;
  };
  static T apply_grad(T v, bool on) {
    if constexpr (T::is_float) return v.require_grad(on);
    else return v;
  }

  ParamId id_{};
  std::shared_ptr<State> state_;
};

// Initialized params from values: trainable, a Constant (recorded, never trained) or a Buffer (recorded, updated by
// the module itself, never by optimizers).
template <class T>
Param<T> make_param(T value, bool require_grad = true) {
  return Param<T>::initialized(ParamId::next(), std::move(value), require_grad, ParamRole::Trainable);
}
template <class T>
Param<T> make_constant(T value) {
  return Param<T>::initialized(ParamId::next(), std::move(value), false, ParamRole::Constant);
}
template <class T>
Param<T> make_buffer(T value) {
  return Param<T>::initialized(ParamId::next(), std::move(value), false, ParamRole::Buffer);
}

}  // namespace ember
