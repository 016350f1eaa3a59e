#pragma once
// Generic traversal of modules. A module is any struct reflected with BOOST_HANA_DEFINE_STRUCT; its members can be
// Params, other modules, std::vector / std::array / std::optional / std::tuple of those, or plain values (config:
// carried along, never visited). Everything here is written once for every module.
//
//   visit(m, visitor)          visitor.enter(name) / visitor.exit() around members, visitor.param(p) per Param
//   map(m, mapper)             same walk, mapper.param(p) returns the replacement Param (same type)
//   rebind<NewB>(m, mapper)    same walk into the module type re-instantiated on NewB (Linear<Autodiff<B>> ->
//                              Linear<B>); mapper.template param<NewB>(p) converts each Param
//   set_training(m, on)        flips every TrainingFlag member (Dropout, BatchNorm)
//
// Modules are templates over one backend parameter (template <Backend B> struct Mlp) and default-constructible.
#include <array>
#include <boost/hana.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "engine/module/param.hpp"

namespace ember {

namespace hana = boost::hana;

// Member of modules whose forward depends on train/eval mode.
struct TrainingFlag {
  bool training = true;
};

namespace module_detail {

template <class T> struct IsParam : std::false_type {};
template <class T> struct IsParam<Param<T>> : std::true_type {};
template <class T> struct IsVector : std::false_type {};
template <class T, class A> struct IsVector<std::vector<T, A>> : std::true_type {};
template <class T> struct IsArray : std::false_type {};
template <class T, std::size_t N> struct IsArray<std::array<T, N>> : std::true_type {};
template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type {};
template <class T> struct IsTuple : std::false_type {};
template <class... T> struct IsTuple<std::tuple<T...>> : std::true_type {};

template <class M>
constexpr bool reflected = hana::Struct<M>::value;

}  // namespace module_detail

// Re-instantiates a module type on another backend.
template <class M, class NewB>
struct Rebind {
  using type = M;  // plain values are carried unchanged
};
template <class M, class NewB>
using Rebind_t = typename Rebind<M, NewB>::type;
template <Backend B, std::size_t D, TensorKind K, class NewB>
struct Rebind<Param<Tensor<B, D, K>>, NewB> {
  using type = Param<Tensor<NewB, D, K>>;
};
template <class T, class A, class NewB>
struct Rebind<std::vector<T, A>, NewB> {
  using type = std::vector<Rebind_t<T, NewB>>;
};
template <class T, std::size_t N, class NewB>
struct Rebind<std::array<T, N>, NewB> {
  using type = std::array<Rebind_t<T, NewB>, N>;
};
template <class T, class NewB>
struct Rebind<std::optional<T>, NewB> {
  using type = std::optional<Rebind_t<T, NewB>>;
};
template <class... T, class NewB>
struct Rebind<std::tuple<T...>, NewB> {
  using type = std::tuple<Rebind_t<T, NewB>...>;
};
template <template <class> class M, Backend B, class NewB>
struct Rebind<M<B>, NewB> {
  using type = M<NewB>;
};

template <class M, class V>
void visit(const M& m, V& v) {
  using namespace module_detail;
  if constexpr (IsParam<M>::value) {
    if (!m.empty()) v.param(m);
  } else if constexpr (IsVector<M>::value || IsArray<M>::value) {
    for (std::size_t i = 0; i < m.size(); ++i) {
      v.enter(std::to_string(i));
      visit(m[i], v);
      v.exit();
    }
  } else if constexpr (IsOptional<M>::value) {
    if (m) visit(*m, v);
  } else if constexpr (IsTuple<M>::value) {
    std::size_t i = 0;
    std::apply([&](const auto&... e) { ((v.enter(std::to_string(i++)), visit(e, v), v.exit()), ...); }, m);
  } else if constexpr (reflected<M>) {
    hana::for_each(hana::accessors<M>(), [&](auto pair) {
      v.enter(hana::to<const char*>(hana::first(pair)));
      visit(hana::second(pair)(m), v);
      v.exit();
    });
  }
}

template <class M, class F>
M map(M m, F& f) {
  using namespace module_detail;
  if constexpr (IsParam<M>::value) {
    if (m.empty()) return m;
    return f.param(std::move(m));
  } else if constexpr (IsVector<M>::value || IsArray<M>::value) {
    for (std::size_t i = 0; i < m.size(); ++i) {
      f.enter(std::to_string(i));
      m[i] = map(std::move(m[i]), f);
      f.exit();
    }
    return m;
  } else if constexpr (IsOptional<M>::value) {
    if (m) m = map(std::move(*m), f);
    return m;
  } else if constexpr (IsTuple<M>::value) {
    std::size_t i = 0;
    std::apply([&](auto&... e) { ((f.enter(std::to_string(i++)), e = map(std::move(e), f), f.exit()), ...); }, m);
    return m;
  } else if constexpr (reflected<M>) {
    hana::for_each(hana::accessors<M>(), [&](auto pair) {
      auto& member = hana::second(pair)(m);
      f.enter(hana::to<const char*>(hana::first(pair)));
      member = map(std::move(member), f);
      f.exit();
    });
    return m;
  } else {
    return m;
  }
}

template <class NewB, class M, class F>
Rebind_t<M, NewB> rebind(const M& m, F& f) {
  using namespace module_detail;
  using Out = Rebind_t<M, NewB>;
  if constexpr (IsParam<M>::value) {
    if (m.empty()) return Out{};
    return f.template param<NewB>(m);
  } else if constexpr (IsVector<M>::value) {
    Out out;
    out.reserve(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
      f.enter(std::to_string(i));
      out.push_back(rebind<NewB>(m[i], f));
      f.exit();
    }
    return out;
  } else if constexpr (IsArray<M>::value) {
    Out out;
    for (std::size_t i = 0; i < m.size(); ++i) {
      f.enter(std::to_string(i));
      out[i] = rebind<NewB>(m[i], f);
      f.exit();
    }
    return out;
  } else if constexpr (IsOptional<M>::value) {
    if (!m) return Out{};
    return Out{rebind<NewB>(*m, f)};
  } else if constexpr (IsTuple<M>::value) {
    std::size_t i = 0;
    return std::apply(
        [&](const auto&... e) {
          return Out{[&](const auto& x) {
            f.enter(std::to_string(i++));
            auto r = rebind<NewB>(x, f);
            f.exit();
            return r;
          }(e)...};
        },
        m);
  } else if constexpr (reflected<M> && !std::is_same_v<M, Out>) {
    Out out{};
    hana::for_each(hana::keys(m), [&](auto key) {
      f.enter(hana::to<const char*>(key));
      hana::at_key(out, key) = rebind<NewB>(hana::at_key(m, key), f);
      f.exit();
    });
    return out;
  } else {
    return m;  // carried value, or a module that does not depend on the backend
  }
}

// Walks every member (not only params); used for flags such as TrainingFlag.
template <class M, class F>
void for_each_member_of_type(M& m, F&& f) {
  using namespace module_detail;
  if constexpr (std::is_invocable_v<F&, M&>) {
    f(m);
  } else if constexpr (IsVector<M>::value || IsArray<M>::value) {
    for (auto& e : m) for_each_member_of_type(e, f);
  } else if constexpr (IsOptional<M>::value) {
    if (m) for_each_member_of_type(*m, f);
  } else if constexpr (IsTuple<M>::value) {
    std::apply([&](auto&... e) { (for_each_member_of_type(e, f), ...); }, m);
  } else if constexpr (reflected<M>) {
    hana::for_each(hana::accessors<M>(), [&](auto pair) { for_each_member_of_type(hana::second(pair)(m), f); });
  }
}

template <class M>
M set_training(M m, bool on) {
  for_each_member_of_type(m, [on](TrainingFlag& flag) { flag.training = on; });
  return m;
}

// Tracks the dotted path ("encoder.layers.0.fc1") of the member being visited.
class PathTracker {
 public:
  void enter(const std::string& name) { parts_.push_back(name); }
  void exit() { parts_.pop_back(); }
  std::string path() const {
    std::string s;
    for (const auto& p : parts_) {
      if (!s.empty()) s += '.';
      s += p;
    }
    return s;
  }

