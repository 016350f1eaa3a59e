#pragma once
// torch.einsum on primitives, mapped onto permute / reshape / matmul / sum instead of an index-loop interpreter, so
// every backend runs it with its batched matmul and Autodiff differentiates it. Supported: letters a-z A-Z, one
// `...` per operand (broadcast, right-aligned, as torch), an explicit `->` output or the implicit one (the
// ellipsis, then the letters that appear once, in alphabetical order), repeated letters in one operand (diagonals:
// ii->i), letters summed because the output lacks them, any number of operands (contracted left to right).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/tensor/shape_ops.hpp"

namespace ember::shape_ops {
namespace einsum_detail {

// Labels are ints: 0..51 for the letters, 52 + k for the k-th ellipsis dim (right-aligned over all operands).
inline constexpr int kEllipsisBase = 52;

inline int letter_label(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }

struct Term {
  std::vector<int> letters;  // in order; -1 marks where the ellipsis stands
  bool has_ellipsis = false;
};

inline Term parse_term(const std::string& eq, const std::string& t) {
  Term term;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '.') {
      if (t.compare(i, 3, "...") != 0 || term.has_ellipsis)
        throw ArgumentError(fmt::format("einsum: malformed ellipsis in '{}' (one '...' per operand)", eq));
      term.has_ellipsis = true;
      term.letters.push_back(-1);
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      term.letters.push_back(letter_label(c));
    } else {
      throw ArgumentError(fmt::format("einsum: invalid character '{}' in '{}' (letters, '...', ',' and '->')", c, eq));
    }
  }
  return term;
}

template <class B>
struct Operand {
  FP<B> value;
  std::vector<int> labels;  // one per dim; empty for a scalar (held as shape [1])
};

template <class B>
Shape shape_of(const Operand<B>& o) {
  return B::template shape<Float>(o.value);
}

// Sums dims whose label is not in `keep`; takes diagonals of labels repeated in one operand.
template <class B>
Operand<B> reduce_operand(const char* eq, Operand<B> o, const std::vector<int>& keep) {
  // Diagonals: bring the two dims of a repeated label to the end, flatten them, take every (n + 1)-th element.
  for (bool again = true; again;) {
    again = false;
    for (std::size_t a = 0; a < o.labels.size() && !again; ++a)
      for (std::size_t b = a + 1; b < o.labels.size() && !again; ++b) {
        if (o.labels[a] != o.labels[b]) continue;
        const Shape s = shape_of(o);
        if (s[a] != s[b])
          throw ShapeError(fmt::format("einsum: '{}': a repeated subscript spans dims of sizes {} and {}", eq, s[a],
                                       s[b]));
        std::vector<std::size_t> perm;
        std::vector<int> labels;
        Shape flat;
        for (std::size_t i = 0; i < s.rank(); ++i)
          if (i != a && i != b) {
            perm.push_back(i);
            labels.push_back(o.labels[i]);
            flat.dims.push_back(s[i]);
          }
        perm.push_back(a);
        perm.push_back(b);
        labels.push_back(o.labels[a]);
        const int64_t n = s[a];
        auto v = B::template permute<Float>(o.value, perm);
        if (s.num_elements() == 0) {
          // No values (and n * n may overflow): the first column of the permuted pair has the diagonal's shape.
          std::vector<Range> r;
          for (auto m : B::template shape<Float>(v).dims) r.push_back({0, m});
          r.back() = {0, 1};
          flat.dims.push_back(n);
          o.value = B::template reshape<Float>(B::template slice<Float>(v, r), flat);
        } else {
          flat.dims.push_back(n * n);
          std::vector<int64_t> diag;
          for (int64_t k = 0; k < n; ++k) diag.push_back(k * (n + 1));
          o.value = take<B, Float>(B::template reshape<Float>(v, flat), flat.rank() - 1, diag);
        }
        o.labels = labels;
        again = true;
      }
  }
  // Sums: reduce (keepdim) each dropped dim, then one reshape without them.
  const Shape s = shape_of(o);
  std::vector<int> labels;
  Shape kept;
  bool dropped = false;
  for (std::size_t i = 0; i < o.labels.size(); ++i) {
    if (std::find(keep.begin(), keep.end(), o.labels[i]) != keep.end()) {
      labels.push_back(o.labels[i]);
      kept.dims.push_back(s[i]);
    } else {
      o.value = B::float_reduce(o.value, ReduceOp::Sum, i);
      dropped = true;
    }
  }
  if (!dropped) return o;
  if (kept.rank() == 0) kept.dims.push_back(1);
  return {B::template reshape<Float>(o.value, kept), labels};
}

