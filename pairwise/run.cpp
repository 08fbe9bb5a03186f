#include "pairwise/run.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>
#include <new>
#include <string>

#include "core/context.h"
#include "core/error.h"
#include "core/timer.h"
#include "io/hdf5.h"
#include "pairwise/lower_bound.h"
#include "pairwise/output_impl.h"
#include "pairwise/pair_solve.h"
#include "pairwise/transport_impl.h"

namespace gw::pairwise {
namespace {

using detail::kAbnormal;
using detail::kDone;
using detail::kNaN;
using detail::kPending;
using detail::kPruned;
using detail::PairIndex;
using detail::read_output;
using detail::settings_of;
using detail::State;
using detail::write_output;

// The K-th smallest exact distance found so far per space, kept for pruning (one mutex: updates
// are rare next to a solve). Per process: under MPI each rank sees only the pairs it solved (and,
// on rank 0, those resumed), which prunes less but never wrongly.
class NearestTracker {
 public:
  NearestTracker(Index n, int k) : k_(k), found_(n) {}
  void add(Index i, Index j, double objective) {
    if (!(objective == objective)) return;  // NaN never becomes a neighbour
    std::lock_guard<std::mutex> lock(mutex_);
    insert(found_[i], objective);
    insert(found_[j], objective);
  }
  // +inf until K distances are known.
  double kth(Index i) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto& f = found_[i];
    return static_cast<int>(f.size()) < k_ ? std::numeric_limits<double>::infinity() : f.back();
  }

 private:
  void insert(std::vector<double>& f, double v) {
    f.insert(std::upper_bound(f.begin(), f.end(), v), v);
    if (static_cast<int>(f.size()) > k_) f.pop_back();
  }
  int k_;
  std::mutex mutex_;
  std::vector<std::vector<double>> found_;
};

// The exception being handled, as the code and message of the gw::Error run_pairwise throws for
// it: inside an OpenMP region anything that escapes a thread calls std::terminate, so each
// worker catches everything and the first failure is rethrown after the region.
std::pair<ErrorCode, std::string> current_failure(int threads) {
  try {
    throw;
  } catch (const Error& e) {
    return {e.code(), e.what()};
  } catch (const std::bad_alloc&) {
    // kBadData as for gw::solve's own memory check: the problem does not fit, nothing is broken.
    return {ErrorCode::kBadData,
            "out of memory (std::bad_alloc) with " + std::to_string(threads) +
                " thread(s) each holding one space or pair; run with fewer --threads or on a "
                "machine with more memory"};
  } catch (const std::exception& e) {
    return {ErrorCode::kInternal, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {ErrorCode::kInternal, "internal error: an exception that is not a std::exception"};
  }
}

// The first failure among the workers of an OpenMP region, rethrown after it (see
// current_failure); the other workers check failed() and stop at their next item.
class FirstFailure {
 public:
  explicit FirstFailure(int threads) : threads_(threads) {}
  // Call from a catch block: records the exception being handled, its message after `where`.
  void record(const std::string& where) {
    const auto [code, what] = current_failure(threads_);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failed_.exchange(true)) {
      message_ = where + what;
      code_ = code;
    }
  }
  bool failed() const { return failed_.load(); }
  void rethrow_if_failed() const {
    if (failed_.load()) throw Error(code_, message_);
  }

 private:
  int threads_;
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::string message_;
  ErrorCode code_ = ErrorCode::kInternal;
};

// The per-pair solver options, once the run's own settings are checked. One thread per pair: the
// threads go across pairs.
Options checked_pair_options(const Collection& collection, const RunOptions& options) {
  GW_CHECK(collection.size() >= 2, "pairwise: the collection needs at least 2 spaces");
  GW_CHECK(!options.output.empty(), "pairwise: give an output file");
  GW_CHECK(options.nearest >= 0 && options.nearest < collection.size(),
           "--nearest must be in [0, " << collection.size() - 1 << "], got " << options.nearest);
  GW_CHECK(options.chunk >= 1, "pairwise: chunk must be >= 1, got " << options.chunk);
  GW_CHECK(options.checkpoint_seconds > 0.0,
           "--checkpoint-seconds must be > 0, got " << options.checkpoint_seconds);
  std::string why;
  Options solver = options.solver;
  solver.threads = 1;
  GW_CHECK(solver.is_valid(&why), "pairwise solver options: " << why);
  return solver;
}

// Rank 0's output: the state this run starts from (fresh, or what a resumed output holds) and
// the settings a resume must match; the results of this run are merged into it.
struct RunOutput {
  explicit RunOutput(std::int64_t pairs) : start(pairs) {}

