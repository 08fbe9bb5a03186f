#include "pairwise/pair_solve.h"

#include <cmath>

#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "distances/precomputed.h"
#include "solver/exact/exact.h"
#include "solver/solve.h"

namespace gw::pairwise {

DenseMatrix<float> euclidean_distances(std::span<const double> points, Index n, int d) {
  GW_CHECK(points.size() == static_cast<std::size_t>(n) * d,
           "euclidean_distances: " << points.size() << " values for " << n << " x " << d);
  std::vector<float> out(static_cast<std::size_t>(n) * n, 0.0f);
  for (Index i = 0; i < n; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      double sum = 0.0;
      for (int c = 0; c < d; ++c) {
        const double diff = points[static_cast<std::size_t>(i) * d + c] -
                            points[static_cast<std::size_t>(j) * d + c];
        sum += diff * diff;
      }
      const float value = static_cast<float>(std::sqrt(sum));
      out[static_cast<std::size_t>(i) * n + j] = value;
      out[static_cast<std::size_t>(j) * n + i] = value;
    }
  }
  return DenseMatrix<float>(n, n, std::move(out));
}

PreparedSpace prepare_space(const Space& space, const Options& options, PointMetric metric) {
  PreparedSpace prepared;
  prepared.weights = space.weights;
  const Geometry& geometry = space.geometry;
  if (geometry.kind() == Geometry::Kind::kPoints && metric == PointMetric::kEuclidean) {
    DenseOptions dense;
    dense.threads = options.threads;
    DenseMatrix<float> d =
        euclidean_distances(geometry.points(), geometry.num_nodes(), geometry.dimension());
    prepared.provider = make_dense_provider(std::move(d.values), d.rows, dense);
  } else {
    // Every other case exactly as gw::solve builds it (a graph's or the kNN graph's distances, a
    // given matrix or provider).
    prepared.provider = distance_provider_for(geometry, options);
  }
  // Sorting every node's distances for the profiles was ~9% of a one-start 150-node pair
  // (bench/RESULTS.md, issue 14); a space takes part in N - 1 pairs.
  if (options.solver != SolverKind::kSampled && options.fused_weight < 1.0 &&
      prepared.provider->num_nodes() <= options.profile_anchors) {
    prepared.profiles = std::make_shared<const SpaceProfiles>(exact_distance_profiles(
        *prepared.provider, prepared.weights, options.profile_quantiles));
  }
  return prepared;
}

Options default_pair_options() {
  // Defaults of this front end, not requests: set_default leaves them unmarked (Setting<T>), so
  // the strategy of a pair follows its size as gw::solve's would.
  Options options;
  options.threads = 1;
  // The automatic warm-up draws 40 M = 2000 anchor pairs, sized for thousands of nodes; for a
  // 150 x 150 pair its GEMMs were a third of the solve, and 200 reach the same losses (measured
  // on the shape classes of `gwalign generate shapes`).
  options.warmup_anchors.set_default(200);
  // The solver stays Options' default, auto: at these sizes gw::solve runs the exact-gradient
  // solver (bench/RESULTS.md: equal or lower losses than POT's CG); the settings below are the
  // sampled loop's, used with --solver sampled or on spaces too large for the exact solver.
  // On 120 pairs of 100-200-point shapes (bench/RESULTS.md), a warmer start and finish
  // (epsilon 3e-3 -> 1e-3 instead of 1e-3 -> 5e-4) and 20 iterations before the stopping tests
  // instead of 50 gave slightly lower losses (median 1.12x POT's CG optimum instead of 1.13x) in
  // 20% less time; a colder finish (1e-4, float64) was worse (1.39x).
  options.epsilon.set_default(3e-3);
  options.epsilon_final.set_default(1e-3);
  options.min_iterations.set_default(20);
  // One start of the exact solver (the distance-profile one) instead of gw::solve's three: on the
  // 40- and 30-space shape collections of bench/RESULTS.md, three starts cost 1.7-1.8x the time
  // for mean losses 0.7% and 0.05% lower, and the same 1-NN accuracy (1.000 and 0.900); the losses
  // of one start are still below POT's CG on both (mean 0.01497 vs 0.01619, 0.01482 vs 0.01582).
  // A pairwise matrix is read by its ranking, which a rare mirrored optimum barely moves, and it
  // multiplies every per-pair second by N^2 / 2.
  options.starts.set_default(1);
  // For the same reason no orientation check after it (Options::orientation_starts): on the
  // 40-shape collection of `gwalign generate shapes --classes 5 --per-class 8 --seed 0` it cost
  // 32-39% more CPU time (one thread: 5.93-6.07 s vs 4.26-4.60 s for 780 pairs).
  options.orientation_starts.set_default(false);
  // The start's Sinkhorns stop at 10 iterations instead of 30 (the profile plan's and each
  // mirror-descent basin step's): conditional gradient refines the plan anyway. On the 40- and
  // 36-space collections of bench/RESULTS.md (issue 14) this took 9-10% off the run, with mean
  // losses 0.27% lower and 0.08% higher, 78-82% of pairs equal or lower, and the same 1-NN accuracy.
  options.profile_sinkhorn_iterations = 10;
  options.mirror_sinkhorn_iterations.set_default(10);
  // Conditional gradient stops at a relative decrease of 1e-5 instead of 1e-9 (which also skips
  // the float64 finish and the float64 copy for the loss, Options::exact_tolerance): the last
  // iterations polish the fifth digit of a distance that is read by its ranking. On 300 pairs of
  // the 40-shape collection (interleaved per-pair timing, bench/RESULTS.md, issue 14) a pair took
  // 16% less time for a mean loss 0.02% higher.
  options.exact_tolerance.set_default(1e-5);
  options.plan_format.set_default(PlanFormat::kDense);
  options.compute_gw_loss = true;
  return options;
}

std::uint64_t pair_seed(std::uint64_t base, Index i, Index j) {
  const std::uint64_t pair = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(i)) << 32) |
                             static_cast<std::uint32_t>(j);
  return mix64(mix64(base) ^ mix64(pair));
}

double gw_distance(double objective) { return 0.5 * std::sqrt(std::max(objective, 0.0)); }

namespace {

// The problem solve_pair hands gw::solve (loss_is_exact predicts on the same one).
Problem pair_problem(const PreparedSpace& source, const PreparedSpace& target) {
  Problem problem;
  problem.source = Geometry::from_provider(source.provider);
  problem.target = Geometry::from_provider(target.provider);
  problem.source_weights = source.weights;
  problem.target_weights = target.weights;
  problem.source_profiles = source.profiles;
  problem.target_profiles = target.profiles;
  return problem;
}

}  // namespace

PairResult solve_pair(const PreparedSpace& source,
                      const PreparedSpace& target,
                      const Options& options) {
  const Problem problem = pair_problem(source, target);
  Stopwatch watch;
  const Result result = solve(problem, options);
  PairResult out;
  out.objective = result.gw_loss;
  out.standard_error = result.gw_loss_exact ? 0.0 : result.gw_loss_stderr;
  out.loss_exact = result.gw_loss_exact;
  out.termination = result.termination;
  out.iterations = result.iterations;
  out.seconds = watch.seconds();
  return out;
}

bool loss_is_exact(const PreparedSpace& source,
                   const PreparedSpace& target,
                   const Options& options) {
  if (!options.compute_gw_loss) return false;
  return choose_strategy(pair_problem(source, target), options).loss_exact;
}

}  // namespace gw::pairwise