// o's dims reordered to `order` (a permutation of its labels) and, where o has size 1 and `sizes` more, expanded.
template <class B>
FP<B> arrange(const Operand<B>& o, const std::vector<int>& order, const std::map<int, int64_t>& sizes) {
  if (order.empty()) return o.value;
  const Shape s = shape_of(o);
  std::vector<std::size_t> perm;
  Shape to;
  bool expands = false;
  for (int l : order) {
    const auto at = static_cast<std::size_t>(std::find(o.labels.begin(), o.labels.end(), l) - o.labels.begin());
    perm.push_back(at);
    to.dims.push_back(sizes.at(l));
    expands = expands || s[at] != sizes.at(l);
  }
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == i;
  FP<B> v = identity ? o.value : B::template permute<Float>(o.value, perm);
  return expands ? B::template expand<Float>(v, to) : v;
}

inline int64_t product(const std::vector<int>& ls, const std::map<int, int64_t>& sizes) {
  int64_t n = 1;
  for (int l : ls)
    if (__builtin_mul_overflow(n, sizes.at(l), &n) || n > kMaxElements)
      throw ShapeError("einsum: an intermediate result has too many elements");
  return n;
}

// a and b contracted over their shared labels not in `needed`; shared labels in `needed` are batch dims.
// [batch, a-only, contracted] @ [batch, contracted, b-only] as one batched matmul.
template <class B>
Operand<B> contract(const Operand<B>& a, const Operand<B>& b, const std::vector<int>& needed,
                    const std::map<int, int64_t>& sizes) {
  auto in = [](const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); };
  std::vector<int> batch, sum, a_only, b_only;
  for (int l : a.labels) {
    if (!in(b.labels, l)) a_only.push_back(l);
    else if (in(needed, l)) batch.push_back(l);
    else sum.push_back(l);
  }
  for (int l : b.labels)
    if (!in(a.labels, l)) b_only.push_back(l);
  auto cat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  const int64_t nb = product(batch, sizes), m = product(a_only, sizes), k = product(sum, sizes),
                n = product(b_only, sizes);
  const auto av = B::template reshape<Float>(arrange(a, cat(batch, a_only, sum), sizes), Shape{nb, m, k});
  const auto bv = B::template reshape<Float>(arrange(b, cat(batch, sum, b_only), sizes), Shape{nb, k, n});
  check_dims("einsum", Shape{nb, m, n});
  product(cat(batch, a_only, b_only), sizes);  // the result's size, checked before the matmul allocates it
  Operand<B> r{B::float_matmul(av, bv), cat(batch, a_only, b_only)};
  Shape rs;
  for (int l : r.labels) rs.dims.push_back(sizes.at(l));
  if (rs.rank() == 0) rs.dims.push_back(1);
  r.value = B::template reshape<Float>(r.value, rs);
  return r;
}

}  // namespace einsum_detail

