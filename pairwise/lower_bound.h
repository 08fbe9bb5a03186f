// Cheap lower bounds on the GW loss of a pair of spaces, for pruning pairs when only each space's
// K nearest neighbours are wanted (`gwalign pairwise --nearest K`).
//
// The bound is Memoli's second lower bound (the "sorted distance distribution" bound, SLB in
// CAJAL) for the squared loss: for any coupling T of (p, q), T (x) T couples the distribution of
// d_X(i, k) under p (x) p with that of d_Y(j, l) under q (x) q, so
//   sum_{ijkl} (d_X(i,k) - d_Y(j,l))^2 T_ij T_kl  >=  W_2^2(mu_X, mu_Y)
//     = integral_0^1 (Q_X(t) - Q_Y(t))^2 dt      (Q the quantile functions).
// Each space is summarized by the range [Q(t_b), Q(t_{b+1})] of its quantile function on each of
// B equal bins of t; on a bin, the two quantile functions differ by at least the gap between
// their ranges, so sum_b gap_b^2 / B is still a lower bound (slightly below W_2^2), at O(B) per
// pair. Distances are max-normalized per space, as in gw::Result::gw_loss.
#pragma once

#include <span>
#include <vector>

#include "distances/distance_provider.h"

namespace gw::pairwise {

// The quantile ranges of one space: lower[b] <= Q(t) <= upper[b] for t in (b/B, (b+1)/B].
struct DistanceQuantiles {
  std::vector<double> lower;
  std::vector<double> upper;
};

constexpr int kQuantileBins = 512;

// From the full distance matrix of `provider` (n x n, read row by row; +inf clamped as by the
// solver, then divided by the maximum) and the marginal `weights` (empty: uniform). O(n^2 log n).
DistanceQuantiles distance_quantiles(const DistanceProvider& provider,
                                     std::span<const double> weights,
                                     int bins = kQuantileBins);

// The lower bound on the GW loss of any coupling of the two spaces (same bin count required).
double distribution_lower_bound(const DistanceQuantiles& a, const DistanceQuantiles& b);

// The exact W_2^2 between the two weighted distance distributions (no binning), O(n^2 log n):
// the reference the binned bound is tested against (it must never exceed this).
double distribution_w2_reference(const DistanceProvider& a,
                                 std::span<const double> weights_a,
                                 const DistanceProvider& b,
                                 std::span<const double> weights_b);

}  // namespace gw::pairwise
