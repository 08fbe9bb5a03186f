// Anchor-pair sampling from a transport plan (docs/architecture.md section 1).
//
// The sampled GW loop draws M pairs (i, j) with probability proportional to the current plan T:
// a row i by the row masses r_i = sum_j T_ij, then a column j of that row by T_ij / r_i. Draws are
// independent (with replacement). Every draw is a function of two uniforms in [0, 1), taken from a
// gw::Rng in a fixed order (row uniforms u_0..u_{M-1} first, then column uniforms), so a seed fixes
// the samples on every backend: the CPU and CUDA samplers consume the same uniforms and differ only
// where floating-point sums of the plan differ.
//
// Plans are dense n x k, row-major with a row stride (entry (i, j) at plan[i * stride + j]),
// float32 or float64, non-negative. Thread-safety: pure functions.
#pragma once

#include <span>
#include <vector>

#include "core/rng.h"
#include "core/types.h"

namespace gw {

struct AnchorPairs {
  std::vector<Index> rows;  // i_m, m = 0..M-1
  std::vector<Index> cols;  // j_m
  Index size() const { return static_cast<Index>(rows.size()); }
};

// Draws 2 * m uniforms from `rng` in the documented order (rows, then columns).
std::vector<double> draw_sampling_uniforms(Rng& rng, int m);

// The pairs for the given uniforms (2M of them, rows first). `row_mass` (length n) are the row
// sums of the plan, as the caller usually has them from the pass that produced the plan; pass an
// empty span to have them computed here (one read of the plan). Searches: binary search over the
// cumulative row masses (double), then a linear scan of the drawn row's cumulative sums (double).
// A row or plan of zero total mass throws kBadData (a plan must carry mass to be sampled).
// O(n + M k) time; O(n) extra memory.
template <typename T>
AnchorPairs sample_anchor_pairs(const T* plan,
                                Index n,
                                Index k,
                                Offset stride,
                                std::span<const double> row_mass,
                                std::span<const double> uniforms);

// The rows of the pairs alone, from the row masses (length n, non-negative) and the first half of
// `uniforms` (2M entries, as above): the draws sample_anchor_pairs makes, for a plan whose rows
// are kept elsewhere (a sparse support, a device). kBadData when the masses sum to zero.
std::vector<Index> sample_rows(std::span<const double> row_mass, std::span<const double> uniforms);

// A plan held as CSR rows (a sparse support): row i's entries are values[offsets[i] ..
// offsets[i + 1]) in columns cols[...], non-negative. The same draws as sample_anchor_pairs on
// the dense plan with those entries (and zeros elsewhere): the rows by sample_rows, then a column
// of each drawn row by a scan of its entries in CSR order, rounding falling to the last entry with
// mass. `row_values` are the drawn rows' entries concatenated in draw order (row rows[0]'s
// entries, then rows[1]'s, ...; repeats included), so that a caller whose plan lives elsewhere
// provides only those; sample_csr_anchor_pairs gathers them from `values` itself.
void sample_csr_columns(std::span<const Offset> offsets,
                        std::span<const Index> cols,
                        std::span<const double> row_values,
                        std::span<const double> uniforms,
                        AnchorPairs& pairs);
AnchorPairs sample_csr_anchor_pairs(std::span<const Offset> offsets,
                                    std::span<const Index> cols,
                                    std::span<const double> values,
                                    std::span<const double> row_mass,
                                    std::span<const double> uniforms);

// Convenience: draws the uniforms from `rng`, then samples.
template <typename T>
AnchorPairs sample_anchor_pairs(const T* plan, Index n, Index k, Offset stride, int m, Rng& rng) {
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, m);
  return sample_anchor_pairs(plan, n, k, stride, {}, uniforms);
}

}  // namespace gw