// The result has the output's labels as dims (shape [1] for a scalar output; `out_rank` says the true rank).
template <class B>
FP<B> einsum(const std::string& equation, const std::vector<FP<B>>& xs, std::size_t* out_rank = nullptr) {
  using namespace einsum_detail;
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  const auto arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 1) != std::string::npos)
    throw ArgumentError(fmt::format("einsum: more than one '->' in '{}'", equation));
  if (eq.find_first_of("->") != std::string::npos && arrow == std::string::npos)
    throw ArgumentError(fmt::format("einsum: stray '-' or '>' in '{}'", equation));
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (std::size_t from = 0;;) {
    const auto comma = lhs.find(',', from);
    terms.push_back(parse_term(equation, lhs.substr(from, comma - from)));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (xs.empty()) throw ArgumentError("einsum: no operands");
  if (terms.size() != xs.size())
    throw ArgumentError(fmt::format("einsum: '{}' has {} operand subscripts for {} operands", equation, terms.size(),
                                    xs.size()));
  // Per-operand labels (ellipsis expanded, right-aligned) and every label's size (1 broadcasts).
  std::size_t ell = 0;
  std::vector<Operand<B>> ops;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Shape s = B::template shape<Float>(xs[i]);
    const std::size_t letters = terms[i].letters.size() - (terms[i].has_ellipsis ? 1 : 0);
    if (terms[i].has_ellipsis ? s.rank() < letters : s.rank() != letters)
      throw ShapeError(fmt::format("einsum: operand {} has shape {} but its subscripts in '{}' name {} dims", i,
                                   s.to_string(), equation, letters));
    ell = std::max(ell, s.rank() - letters);
  }
  std::map<int, int64_t> sizes;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Shape s = B::template shape<Float>(xs[i]);
    const std::size_t e = terms[i].has_ellipsis ? s.rank() - (terms[i].letters.size() - 1) : 0;
    Operand<B> o{xs[i], {}};
    for (int l : terms[i].letters) {
      if (l >= 0) o.labels.push_back(l);
      else
        for (std::size_t j = 0; j < e; ++j) o.labels.push_back(kEllipsisBase + static_cast<int>(ell - e + j));
    }
    for (std::size_t d = 0; d < s.rank(); ++d) {
      auto [it, fresh] = sizes.emplace(o.labels[d], s[d]);
      if (fresh || it->second == s[d] || s[d] == 1) continue;
      if (it->second != 1)
        throw ShapeError(fmt::format("einsum: subscript sizes {} and {} do not match (or broadcast) in '{}'",
                                     it->second, s[d], equation));
      it->second = s[d];
    }
    if (s.rank() == 0) o.value = B::template reshape<Float>(o.value, Shape{1});
    ops.push_back(std::move(o));
  }
  // The output's labels.
  std::vector<int> out;
  if (arrow != std::string::npos) {
    const Term t = parse_term(equation, eq.substr(arrow + 2));
    for (int l : t.letters) {
      if (l < 0) {
        for (std::size_t j = 0; j < ell; ++j) out.push_back(kEllipsisBase + static_cast<int>(j));
        continue;
      }
      if (std::find(out.begin(), out.end(), l) != out.end())
        throw ArgumentError(fmt::format("einsum: output subscript repeated in '{}'", equation));
      if (!sizes.count(l))
        throw ArgumentError(fmt::format("einsum: output subscript not found in any operand in '{}'", equation));
      out.push_back(l);
    }
  } else {
    for (std::size_t j = 0; j < ell; ++j) out.push_back(kEllipsisBase + static_cast<int>(j));
    std::map<int, int> count;
    for (const auto& o : ops)
      for (int l : o.labels)
        if (l < kEllipsisBase) ++count[l];
    for (auto [l, c] : count)  // map order: A-Z before a-z, as torch
      if (c == 1) out.push_back(l);
  }
  // Left to right: reduce what no later step needs, contract with the next operand.
  auto needed_after = [&](std::size_t i) {
    std::vector<int> need = out;
    for (std::size_t j = i + 1; j < ops.size(); ++j) need.insert(need.end(), ops[j].labels.begin(), ops[j].labels.end());
    return need;
  };
  Operand<B> acc = reduce_operand<B>(equation.c_str(), ops[0], needed_after(0));
  for (std::size_t i = 1; i < ops.size(); ++i) {
    std::vector<int> need = needed_after(i);
    auto next = reduce_operand<B>(equation.c_str(), ops[i], [&] {
      auto v = need;
      v.insert(v.end(), acc.labels.begin(), acc.labels.end());
      return v;
    }());
    acc = reduce_operand<B>(equation.c_str(), acc, [&] {
      auto v = need;
      v.insert(v.end(), next.labels.begin(), next.labels.end());
      return v;
    }());
    acc = contract<B>(acc, next, need, sizes);
  }
  acc = reduce_operand<B>(equation.c_str(), acc, out);
  if (out_rank) *out_rank = out.size();
  return arrange(acc, out, sizes);
}

}  // namespace ember::shape_ops
