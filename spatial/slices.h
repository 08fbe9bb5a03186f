// Serial tissue sections aligned into one frame (PASTE's pairwise alignment and stacking, Zeira
// et al. 2022, at any size): for each pair of sections (consecutive, or each to a reference), a
// fused GW plan between their in-plane geometries with an expression cost, then a weighted
// Procrustes registration (registration.h) that carries each section into the frame of the first
// (or of the reference), with a z per section. Sections that share only part of their area are
// registered by the pattern search instead (RegistrationMode, search.h).
//
// The solve goes through gw::solve and its dispatcher (solver/strategy.h): the geometry is each
// section's coordinates (Geometry::from_points: a kNN graph whose shortest paths are the in-plane
// distances, all pairs for small sections, landmarks for large ones -- never n x n at 10^5 cells),
// the expression cost is Problem::source/target_features (evaluated per support entry on the sparse
// path, never an n x k matrix there). Partial overlap uses Options::partial_mass, which the
// dispatcher runs on the dense path only: a partial alignment of sections too large for a dense
// plan fails before any pair is solved, with the dispatcher's message.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "solver/options.h"
#include "solver/problem.h"
#include "solver/result.h"
#include "spatial/plan_view.h"
#include "spatial/registration.h"
#include "spatial/search.h"

namespace gw::spatial {

// One section: n cells with d = 2 in-plane coordinates (row-major) and per-cell features (n x f,
// the same f for all sections; expression.h), borrowed for the duration of the call.
struct SectionData {
  std::string name;  // for messages and reports (e.g. the file name)
  Index n = 0;
  int dimension = 2;
  std::vector<double> coordinates;
  DenseMatrix<double> features;
};

// kPlan: the weighted Procrustes fit of the pair's fused plan (PASTE's stacking). kSearch: the
// pattern search (search.h): a balanced fused plan, a balanced plan on the geometry alone for the
// outline's rotation (a second solve, fused_weight 0), then the search over positions scored by
// niche-expression agreement (from both half turns of the geometric fit) and a trimmed ICP. A
// fused plan between sections that share only part of their area maps window onto window (at
// 70% overlap its fit is 0.16-0.20 of the diameter off, the search's 0.025-0.07); the search is
// for that case. It needs expression features (fused_weight > 0). With a partial overlap (given
// or estimated) the plan is then solved once more in the registered frame (a refinement round),
// so that its mass stays on the overlap.
enum class RegistrationMode { kAuto, kPlan, kSearch };
const char* to_string(RegistrationMode mode);
// "auto" / "plan" / "search"; anything else is kInvalidArgument listing them.
RegistrationMode registration_mode_from_string(std::string_view text);

struct SlicesOptions {
  // Options of every pair's solve (fused_weight, seed, threads, top_k, ...). fused_weight is the
  // weight of the expression term (PASTE's alpha = 0.1 on the geometry is fused_weight = 0.9).
  Options solver;
  // Fraction of each section's mass in the overlap of a pair, in (0, 1]: partial transport of
  // that mass (Options::partial_mass = overlap x max(n, k)). Unset: balanced transport.
  std::optional<double> overlap;
  // Estimate the overlap per pair instead: a balanced solve and registration first, then the
  // fraction of the moving section's cells whose nearest registered neighbour in the fixed section
  // is within overlap_radius x the fixed section's median nearest-neighbour spacing (and vice
  // versa, the smaller of the two), then the partial solve with that mass.
  bool estimate_overlap = false;
  double overlap_radius = 2.0;
  // Refinement rounds after the first registration (an ICP through the solver; with the search,
  // the rounds only sharpen the plan and the search's motion is kept): each round solves
  // the pair again with the registered coordinates appended to the features -- scaled so that a
  // displacement of refine_radius x the fixed section's median cell spacing costs as much as the
  // mean squared expression distance -- and registers again from the new plan. The first plan
  // settles the global placement (GW is blind to rotation, so it finds it from the geometry);
  // the rounds sharpen the correspondences it leaves blurred along the tissue's layers.
  int refine = 0;
  double refine_radius = 3.0;
  // How each pair is registered (RegistrationMode). kAuto: the pattern search when the sections
  // overlap partially (overlap < 1 or estimate_overlap), the plan's Procrustes fit otherwise.
  RegistrationMode registration_mode = RegistrationMode::kAuto;
  SearchOptions search_options;
  // -1: consecutive pairs (0,1), (1,2), ...; section s is registered onto section s - 1's
  // registered coordinates. Otherwise every other section is aligned to this one.
  int reference = -1;
  // z of section s is s x z_spacing.
  double z_spacing = 1.0;
  RegistrationOptions registration;
};

struct PairAlignment {
  int fixed = 0;   // the plan's rows (source)
  int moving = 0;  // the plan's columns (target), registered onto `fixed`
  Result result;   // the solve: plan (dense or CSR), loss, strategy, timings
  Registration registration;
  double overlap = 1.0;  // the overlap used (given, estimated, or 1 for balanced)
  double overlap_mass = 1.0;  // the plan's total mass
  int refinements = 0;        // refinement rounds run
  bool searched = false;      // the pattern search registered the pair (RegistrationMode)
  SearchResult search;
  double solve_seconds = 0.0;  // all solves of the pair, refinements included
  double register_seconds = 0.0;
};

struct SlicesResult {
  std::vector<PairAlignment> pairs;
  // Per section: the motion into the common frame, and the registered coordinates with z
  // appended (n x 3, row-major).
  std::vector<RigidTransform> transforms;
  std::vector<std::vector<double>> aligned;
};

// Called after each pair with (pairs done, pairs in all); return false to stop early: the result
// then holds the pairs done so far, and `aligned` is empty.
using SlicesProgress = std::function<bool(int done, int total)>;

// kInvalidArgument for fewer than 2 sections, a dimension other than 2, features of different
// widths or rows, a reference out of range, an overlap outside (0, 1], the
// search without expression features (fused_weight 0). With a partial overlap (given or
// estimated) every pair is checked against the dispatcher before anything is solved: a pair whose
// dense plan does not fit fails there ("... cannot be aligned with a partial overlap (checked
// before any solve): " and the dispatcher's message). gw::solve's errors pass through with the
// pair's section names prefixed.
SlicesResult align_sections(const std::vector<SectionData>& sections, const SlicesOptions& options,
                            const SlicesProgress& progress = {});

// A view of a Result's plan (dense or CSR, whichever it holds); the Result must outlive it.
PlanView plan_of(const Result& result);

}  // namespace gw::spatial