  State start;
  std::int64_t resumed = 0;  // pairs the resumed output had done
  std::string settings;

  // `start` with the recorded results of the work list `todo` (status 0: not yet recorded).
  State with(const std::vector<std::int64_t>& todo, const std::vector<ItemResult>& results) const {
    State out = start;
    for (std::size_t k = 0; k < todo.size(); ++k) {
      const ItemResult& r = results[k];
      if (r.status == 0.0) continue;
      const std::int64_t p = todo[k];
      out.status[p] = static_cast<std::int8_t>(r.status);
      out.objective[p] = r.status == kPruned ? kNaN : r.objective;
      out.standard_error[p] = r.status == kPruned ? kNaN : r.standard_error;
      out.seconds[p] = r.status == kPruned ? kNaN : r.seconds;
    }
    return out;
  }
};

// Rank 0: checks that the output may be written (or resumed) and reads what a resumed one holds.
RunOutput open_output(const Collection& collection, const RunOptions& options) {
  RunOutput output(PairIndex{collection.size()}.total());
  const bool exists = std::filesystem::exists(options.output);
  GW_CHECK_CODE(!exists || options.resume,
                ErrorCode::kCannotCreate,
                "'" << options.output << "' exists; pass --resume to continue that run, or "
                    << "remove it");
  // The output is first written at the first checkpoint, after the spaces are prepared and
  // some pairs solved: a missing or read-only directory must fail now, not then. A Writer
  // checks the directory and creates its temporary there (kCannotCreate, naming both);
  // destroyed uncommitted, it leaves nothing.
  { const io::Writer probe(options.output); }
  output.settings = settings_of(collection, options);
  if (exists) {
    output.start = read_output(options.output, collection, output.settings);
    for (std::int8_t s : output.start.status) output.resumed += s != kPending;
  }
  return output;
}

// Every space's distances (and, for --nearest, their quantiles for the lower bound).
struct PreparedCollection {
  std::vector<PreparedSpace> spaces;
  std::vector<DistanceQuantiles> quantiles;  // empty without --nearest
};

// Every rank prepares every space (distances once per space, threads over spaces).
PreparedCollection prepare_spaces(const Collection& collection,
                                  const Options& solver,
                                  const RunOptions& options,
                                  int threads) {
  const Index n = collection.size();
  PreparedCollection prepared;
  prepared.spaces.resize(n);
  prepared.quantiles.resize(options.nearest > 0 ? n : 0);
  FirstFailure failure(threads);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (Index i = 0; i < n; ++i) {
    if (failure.failed()) continue;
    try {
      PreparedSpace& space = prepared.spaces[i];
      space = prepare_space(collection.spaces[i], solver, options.point_metric);
      if (options.nearest > 0) {
        prepared.quantiles[i] = distance_quantiles(*space.provider, space.weights);
      }
    } catch (...) {
      failure.record(collection.spaces[i].description + ": ");
    }
  }
  failure.rethrow_if_failed();
  return prepared;
}

// Rank 0's work list: the pending pairs in pair order, or by increasing lower bound for --nearest
// (so close pairs come first and the K-th distances shrink early; the bounds go into
// state.lower_bound for the output).
std::vector<std::int64_t> schedule_pairs(const PairIndex& index,
                                         const std::vector<DistanceQuantiles>& quantiles,
                                         int nearest,
                                         State& state) {
  std::vector<std::int64_t> todo;
  for (std::int64_t p = 0; p < index.total(); ++p) {
    if (state.status[p] == kPending) todo.push_back(p);
  }
  if (nearest > 0) {
    state.lower_bound.assign(index.total(), 0.0);
    for (std::int64_t p = 0; p < index.total(); ++p) {
      const auto [i, j] = index.at(p);
      state.lower_bound[p] = distribution_lower_bound(quantiles[i], quantiles[j]);
    }
    std::stable_sort(todo.begin(), todo.end(), [&](std::int64_t a, std::int64_t b) {
      return state.lower_bound[a] < state.lower_bound[b];
    });
  }
  return todo;
}

// Only exact losses set the pruning threshold (see RunOptions::nearest). A resumed output keeps
// no flag for it, but /stderr is 0 exactly for exact losses.
void track_resumed_exact_losses(const PairIndex& index,
                                const State& state,
                                NearestTracker& tracker) {
  for (std::int64_t p = 0; p < index.total(); ++p) {
    if ((state.status[p] == kDone || state.status[p] == kAbnormal) &&
        state.standard_error[p] == 0.0) {
      const auto [i, j] = index.at(p);
      tracker.add(i, j, state.objective[p]);
    }
  }
}

// The parallel part of a run: each worker takes chunks of the work list from the transport and
// prunes or solves each pair; between pairs, rank 0 writes a checkpoint or reports progress when
// one is due (one thread at a time; the others keep solving).
class PairWorkers {
 public:
  PairWorkers(const Collection& collection,
              const RunOptions& options,
              const Options& solver,
              const PreparedCollection& prepared,
              const std::vector<std::int64_t>& todo,
              const RunOutput& output,
              NearestTracker& tracker,
              Transport& comm,
              const Stopwatch& watch,
              int threads)
      : collection_(collection),
        options_(options),
        solver_(solver),
        prepared_(prepared),
        todo_(todo),
        output_(output),
        tracker_(tracker),
        comm_(comm),
        watch_(watch),
        threads_(threads),
        index_{collection.size()},
        root_(comm.rank() == 0),
        failure_(threads),
        next_checkpoint_(options.checkpoint_seconds) {}

