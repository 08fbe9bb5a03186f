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

  std::vector<double> masses;
  if (row_mass.empty()) {
    masses.resize(n);
    for (Index i = 0; i < n; ++i) {
      const T* row = plan + static_cast<Offset>(i) * stride;
      double mass = 0.0;
      for (Index j = 0; j < k; ++j) mass += static_cast<double>(row[j]);
      masses[i] = mass;
    }
    row_mass = masses;
  }
  AnchorPairs pairs;
  pairs.rows = sample_rows(row_mass, uniforms);
  pairs.cols.resize(m);
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

std::vector<Index> sample_rows(std::span<const double> row_mass, std::span<const double> uniforms) {
  GW_CHECK(uniforms.size() % 2 == 0 && !uniforms.empty(),
           "sampling needs 2 uniforms per pair, got " << uniforms.size());
  const Index n = static_cast<Index>(row_mass.size());
  const int m = static_cast<int>(uniforms.size() / 2);
  // Cumulative row masses; the sum is sequential so the result does not depend on threads.
  std::vector<double> cumulative(n);
  double total = 0.0;
  for (Index i = 0; i < n; ++i) cumulative[i] = (total += row_mass[i]);
  GW_CHECK_CODE(total > 0.0, ErrorCode::kBadData, "cannot sample anchors from a plan of zero mass");
  std::vector<Index> rows(m);
  for (int s = 0; s < m; ++s) {
    // First row whose cumulative mass exceeds u * total (rows of zero mass are never chosen).
    const double target = uniforms[s] * total;
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), target);
    Index i = static_cast<Index>(std::min<std::ptrdiff_t>(it - cumulative.begin(), n - 1));
    while (i > 0 && cumulative[i] == cumulative[i - 1]) --i;  // rounding landed on an empty row
    rows[s] = i;
  }
  return rows;
}

void sample_csr_columns(std::span<const Offset> offsets,
                        std::span<const Index> cols,
                        std::span<const double> row_values,
                        std::span<const double> uniforms,
                        AnchorPairs& pairs) {
  const int m = static_cast<int>(uniforms.size() / 2);
  GW_CHECK(pairs.rows.size() == static_cast<std::size_t>(m),
           "sample_csr_columns: " << pairs.rows.size() << " rows for " << m << " pairs");
  pairs.cols.resize(m);
  std::size_t at = 0;  // pair s's row starts at row_values[at]
  for (int s = 0; s < m; ++s) {
    const Index i = pairs.rows[s];
    const Offset begin = offsets[i], len = offsets[i + 1] - begin;
    GW_CHECK(at + static_cast<std::size_t>(len) <= row_values.size(),
             "sample_csr_columns: the row values end before pair " << s << "'s row " << i);
    const double* row = row_values.data() + at;
    at += static_cast<std::size_t>(len);
    double mass = 0.0;
    for (Offset e = 0; e < len; ++e) mass += row[e];
    GW_CHECK_CODE(mass > 0.0,
                  ErrorCode::kBadData,
                  "cannot sample a column of plan row " << i << ": it has no mass");
    const double target = uniforms[m + s] * mass;
    double running = 0.0;
    Index chosen = -1, last_positive = len > 0 ? cols[begin] : 0;
    for (Offset e = 0; e < len; ++e) {
      if (row[e] > 0) last_positive = cols[begin + e];
      running += row[e];
      if (running > target && row[e] > 0) {
        chosen = cols[begin + e];
        break;
      }
    }
    pairs.cols[s] = chosen >= 0 ? chosen : last_positive;
  }
}

AnchorPairs sample_csr_anchor_pairs(std::span<const Offset> offsets,
                                    std::span<const Index> cols,
                                    std::span<const double> values,
                                    std::span<const double> row_mass,
                                    std::span<const double> uniforms) {
  AnchorPairs pairs;
  pairs.rows = sample_rows(row_mass, uniforms);
  std::vector<double> row_values;
  for (Index i : pairs.rows) {
    row_values.insert(row_values.end(), values.begin() + offsets[i], values.begin() + offsets[i + 1]);
  }
  sample_csr_columns(offsets, cols, row_values, uniforms, pairs);
  return pairs;
}

template AnchorPairs sample_anchor_pairs<float>(
    const float*, Index, Index, Offset, std::span<const double>, std::span<const double>);
template AnchorPairs sample_anchor_pairs<double>(
    const double*, Index, Index, Offset, std::span<const double>, std::span<const double>);

}  // namespace gw
