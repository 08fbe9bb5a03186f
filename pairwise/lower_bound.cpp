#include "pairwise/lower_bound.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/error.h"

namespace gw::pairwise {
namespace {

// The sorted (value, mass) pairs of the distance distribution; masses sum to 1.
std::vector<std::pair<double, double>> distance_distribution(const DistanceProvider& provider,
                                                             std::span<const double> weights) {
  const Index n = provider.num_nodes();
  GW_CHECK(weights.empty() || weights.size() == static_cast<std::size_t>(n),
           "distance_quantiles: " << weights.size() << " weights for " << n << " nodes");
  std::vector<Index> all(n);
  std::iota(all.begin(), all.end(), Index{0});
  std::vector<float> block(static_cast<std::size_t>(n) * n);
  provider.distances_to(all, block);
  // The same post-processing as the solver's exact loss: infinities clamped, divided by the max.
  clamp_and_normalize(block, true);
  std::vector<double> p(n, 1.0 / n);
  if (!weights.empty()) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    for (Index i = 0; i < n; ++i) p[i] = weights[i] / total;
  }
  std::vector<std::pair<double, double>> dist;
  dist.reserve(block.size());
  for (Index i = 0; i < n; ++i) {
    for (Index k = 0; k < n; ++k) {
      const double mass = p[i] * p[k];
      if (mass > 0.0) dist.emplace_back(block[static_cast<std::size_t>(i) * n + k], mass);
    }
  }
  std::sort(dist.begin(), dist.end());
  return dist;
}

}  // namespace

DistanceQuantiles distance_quantiles(const DistanceProvider& provider,
                                     std::span<const double> weights,
                                     int bins) {
  GW_CHECK(bins >= 1, "distance_quantiles: bins must be >= 1, got " << bins);
  const auto dist = distance_distribution(provider, weights);
  double total = 0.0;
  for (const auto& entry : dist) total += entry.second;
  // Q(t) = the first value whose cumulative mass reaches t. The cumulative sums carry rounding
  // error, so each bin's range is widened by kSlack in t: lower ends are read a little early and
  // upper ends a little late, which can only widen the ranges and so keeps the bound valid.
  constexpr double kSlack = 1e-9;
  // Q at increasing t, by one sweep over the sorted distribution per call sequence.
  std::size_t pos = 0;
  double cumulative = 0.0;
  auto restart = [&] {
    pos = 0;
    cumulative = dist[0].second;
  };
  auto quantile = [&](double t) {
    while (pos + 1 < dist.size() && cumulative < t * total) {
      ++pos;
      cumulative += dist[pos].second;
    }
    return dist[pos].first;
  };
  DistanceQuantiles out;
  out.lower.resize(bins);
  out.upper.resize(bins);
  restart();
  for (int b = 0; b < bins; ++b) {
    out.lower[b] = b == 0 ? dist.front().first : quantile(static_cast<double>(b) / bins - kSlack);
  }
  restart();
  for (int b = 0; b < bins; ++b) {
    out.upper[b] =
        b + 1 == bins ? dist.back().first : quantile(static_cast<double>(b + 1) / bins + kSlack);
  }
  return out;
}

double distribution_lower_bound(const DistanceQuantiles& a, const DistanceQuantiles& b) {
  GW_CHECK(a.lower.size() == b.lower.size() && !a.lower.empty(),
           "distribution_lower_bound: bin counts differ (" << a.lower.size() << " and "
                                                           << b.lower.size() << ")");
  const std::size_t bins = a.lower.size();
  double sum = 0.0;
  for (std::size_t k = 0; k < bins; ++k) {
    const double gap = std::max({0.0, a.lower[k] - b.upper[k], b.lower[k] - a.upper[k]});
    sum += gap * gap;
  }
  return sum / static_cast<double>(bins);
}

double distribution_w2_reference(const DistanceProvider& a,
                                 std::span<const double> weights_a,
                                 const DistanceProvider& b,
                                 std::span<const double> weights_b) {
  const auto da = distance_distribution(a, weights_a);
  const auto db = distance_distribution(b, weights_b);
  double total_a = 0.0, total_b = 0.0;
  for (const auto& e : da) total_a += e.second;
  for (const auto& e : db) total_b += e.second;
  // The monotone (north-west corner) coupling of two sorted 1-D distributions is optimal.
  std::size_t i = 0, j = 0;
  double left_a = da[0].second / total_a, left_b = db[0].second / total_b, sum = 0.0;
  while (i < da.size() && j < db.size()) {
    const double mass = std::min(left_a, left_b);
    const double diff = da[i].first - db[j].first;
    sum += mass * diff * diff;
    left_a -= mass;
    left_b -= mass;
    if (left_a <= 0.0 && ++i < da.size()) left_a = da[i].second / total_a;
    if (left_b <= 0.0 && ++j < db.size()) left_b = db[j].second / total_b;
  }
  return sum;
}

}  // namespace gw::pairwise
