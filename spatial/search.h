// Registration of a section by its tissue pattern: a fused GW plan between two sections that
// share only part of their area maps each section's whole window onto the other's (balanced
// transport must place the non-shared cells somewhere; a partial plan from the sampled solver
// does not reliably pick the shared part), so the plan's Procrustes fit is shifted by about the
// non-shared width (at 70% overlap, 0.16-0.20 of the diameter). This step corrects it from a
// starting motion (in align_sections: the fit of a plan on the geometry alone, whose rotation is
// the outline's):
//
//  1. Niche features: each cell's expression features averaged over the cells within a radius
//     of the section's median nearest-neighbour spacing (the local cell-type mix, which is what
//     a tissue domain is; single cells' profiles are too noisy to locate a cell).
//  2. Global search over translations within +-extent x the fixed section's diameter (and
//     rotations within +-max_angle of the start's, about the moved section's centroid), scored
//     on a sample of moving cells by the truncated cost mean_j min(|h_j - g_nn(j)|^2 / (c tau), 1),
//     where nn(j) is the nearest fixed cell within match_radius spacings (no such cell: the cell
//     is outside the overlap and costs a constant) and c is the mean squared niche distance
//     between the sections. Truncated (redescending): cells outside the overlap weigh a constant,
//     so they do not pull; on the fine levels that constant (unmatched_cost) sits between a true
//     match's typical cost and 1, so a nearly-right match along a layer does not outscore leaving
//     a cell unmatched (at 1 it did, and every pair slid toward more overlap). Coarse level:
//     niches over coarse_niche_radius spacings, tau = 1, an unmatched cell costs 1, shifts every
//     5 spacings over the whole extent (a smooth score, its optimum in the right basin); fine
//     levels: niche_radius niches, tau = truncation, shifts every 1.25 then 0.31 spacings around
//     the best coarse candidates.
//  3. Trimmed ICP: every moving cell is matched to the fixed cell within match_radius that
//     minimizes |x - y|^2 / r^2 + |h - g|^2 / c; matches whose niche cost reaches the truncation
//     are dropped and the rest weighted by (1 - cost / truncation)^2 (Tukey's biweight) in a
//     weighted Procrustes fit; repeated until no cell moves 1e-3 spacings (at most icp_rounds).
//
// Accuracy is bounded by how the tissue changes between sections and by how sharply its pattern
// pins a position. On `gwalign generate tissue` five-section stacks (default --layer-drift) the
// layers move between sections so that even a registration reading every cell's TRUE domain
// lands 0.018-0.059 of the diameter from the true motion per pair (bench/peers/stack_score.py,
// "oracle"); this search is 0.024-0.054 per pair there. With --layer-drift 0 the oracle is at
// 0.003-0.013 and this search 0.006-0.040: the rest is the expression score's noise along the
// layers, a remaining slide toward more overlap (about 10 units) and the outline's rotation
// (0.5-5 degrees from the geometric plan).
//
// Memory O(n f) (the niche features); time O(n (f + neighbours)) per ICP round plus
// O(candidates x sample x f) for the search -- never n x k.
#pragma once

#include <vector>

#include "core/types.h"
#include "solver/problem.h"  // DenseMatrix
#include "spatial/registration.h"

namespace gw::spatial {

struct SearchOptions {
  // Half-width of the translation search, as a fraction of the fixed section's diameter
  // (bounding-box diagonal). 0 skips the global search (ICP only, from the plan's motion).
  double extent = 0.4;
  // Half-width of the rotation search about the starting rotation, in radians. 0 (default): the
  // start's rotation is kept -- in slices it is the geometric plan's, within about a degree of
  // the shape's, while the expression score, flat across rotations of a few degrees, would trade
  // rotation for a larger overlap.
  double max_angle = 0.0;
  // Radii in units of the fixed section's median nearest-neighbour spacing.
  double niche_radius = 5.0;
  double coarse_niche_radius = 8.0;  // the search's coarse level (untruncated cost)
  double match_radius = 2.0;
  // Moving cells scored per search candidate (an even stride sample). The score is flat near its
  // optimum: 600 cells put the optimum 0.13 of the diameter off where all 2,983 put it 0.025 off
  // (one pair at 70% overlap).
  Index sample = 4000;
  // Fine levels and ICP: niche costs |h - g|^2 / c at or above this are cut to it (the ICP drops
  // such matches): half the mean cross-section niche distance.
  double truncation = 0.5;
  // Fine levels: the score of a moving cell with no fixed cell within match_radius, on the same
  // scale as a matched cell's min(cost / truncation, 1). At 1 (the truncation) a layered tissue's
  // nearly-right matches (0.6-0.9) outscore it, and the search slid every section 15-45 units
  // toward more overlap (five-section stacks and two-section draws, bench/RESULTS.md row 52); a
  // true match scores about 0.5. Measured 0.6-1.0: 0.7 kept (0.6 became less stable).
  double unmatched_cost = 0.7;
  int icp_rounds = 30;
};

// Mean of |a_i - b_j|^2 over all pairs of rows (a n x f, b k x f): the two spreads about their
// means plus the squared distance of the means; exact, O((n + k) f). The scale of the search's
// niche cost and of slices' refinement rounds.
double mean_pair_sq_distance(const DenseMatrix<double>& a, const DenseMatrix<double>& b);

struct SearchResult {
  RigidTransform transform;  // moving (its own coordinates) -> the fixed frame
  int candidates = 0;        // search candidates scored
  int icp_rounds = 0;        // ICP rounds run
  // Fraction of moving cells matched (niche cost below the truncation) by the last ICP round:
  // an estimate of the share of the moving section inside the overlap.
  double matched_fraction = 0.0;
  double score = 0.0;  // the truncated cost of the final motion on the sample, in [0, 1]
};

// fixed: n x 2 in the common frame, fixed_features n x f; moving: k x 2 in its own coordinates,
// moving_features k x f; start: the starting motion (moving -> fixed frame). kInvalidArgument on
// mismatched shapes or an empty side. Thread-safe.
SearchResult search_registration(const std::vector<double>& fixed,
                                 const DenseMatrix<double>& fixed_features,
                                 const std::vector<double>& moving,
                                 const DenseMatrix<double>& moving_features,
                                 const RigidTransform& start,
                                 const SearchOptions& options = {});

// Niche features (step 1): row i is the mean of `features` over the points of `points` (n x 2)
// within `radius` of point i (itself included). O(n (f + neighbours)).
DenseMatrix<double> niche_features(const std::vector<double>& points, const DenseMatrix<double>& features,
                                   double radius);

}  // namespace gw::spatial