  // Works through the work list with every thread; throws the first failure of any of them.
  void run() {
    // One thread per pair: the solver's own parallel regions (e.g. its two concurrent distance
    // queries) must not start teams inside a worker. With several workers the outer region is
    // the one active level; with one worker it is inactive, so no level may be active.
    // (Measured: a 2-thread team per iteration inside a single-threaded rank made a 150-point
    // pair 10x slower on a loaded 2-core machine.)
    const int previous_levels = omp_get_max_active_levels();
    omp_set_max_active_levels(threads_ > 1 ? 1 : 0);
#pragma omp parallel num_threads(threads_)
    {
      std::int64_t begin = 0, end = 0;
      while (!failure_.failed() && comm_.next_chunk(options_.chunk, begin, end)) {
        for (std::int64_t k = begin; k < end && !failure_.failed(); ++k) work_on(k);
      }
    }
    omp_set_max_active_levels(previous_levels);
    failure_.rethrow_if_failed();
  }

  // Read after run(): the workers have joined, so no lock is needed.
  int checkpoints() const { return checkpoints_; }
  double checkpoint_write_seconds() const { return write_seconds_; }

 private:
  // Work item k: prunes or solves its pair and records the result.
  void work_on(std::int64_t k) {
    const auto [i, j] = index_.at(todo_[k]);
    try {
      const bool exact_loss =
          options_.nearest > 0 && loss_is_exact(prepared_.spaces[i], prepared_.spaces[j], solver_);
      if (exact_loss && beyond_nearest(i, j)) {
        ItemResult pruned;
        pruned.status = kPruned;
        comm_.record(k, pruned);
        return;
      }
      comm_.record(k, solve(i, j, exact_loss));
    } catch (...) {
      failure_.record("pair (" + std::to_string(i) + ", " + std::to_string(j) + "): ");
      return;
    }
    after_solve();
  }

