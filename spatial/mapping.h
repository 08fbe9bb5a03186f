// Dissociated cells mapped onto a tissue section (moscot's mapping problem; Tangram's and
// novoSpaRc's task): a single-cell atlas has expression but no coordinates, a section has both,
// and fused GW couples them -- the atlas's geometry is its cells' distances in an expression
// space (Geometry::from_points on the atlas's representation: kNN-graph distances, all pairs for
// small atlases, landmarks for large ones), the section's its in-plane distances, and the linear
// term the expression cost between the two on the genes they share (expression.h's joint
// features). The GW term asks cells similar in expression to land close together; the linear
// term carries most of the weight (fused_weight 0.9 by default, as for sections).
//
// The plan's rows are the atlas's cells, its columns the section's: transfer.h pushes the atlas's
// annotations (cell types) onto the section, or pulls the section's (coordinates, domains) onto
// the atlas. Memory as for any gw::solve: the dispatcher keeps a dense plan for small pairs and
// the sparse support (features evaluated per support entry, never n x k) for large ones.
#pragma once

#include <string>

#include "core/types.h"
#include "solver/options.h"
#include "solver/result.h"
#include "spatial/slices.h"

namespace gw::spatial {

// The atlas: n cells, each with a point in its own representation (`geometry`, n x e: e.g. the
// features themselves, or an obsm embedding such as X_pca or X_scVI) and the shared-gene
// features (n x f, the same f as the section's). Borrowed for the call.
struct AtlasData {
  std::string name;  // for messages (e.g. the file name)
  DenseMatrix<double> geometry;
  DenseMatrix<double> features;
};

// Defaults of a mapping (the CLI's and Python's, each applied only where the caller set nothing):
// - fused_weight 0.9: the expression cost carries the mapping, the geometry regularizes it;
// - rho_a = kMappingRhoA: the atlas's marginal is relaxed (semi-relaxed transport), because an
//   atlas's cell-type proportions are the whole tissue's while a section sees a part of it; with
//   both marginals hard the surplus types must land on the section's other cells. Measured on
//   `gwalign generate tissue --sections 1 --n 3000 --atlas 4000` (dense plan): cell-type accuracy
//   0.967 balanced, 1.0 with rho_a 0.1;
// - the dense plan up to kMappingDenseMaxEntries entries (n x k): the sparse support follows the
//   section's geometry, and a section cell of a type scattered across the section is often
//   outside the supports of the atlas cells of its type (cell-type accuracy 0.90-0.92 against
//   1.0 dense at 4,000 x 2,700); larger pairs take the sparse support as any solve;
// - support_feature_candidates = kMappingFeatureCandidates on the sparse support: each section
//   cell also joins the supports of the nearby atlas cells closest to it in expression (cell
//   types 0.898 -> 0.962 at 4,000 x 2,703 on the sparse support).
inline constexpr double kMappingFusedWeight = 0.9;
inline constexpr double kMappingRhoA = 0.1;
inline constexpr double kMappingDenseMaxEntries = 2.5e7;
inline constexpr int kMappingFeatureCandidates = 4;

// kInvalidArgument when the atlas's geometry and features disagree on the cell count, either is
// empty, the features' widths differ from the section's, or the section is not 2-D with n rows of
// features. gw::solve's errors pass through prefixed with both names. Thread-safety as gw::solve.
Result map_atlas(const AtlasData& atlas, const SectionData& section, const Options& options);

}  // namespace gw::spatial
