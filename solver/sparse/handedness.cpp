// The sparse path's coarse orientation candidates (sparse_impl.h, CoarseOrientation): the cells'
// spectral embeddings (the exact solver's SpectralStarts on the pick-to-pick distances) give a
// start in each handedness; those whose map disagrees with the kept coarse plan are returned.
//
// Why here and not in the coarse solve's own orientation check: that check judges the
// candidates by the coarse objective, and ~100 cells of a 3,000-vertex quadruped are too few for
// it to see left from right (the mirrored coarse plan had the lower coarse loss, 0.00526, and the
// fine level then stayed in the mirror: 18.8% geodesic error). The fine level sees it (the
// mirror's sampled loss is ~1.5x the true map's), so the sparse path solves the coarse problem
// once more from each disagreeing candidate and lets a few fine iterations judge.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "core/context.h"
#include "core/error.h"
#include "solver/exact/spectral_starts_impl.h"
#include "solver/solver_impl.h"
#include "solver/sparse/sparse_impl.h"

namespace gw::detail {

namespace {

// The handedness is clear when the other handedness's best map has this many times the objective
// of the best map (the exact solver's kHandednessMargin; the spiral's cells come out near 1).
constexpr double kCoarseHandednessMargin = 1.25;
// Two coarse plans are the same candidate when this share of the mass agrees (within
// SpectralStarts::kAgreementRadius of the target's diameter).
constexpr double kCoarseAgreedShare = 0.5;
// Cells up to which the candidates are computed on one thread (the constructor says why).
constexpr Index kSingleThreadCells = 1024;

Mat<double> normalized_cell_distances(const Quantization& q, const Options& options,
                                      const char* side) {
  const auto provider = make_provider(
      Geometry::from_distances(DenseMatrix<float>(q.cells, q.cells, q.distances)), options, side);
  const std::vector<float> block = normalized_full_distances(*provider);
  Mat<double> out(q.cells, q.cells);
  for (Index a = 0; a < q.cells; ++a)
    for (Index b = 0; b < q.cells; ++b)
      out(a, b) = static_cast<double>(block[static_cast<std::size_t>(a) * q.cells + b]);
  return out;
}

std::vector<Index> coarse_argmax(const std::vector<double>& plan, Index cells) {
  std::vector<Index> m(cells, 0);
  for (Index a = 0; a < cells; ++a) {
    const double* row = plan.data() + static_cast<std::size_t>(a) * cells;
    m[a] = static_cast<Index>(std::max_element(row, row + cells) - row);
  }
  return m;
}

}  // namespace

CoarseOrientation::CoarseOrientation(const Quantization& src,
                                     const Quantization& tgt,
                                     const std::vector<double>& pc,
                                     const std::vector<double>& qc,
                                     const Options& options)
    : cells_(src.cells) {
  // Up to kSingleThreadCells cells the embeddings and maps are a few million operations in ~100
  // short parallel regions; on a loaded machine each region waited for a descheduled thread
  // (0.33-1.28 s for 312 cells at load 4-5 on 2 cores, against 0.007 s unloaded), so one thread.
  std::optional<ScopedThreads> single;
  if (cells_ <= kSingleThreadCells) single.emplace(1);
  GW_CHECK(src.cells == tgt.cells, "coarse orientation: " << src.cells << " vs " << tgt.cells);
  pb_ = std::make_unique<PreparedProblem>();
  pb_->n = pb_->k = cells_;
  pb_->p = pc;
  pb_->q = qc;
  options_ = std::make_unique<Options>(options);
  options_->fused_weight = 0.0;  // the embeddings' maps are judged on the distances alone
  options_->support_feature_candidates = 0;
  gw_ = std::make_unique<ExactGw<double>>(normalized_cell_distances(src, options, "source"),
                                          normalized_cell_distances(tgt, options, "target"),
                                          pb_->p, pb_->q, nullptr, 0.0);
  spectral_ = std::make_unique<SpectralStarts<double>>(*pb_, *options_, *gw_);
  ratio_ = spectral_->objective(1) / spectral_->objective(0);  // ranks the patterns now
}

CoarseOrientation::~CoarseOrientation() = default;

bool CoarseOrientation::clear() const { return ratio_ >= kCoarseHandednessMargin; }

double CoarseOrientation::agreement(const std::vector<double>& a,
                                    const std::vector<double>& b) const {
  return spectral_->agreement(coarse_argmax(a, cells_), coarse_argmax(b, cells_));
}

bool CoarseOrientation::same(const std::vector<double>& a, const std::vector<double>& b) const {
  return agreement(a, b) >= kCoarseAgreedShare;
}

std::vector<std::vector<double>> CoarseOrientation::starts_against(
    const std::vector<double>& kept) const {
  std::vector<std::vector<double>> out;
  if (!clear()) return out;
  std::optional<ScopedThreads> single;
  if (cells_ <= kSingleThreadCells) single.emplace(1);
  const std::vector<Index> kept_map = coarse_argmax(kept, cells_);
  for (int which = 0; which < 2; ++which) {
    if (spectral_->agreement(spectral_->map(which), kept_map) >= kCoarseAgreedShare) continue;
    out.push_back(spectral_->entropic(which));
  }
  return out;
}

}  // namespace gw::detail