  // Computed exact losses never fall below the bound (both are of the same max-normalized
  // matrices, and the bound holds for every plan), so a pair whose bound exceeds both K-th exact
  // distances holds neither space's K-nearest neighbour. An estimated loss may fall below its
  // bound: only pairs with an exact loss may be pruned. The margin absorbs the rounding of the
  // two computations.
  bool beyond_nearest(Index i, Index j) {
    const double bound = distribution_lower_bound(prepared_.quantiles[i], prepared_.quantiles[j]);
    const double margin = 1e-9 + 1e-6 * bound;
    return bound - margin > tracker_.kth(i) && bound - margin > tracker_.kth(j);
  }

  ItemResult solve(Index i, Index j, bool exact_loss) {
    Options pair_options = solver_;
    pair_options.seed = pair_seed(options_.seed, i, j);
    const PairResult pair = solve_pair(prepared_.spaces[i], prepared_.spaces[j], pair_options);
    // Pairs pruned so far relied on loss_is_exact; a solver whose rules drifted from it must stop
    // the run rather than leave a matrix with wrongly pruned pairs.
    GW_CHECK_CODE(!exact_loss || pair.loss_exact || !std::isfinite(pair.objective),
                  ErrorCode::kInternal,
                  "the loss came back estimated where pairwise::loss_is_exact predicted "
                  "it exact, so --nearest pruning is unsafe; run without --nearest");
    ItemResult result;
    result.objective = pair.objective;
    result.standard_error = pair.standard_error;
    result.seconds = pair.seconds;
    result.iterations = pair.iterations;
    const bool ok = pair.termination == Termination::kConverged ||
                    pair.termination == Termination::kPlateau ||
                    pair.termination == Termination::kMaxIterations;
    result.status = ok && std::isfinite(pair.objective) ? kDone : kAbnormal;
    if (options_.nearest > 0 && pair.loss_exact) tracker_.add(i, j, pair.objective);
    return result;
  }

  // After a solved (not a pruned) pair: the kill hook, then what rank 0 does between pairs.
  void after_solve() {
    const std::int64_t count = solved_here_.fetch_add(1) + 1;
    if (options_.abort_after >= 0 && count >= options_.abort_after) std::_Exit(137);
    // Not the pair's failure: the output could not be rewritten (a full disk, a directory
    // removed during the run) or the progress callback threw.
    try {
      maybe_checkpoint();
    } catch (...) {
      failure_.record("writing the checkpoint '" + options_.output + "': ");
      return;
    }
    try {
      maybe_progress();
    } catch (...) {
      failure_.record("the progress callback: ");
    }
  }

  void maybe_checkpoint() {
    if (!root_ || watch_.seconds() < next_checkpoint_.load()) return;
    std::unique_lock<std::mutex> lock(checkpoint_mutex_, std::try_to_lock);
    if (!lock.owns_lock() || watch_.seconds() < next_checkpoint_.load()) return;
    Stopwatch write_watch;
    write_output(options_.output,
                 collection_,
                 options_,
                 output_.settings,
                 output_.with(todo_, comm_.snapshot()));
    write_seconds_ += write_watch.seconds();
    ++checkpoints_;
    next_checkpoint_.store(watch_.seconds() + options_.checkpoint_seconds);
  }

  void maybe_progress() {
    if (!root_ || !options_.progress || watch_.seconds() < next_progress_.load()) return;
    std::unique_lock<std::mutex> lock(checkpoint_mutex_, std::try_to_lock);
    if (!lock.owns_lock() || watch_.seconds() < next_progress_.load()) return;
    RunProgress progress;
    progress.done_this_run = comm_.recorded();
    progress.done = output_.resumed + progress.done_this_run;
    progress.total = index_.total();
    progress.elapsed_seconds = watch_.seconds();
    options_.progress(progress);
    next_progress_.store(watch_.seconds() + 1.0);
  }

