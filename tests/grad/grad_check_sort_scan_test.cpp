// Finite-difference gradient checks (f64) for issue 13's sort / topk (the gradient scattered back through the
// indices), cumsum (the reversed cumsum of the gradient), tril / triu and masked_select (zero where dropped).
// Sorted inputs have distinct values, so a perturbation of eps cannot change the order.
#include <gtest/gtest.h>

#include "tests/grad/grad_check.hpp"

namespace ember::gradcheck {
namespace sort_scan_grads {

TEST(GradCheckSortScan, Sort) {
  const auto x = distinct<2>({3, 5}, -2, 2, 1);
  EXPECT_TRUE(check_grad([](const T<2>& a) { return a.sort(1).first; }, x));
  EXPECT_TRUE(check_grad([](const T<2>& a) { return a.sort(0, true).first.sin(); }, x));
  // The weights of a later op follow the sorted position, so a gradient routed to the wrong element shows.
  EXPECT_TRUE(check_grad([](const T<2>& a) { return a.sort(-1, true).first.mul(a.sort(-1).first); }, x));
}

TEST(GradCheckSortScan, Topk) {
  const auto x = distinct<2>({3, 6}, -3, 3, 2);
  EXPECT_TRUE(check_grad([](const T<2>& a) { return a.topk(2, 1).first.exp(); }, x));
  EXPECT_TRUE(check_grad([](const T<2>& a) { return a.topk(2, 0, false).first; }, x));
}

TEST(GradCheckSortScan, Cumsum) {
  const auto x = uniform<3>({2, 3, 4}, -1, 1, 3);
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.cumsum(0); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.cumsum(1).sin(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.cumsum(-1).mul(a); }, x));
}

TEST(GradCheckSortScan, TrilTriu) {
  const auto x = uniform<3>({2, 3, 4}, -1, 1, 4);
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.tril().exp(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.triu(1).sin(); }, x));
  EXPECT_TRUE(check_grad([](const T<3>& a) { return a.tril(-1); }, x));
}

TEST(GradCheckSortScan, MaskedSelect) {
  const auto x = uniform<2>({3, 4}, -1, 1, 5);
  const auto mask = TB<2>::from_values(std::vector<bool>{true, false, true, true}, {1, 4});
  EXPECT_TRUE(check_grad([&](const T<2>& a) { return a.masked_select(mask).exp(); }, x));
}

}  // namespace sort_scan_grads
}  // namespace ember::gradcheck
