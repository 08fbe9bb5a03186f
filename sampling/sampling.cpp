#include "sampling/sampling.h"

#include <algorithm>

#include "core/error.h"

namespace gw {

std::vector<double> draw_sampling_uniforms(Rng& rng, int m) {
  GW_CHECK(m >= 1, "number of anchor pairs must be >= 1, got " << m);
  std::vector<double> uniforms(2 * static_cast<std::size_t>(m));
  for (double& u : uniforms) u = rng.uniform();
  return uniforms;
}

template <typename T>
AnchorPairs sample_anchor_pairs(const T* plan,
                                Index n,
                                Index k,
                                Offset stride,
                                std::span<const double> row_mass,
                                std::span<const double> uniforms) {
  GW_CHECK(n >= 1 && k >= 1, "sampling needs a non-empty plan, got " << n << " x " << k);
  GW_CHECK(stride >= k, "plan row stride " << stride << " is smaller than its " << k << " columns");
  GW_CHECK(uniforms.size() % 2 == 0 && !uniforms.empty(),
           "sampling needs 2 uniforms per pair, got " << uniforms.size());
  GW_CHECK(row_mass.empty() || row_mass.size() == static_cast<std::size_t>(n),
           "row masses have " << row_mass.size() << " entries for a plan of " << n << " rows");
  const int m = static_cast<int>(uniforms.size() / 2);

  // Cumulative row masses; the sum is sequential so the result does not depend on threads.
  std::vector<double> cumulative(n);
  double total = 0.0;
  for (Index i = 0; i < n; ++i) {
    double mass = 0.0;
    if (row_mass.empty()) {
      const T* row = plan + static_cast<Offset>(i) * stride;
      for (Index j = 0; j < k; ++j) mass += static_cast<double>(row[j]);
    } else {
      mass = row_mass[i];
    }
    total += mass;
    cumulative[i] = total;
  }
  GW_CHECK_CODE(total > 0.0, ErrorCode::kBadData, "cannot sample anchors from a plan of zero mass");

  AnchorPairs pairs;
  pairs.rows.resize(m);
  pairs.cols.resize(m);
  for (int s = 0; s < m; ++s) {
    // First row whose cumulative mass exceeds u * total (rows of zero mass are never chosen).
    const double target = uniforms[s] * total;
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), target);
    Index i = static_cast<Index>(std::min<std::ptrdiff_t>(it - cumulative.begin(), n - 1));
    while (i > 0 && cumulative[i] == cumulative[i - 1]) --i;  // rounding landed on an empty row
    pairs.rows[s] = i;
  }
  for (int s = 0; s < m; ++s) {
    const Index i = pairs.rows[s];
    const T* row = plan + static_cast<Offset>(i) * stride;
    double mass = 0.0;
    for (Index j = 0; j < k; ++j) mass += static_cast<double>(row[j]);
    GW_CHECK_CODE(mass > 0.0,
                  ErrorCode::kBadData,
                  "cannot sample a column of plan row " << i << ": it has no mass");
    const double target = uniforms[m + s] * mass;
    double running = 0.0;
    Index chosen = -1;
    Index last_positive = 0;
    for (Index j = 0; j < k; ++j) {
      if (row[j] > 0) last_positive = j;
      running += static_cast<double>(row[j]);
      if (running > target && row[j] > 0) {
        chosen = j;
        break;
      }
    }
    // Rounding can leave target just above the final running sum: take the last entry with mass.
    pairs.cols[s] = chosen >= 0 ? chosen : last_positive;
  }
  return pairs;
}

template AnchorPairs sample_anchor_pairs<float>(
    const float*, Index, Index, Offset, std::span<const double>, std::span<const double>);
template AnchorPairs sample_anchor_pairs<double>(
    const double*, Index, Index, Offset, std::span<const double>, std::span<const double>);

}  // namespace gw
