#include "solver/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

namespace gw {

std::vector<Index> argmax_matching(std::span<const double> plan, Index n, Index k) {
  GW_CHECK(plan.size() == static_cast<std::size_t>(n) * k,
           "argmax_matching: plan has " << plan.size() << " entries for " << n << " x " << k);
  std::vector<Index> match(n, 0);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    const double* row = plan.data() + static_cast<std::size_t>(i) * k;
    Index best = 0;
    for (Index j = 1; j < k; ++j) {
      if (row[j] > row[best]) best = j;
    }
    match[i] = best;
  }
  return match;
}

namespace {
std::vector<double> ranks(std::span<const double> x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> rank(x.size());
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start + 1;
    while (end < order.size() && x[order[end]] == x[order[start]]) ++end;
    const double average = 0.5 * static_cast<double>(start + end - 1) + 1.0;
    for (std::size_t p = start; p < end; ++p) rank[order[p]] = average;
    start = end;
  }
  return rank;
}
}  // namespace

double spearman(std::span<const double> x, std::span<const double> y) {
  GW_CHECK(x.size() == y.size(),
           "spearman: samples of different lengths " << x.size() << " and " << y.size());
  const std::size_t n = x.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double mean = 0.5 * static_cast<double>(n + 1);
  double sxy = 0.0, sxx = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0.0 || syy == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return sxy / std::sqrt(sxx * syy);
}

double node_correctness(std::span<const Index> matching, std::span<const Index> truth) {
  GW_CHECK(matching.size() == truth.size(),
           "node_correctness: " << matching.size() << " matches for " << truth.size() << " truths");
  std::size_t counted = 0, correct = 0;
  for (std::size_t i = 0; i < matching.size(); ++i) {
    if (truth[i] < 0) continue;
    ++counted;
    correct += matching[i] == truth[i];
  }
  return counted == 0 ? std::numeric_limits<double>::quiet_NaN()
                      : static_cast<double>(correct) / static_cast<double>(counted);
}

double label_transfer_accuracy(std::span<const Index> matching,
                               std::span<const int> source_labels,
                               std::span<const int> target_labels) {
  GW_CHECK(matching.size() == source_labels.size(),
           "label_transfer_accuracy: " << matching.size() << " matches for " << source_labels.size()
                                       << " source labels");
  if (matching.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::size_t correct = 0;
  for (std::size_t i = 0; i < matching.size(); ++i) {
    const Index j = matching[i];
    GW_CHECK(j >= 0 && static_cast<std::size_t>(j) < target_labels.size(),
             "label_transfer_accuracy: match " << j << " of node " << i << " is outside [0, "
                                               << target_labels.size() << ")");
    correct += source_labels[i] == target_labels[j];
  }
  return static_cast<double>(correct) / static_cast<double>(matching.size());
}

}  // namespace gw