  const Collection& collection_;
  const RunOptions& options_;
  const Options& solver_;
  const PreparedCollection& prepared_;
  const std::vector<std::int64_t>& todo_;
  const RunOutput& output_;
  NearestTracker& tracker_;
  Transport& comm_;
  const Stopwatch& watch_;
  const int threads_;
  const PairIndex index_;
  const bool root_;
  FirstFailure failure_;
  std::atomic<std::int64_t> solved_here_{0};
  // Deadlines in seconds of `watch_` (read by every worker, moved on by the one that acts).
  std::atomic<double> next_checkpoint_, next_progress_{1.0};
  std::mutex checkpoint_mutex_;  // one checkpoint or progress report at a time
  int checkpoints_ = 0;
  double write_seconds_ = 0.0;
};

// Rank 0, once every rank is done: writes the output a last time and counts what it holds.
void write_final_output(const Collection& collection,
                        const RunOptions& options,
                        const RunOutput& output,
                        const std::vector<std::int64_t>& todo,
                        const std::vector<ItemResult>& results,
                        RunSummary& summary) {
  const State final_state = output.with(todo, results);
  Stopwatch write_watch;
  write_output(options.output, collection, options, output.settings, final_state);
  summary.checkpoint_write_seconds += write_watch.seconds();
  ++summary.checkpoints;
  for (const ItemResult& r : results) {
    if (r.status == kDone || r.status == kAbnormal) {
      ++summary.pairs_computed;
      summary.pair_seconds.push_back(r.seconds);
      summary.pair_iterations.push_back(static_cast<int>(r.iterations));
    }
  }
  bool complete = true;
  for (std::int8_t s : final_state.status) {
    summary.pairs_pruned += s == kPruned;
    summary.pairs_abnormal += s == kAbnormal;
    complete = complete && s != kPending;
  }
  summary.complete = complete;
}

}  // namespace

std::vector<Index> nearest_neighbours(const std::vector<double>& distances, Index n, int k) {
  GW_CHECK(distances.size() == static_cast<std::size_t>(n) * n,
           "nearest_neighbours: " << distances.size() << " distances for " << n << " spaces");
  std::vector<Index> out(static_cast<std::size_t>(n) * k, -1);
  std::vector<Index> order;
  for (Index i = 0; i < n; ++i) {
    order.clear();
    for (Index j = 0; j < n; ++j) {
      if (j != i && !std::isnan(distances[static_cast<std::size_t>(i) * n + j])) order.push_back(j);
    }
    const double* row = distances.data() + static_cast<std::size_t>(i) * n;
    std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return row[a] < row[b]; });
    for (int r = 0; r < k && r < static_cast<int>(order.size()); ++r) {
      out[static_cast<std::size_t>(i) * k + r] = order[r];
    }
  }
  return out;
}

RunSummary run_pairwise(const Collection& collection,
                        const RunOptions& options,
                        Transport* transport) {
  const Options solver = checked_pair_options(collection, options);
  LocalTransport local;
  Transport& comm = transport != nullptr ? *transport : local;
  const bool root = comm.rank() == 0;
  Stopwatch watch;
  const PairIndex index{collection.size()};
  const int threads = resolve_threads(options.threads);

  // Rank 0 decides what is left to do: everything, or what the resumed output lacks.
  RunOutput output(index.total());
  if (root) output = open_output(collection, options);
  const PreparedCollection prepared = prepare_spaces(collection, solver, options, threads);
  std::vector<std::int64_t> todo;
  if (root) todo = schedule_pairs(index, prepared.quantiles, options.nearest, output.start);
  comm.broadcast(todo);
  comm.begin(static_cast<std::int64_t>(todo.size()));
  NearestTracker tracker(collection.size(), std::max(options.nearest, 1));
  if (root && options.nearest > 0) track_resumed_exact_losses(index, output.start, tracker);

  PairWorkers workers(
      collection, options, solver, prepared, todo, output, tracker, comm, watch, threads);
  workers.run();
  comm.barrier();

  RunSummary summary;
  summary.spaces = collection.size();
  summary.pairs_total = index.total();
  summary.pairs_resumed = output.resumed;
  summary.ranks = comm.size();
  summary.threads = threads;
  summary.seconds = watch.seconds();
  summary.checkpoints = workers.checkpoints();
  if (root) {
    summary.checkpoint_write_seconds = workers.checkpoint_write_seconds();
    write_final_output(collection, options, output, todo, comm.snapshot(), summary);
  }
  return summary;
}

}  // namespace gw::pairwise