 private:
  std::vector<std::string> parts_;
};

// Lambda forms of visit / map / rebind: f(path, param). Most module functions are written with these.
namespace module_detail {
template <class F>
struct LambdaVisitor : PathTracker {
  F& f;
  explicit LambdaVisitor(F& fn) : f(fn) {}
  template <class P>
  void param(const P& p) {
    f(path(), p);
  }
};
template <class F>
struct LambdaMapper : PathTracker {
  F& f;
  explicit LambdaMapper(F& fn) : f(fn) {}
  template <class P>
  P param(P p) {
    return f(path(), std::move(p));
  }
};
template <class F>
struct LambdaRebinder : PathTracker {
  F& f;
  explicit LambdaRebinder(F& fn) : f(fn) {}
  template <class NewB, class P>
  Rebind_t<P, NewB> param(const P& p) {
    return f(path(), p);
  }
};
}  // namespace module_detail

template <class M, class F>
void visit_params(const M& m, F&& f) {
  module_detail::LambdaVisitor<std::remove_reference_t<F>> v(f);
  visit(m, v);
}
template <class M, class F>
M map_params(M m, F&& f) {
  module_detail::LambdaMapper<std::remove_reference_t<F>> v(f);
  return map(std::move(m), v);
}
template <class NewB, class M, class F>
Rebind_t<M, NewB> rebind_params(const M& m, F&& f) {
  module_detail::LambdaRebinder<std::remove_reference_t<F>> v(f);
  return rebind<NewB>(m, v);
}

}  // namespace ember
