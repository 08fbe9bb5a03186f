// What gw::solve returns: the plan, how the run ended, and where the time went.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/timer.h"
#include "core/types.h"
#include "distances/distance_provider.h"
#include "graph/csr_graph.h"
#include "solver/options.h"
#include "solver/strategy.h"

namespace gw {

enum class Termination {
  kNotRun,         // gw::solve was never called
  kConverged,      // ||T_t - T_{t-1}||_F < tolerance after min_iterations (plain OT, i.e.
                   // fused_weight = 1: its one Sinkhorn solve reached polish_sinkhorn_tolerance)
  kPlateau,        // the smoothed cost stopped improving (Options::plateau_*)
  kMaxIterations,  // max_iterations ran (plain OT: Sinkhorn ran polish_sinkhorn_iterations
                   // without reaching its tolerance)
  kCancelled,      // the progress callback returned false
  kNonFinite,      // a NaN/Inf appeared: in Sinkhorn (the plan is then the previous iterate's) or
                   // in the blended plan
};
// "not run", "converged", "plateau", "max iterations", "cancelled", "non-finite".
std::string_view to_string(Termination termination);

// One outer iteration.
struct IterationRecord {
  int iteration = 0;            // 1-based
  double cost = 0.0;            // <Lambda_t, T_t> (sampled GW cost estimate)
  double error = 0.0;           // ||T_t - T_{t-1}||_F
  double epsilon = 0.0;         // epsilon_t
  int sinkhorn_iterations = 0;  // inner iterations this outer iteration
  double sinkhorn_error = 0.0;  // inner marginal error at the end (NaN if no check ran)
  double seconds = 0.0;         // wall time since the loop started
};

// One start of the exact solver (Options::starts), or of the sparse path (its coarse plans:
// "coarse", then "coarse-spectral-N" for its orientation candidates, solver/sparse/handedness.cpp;
// gw_loss is the coarse problem's loss, objective the sampled cost after the fine probe
// iterations, NaN where no probe ran, and `stopped` says why a candidate was not lifted).
struct StartRecord {
  std::string name;        // "profiles", "product", "profile-vertex", "given", or an orientation
                           // candidate: "spectral", "spectral-reflected"; sparse path: above
  double gw_loss = 0.0;    // exact GW loss of the start's last plan (after its probe, or at the
                           // end for the start that was kept); NaN for a skipped candidate
  double objective = 0.0;  // the fused objective F it reached (= gw_loss without features); NaN
                           // for a skipped candidate
  int iterations = 0;      // basin + conditional-gradient iterations
  double seconds = 0.0;
  // Orientation candidates only (NaN otherwise): the objective F of the candidate's
  // nearest-neighbour map (a map, not a plan: comparable between the two candidates only).
  double map_objective = std::numeric_limits<double>::quiet_NaN();
  std::string skipped;     // why the candidate did not run ("" when it ran)
  std::string stopped;     // why it stopped after its probe iterations ("" when it ran on)
};

struct Result {
  Termination termination = Termination::kNotRun;
  std::string message = "gw::solve was not called";
  int iterations = 0;

  // Shapes: n source nodes, k target nodes.
  Index n = 0;
  Index k = 0;

  // The plan. PlanFormat::kDense: `plan` is n x k float64, row-major. PlanFormat::kTopK: `plan`
  // is empty and `plan_topk` holds each row's top_k largest entries (columns ascending).
  std::vector<double> plan;
  CsrMatrix<double> plan_topk;

  // Argmax of each plan row (the matched target node), from the full plan (ties: smallest column).
  std::vector<Index> matching;

  // Total mass of the returned plan (1 for a balanced problem; m for partial transport).
  double plan_mass = 0.0;

  // <Lambda, T> of the last iteration: the sampled GW cost estimate.
  double gw_cost_estimate = std::numeric_limits<double>::quiet_NaN();

  // The true GW loss sum_{ijkl} (DX_ik - DY_jl)^2 T_ij T_kl of the final plan, distances
  // max-normalized per side. Exact when gw_loss_exact; otherwise a Monte Carlo estimate over
  // Options::loss_anchors anchor pairs with standard error gw_loss_stderr. NaN when not computed.
  double gw_loss = std::numeric_limits<double>::quiet_NaN();
  double gw_loss_stderr = std::numeric_limits<double>::quiet_NaN();
  bool gw_loss_exact = false;

  // Per-iteration log.
  std::vector<IterationRecord> log;

  // Seconds per phase, in total. Phases, each present only when it ran: "setup" (providers,
  // marginals), "multiscale", "init" (the distance-profile plan), per iteration "sampling",
  // "distances", "cost", "sinkhorn" / "polish_sinkhorn", "plan"; "round", "loss", "output"; restart
  // probes add "probe_<phase>" for their loop phases and "probe_loss"; the CUDA loop adds
  // "device_setup", "upload" and "download".
  PhaseTimes timings;
  double total_seconds = 0.0;

  // What actually ran (requested values are in `options`).
  Backend backend = Backend::kCpu;
  int threads = 0;
  // The instruction-set target the CPU kernels ran with (core/isa.h): "baseline", "avx2" or
  // "avx512". Results are bitwise reproducible for a given target, backend and thread count.
  std::string isa;
  std::uint64_t seed = 0;
  std::string source_distances;  // provider name per side ("landmark", "precomputed", ...)
  std::string target_distances;
  DistanceStats source_distance_stats;
  DistanceStats target_distance_stats;
  std::size_t distance_memory_bytes = 0;

  // Restart probes (Options::restarts): the GW loss each probe's plan reached, and the probe that
  // continued (its index into restart_losses). Empty / -1 without probing.
  std::vector<double> restart_losses;
  int restart_chosen = -1;

  // How the problem was solved (choose_strategy, strategy.h): support, solver, exact method,
  // backend, precision, threads and loss, each with its reason, the memory estimate made before
  // anything large was allocated and the budget it was held to, and every candidate's prediction.
  Strategy strategy;
  // The plan support's entries before the final pruning to support_size per row (n k on the dense
  // path), and how often the sparse support was re-grown.
  Offset support_nnz = 0;
  int support_regrowths = 0;
  // L1 marginal errors of the returned plan, sum_i |T_i. - p_i| and sum_j |T_.j - q_j| (NaN when
  // not measured).
  double row_marginal_error = std::numeric_limits<double>::quiet_NaN();
  double column_marginal_error = std::numeric_limits<double>::quiet_NaN();

  // Multiscale warm start (on the sparse path: the coarse alignment of the cells): whether it
  // ran, its size, iterations and seconds.
  bool multiscale_used = false;
  Index multiscale_size = 0;
  int multiscale_iterations = 0;
  double multiscale_seconds = 0.0;

  // Every start the exact solver (or the sparse path) ran and the index of the start whose plan
  // was kept (-1: none).
  std::vector<StartRecord> starts;
  int start_chosen = -1;
  // Conditional-gradient iterations of the exact solver's float64 finish after float32 products
  // (counted in the kept start's iterations too; 0 when the run was float64 throughout).
  int float64_finish_iterations = 0;

  // The options of the run (the progress callback is not kept).
  Options options;

  bool ok() const {
    return termination == Termination::kConverged || termination == Termination::kPlateau ||
           termination == Termination::kMaxIterations;
  }

  // One line: termination, iterations, cost, loss, mass, seconds.
  std::string brief_report() const;
  // Several lines: the brief report, options, timings per phase, distance statistics.
  std::string full_report() const;
  // Everything but the plan, as one JSON object (pretty-printed when `pretty`).
  std::string to_json(bool pretty = true) const;
};

}  // namespace gw
