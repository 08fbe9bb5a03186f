#include "pairwise/run.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>
#include <new>
#include <numeric>
#include <span>
#include <sstream>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"
#include "core/timer.h"
#include "io/hdf5.h"
#include "pairwise/lower_bound.h"
#include "pairwise/pair_solve.h"
#include "pairwise/transport_impl.h"

namespace gw::pairwise {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr std::int8_t kPending = 0, kDone = 1, kAbnormal = 2, kPruned = 3;

// Pair p <-> (i, j), i < j, in row order: (0,1), (0,2), ..., (0,N-1), (1,2), ...
struct PairIndex {
  Index n;
  std::int64_t total() const { return static_cast<std::int64_t>(n) * (n - 1) / 2; }
  std::int64_t row_start(Index i) const {
    return static_cast<std::int64_t>(i) * (2 * static_cast<std::int64_t>(n) - i - 1) / 2;
  }
  std::int64_t of(Index i, Index j) const { return row_start(i) + (j - i - 1); }
  std::pair<Index, Index> at(std::int64_t p) const {
    Index i = 0;
    // Rows shrink by one each; a linear scan from a closed-form guess is exact and cheap.
    const double nn = static_cast<double>(n);
    i = static_cast<Index>(
        std::max(0.0, std::floor(nn - 0.5 - std::sqrt((nn - 0.5) * (nn - 0.5) - 2.0 * p))));
    while (i > 0 && row_start(i) > p) --i;
    while (i + 1 < n && row_start(i + 1) <= p) ++i;
    return {i, static_cast<Index>(p - row_start(i) + i + 1)};
  }
};

// Everything the output holds, per pair.
struct State {
  std::vector<double> objective, standard_error, seconds, lower_bound;
  std::vector<std::int8_t> status;

  explicit State(std::int64_t pairs = 0)
      : objective(pairs, kNaN),
        standard_error(pairs, kNaN),
        seconds(pairs, kNaN),
        status(pairs, kPending) {}
};

// 64-bit FNV-1a over bytes: a fingerprint of the collection's contents for the settings attribute,
// so that --resume refuses a collection that changed but kept its sizes (not a cryptographic hash:
// it guards against mistakes, not against forgery).
class Fingerprint {
 public:
  template <typename T>
  void add(std::span<const T> values) {
    add(static_cast<std::uint64_t>(values.size()));  // so that adjacent arrays cannot shift
    add_bytes(values.data(), values.size_bytes());
  }
  void add(std::uint64_t value) { add_bytes(&value, sizeof value); }
  std::uint64_t value() const { return hash_; }

 private:
  void add_bytes(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t b = 0; b < bytes; ++b) {
      hash_ ^= p[b];
      hash_ *= 0x100000001b3ULL;
    }
  }
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// Every space's data as read (points, the symmetrized graph, or the matrix), its weights, and the
// labels. A geometry given as a provider (not something read_collection makes) adds only its kind
// and size: its distances are not at hand without computing them.
std::uint64_t collection_fingerprint(const Collection& collection) {
  Fingerprint f;
  f.add(static_cast<std::uint64_t>(collection.size()));
  for (const Space& space : collection.spaces) {
    const Geometry& g = space.geometry;
    f.add(static_cast<std::uint64_t>(g.kind()));
    f.add(static_cast<std::uint64_t>(g.num_nodes()));
    switch (g.kind()) {
      case Geometry::Kind::kPoints:
        f.add(static_cast<std::uint64_t>(g.dimension()));
        f.add(std::span<const double>(g.points()));
        break;
      case Geometry::Kind::kGraph:
        f.add(std::span<const Offset>(g.graph().row_offsets()));
        f.add(std::span<const Index>(g.graph().col_indices()));
        f.add(std::span<const float>(g.graph().weights()));
        break;
      case Geometry::Kind::kDistances:
        f.add(static_cast<std::uint64_t>(g.distances().cols));
        f.add(std::span<const float>(g.distances().values));
        break;
      default:
        break;
    }
    f.add(std::span<const double>(space.weights));
  }
  f.add(std::span<const std::int64_t>(collection.labels));
  return f.value();
}

// What a resume must match: the collection (sizes and a fingerprint of its contents) and every
// flag that changes a pair's numbers or which pairs are computed.
std::string settings_of(const Collection& collection, const RunOptions& options) {
  const Options& s = options.solver;
  std::int64_t nodes = 0;
  for (const Space& space : collection.spaces) nodes += space.geometry.num_nodes();
  char fingerprint[17];
  std::snprintf(fingerprint,
                sizeof fingerprint,
                "%016llx",
                static_cast<unsigned long long>(collection_fingerprint(collection)));
  std::ostringstream out;
  out.precision(17);
  out << "spaces=" << collection.size() << " nodes=" << nodes << " data=fnv1a64:" << fingerprint
      << " seed=" << options.seed << " nearest=" << options.nearest << " points="
      << (options.point_metric == PointMetric::kEuclidean ? "euclidean" : "knn-geodesic")
      << " knn=" << s.knn << " M=" << s.num_anchors << " eps=" << s.epsilon
      << " eps_final=" << s.epsilon_final << " max_iter=" << s.max_iterations
      << " min_iter=" << s.min_iterations << " warmup=" << s.warmup_iterations << "x"
      << s.warmup_anchors << " profile_anchors=" << s.profile_anchors
      << " polish=" << s.polish_iterations << " restarts=" << s.restarts << " starts=" << s.starts
      << " exact_tol=" << s.exact_tolerance << " precision=" << to_string(s.precision)
      << " solver=" << to_string(s.solver);
  return out.str();
}

std::vector<double> square(const PairIndex& index, const std::vector<double>& values, double diag) {
  const Index n = index.n;
  std::vector<double> out(static_cast<std::size_t>(n) * n, diag);
  for (Index i = 0; i < n; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      const double v = values[index.of(i, j)];
      out[static_cast<std::size_t>(i) * n + j] = v;
      out[static_cast<std::size_t>(j) * n + i] = v;
    }
  }
  return out;
}

void write_output(const std::string& path,
                  const Collection& collection,
                  const RunOptions& options,
                  const std::string& settings,
                  const State& state) {
  const PairIndex index{collection.size()};
  const Index n = collection.size();
  const std::int64_t shape[2] = {n, n};
  std::int64_t done = 0, pruned = 0;
  for (std::int8_t s : state.status) {
    done += s != kPending;
    pruned += s == kPruned;
  }
  std::vector<double> distance(state.objective.size());
  for (std::size_t p = 0; p < distance.size(); ++p) distance[p] = gw_distance(state.objective[p]);
  for (std::size_t p = 0; p < distance.size(); ++p) {
    if (std::isnan(state.objective[p])) distance[p] = kNaN;
  }
  io::Writer out(path);
  auto put = [&](const char* name, const std::vector<double>& values, double diag) {
    const std::vector<double> full = square(index, values, diag);
    out.write_array<double>(name, std::span<const double>(full), shape);
  };
  put("/distances", state.objective, 0.0);
  put("/gw_distance", distance, 0.0);
  put("/stderr", state.standard_error, 0.0);
  put("/seconds", state.seconds, kNaN);
  if (!state.lower_bound.empty()) put("/lower_bound", state.lower_bound, 0.0);
  std::vector<std::int8_t> status(static_cast<std::size_t>(n) * n, kDone);
  for (Index i = 0; i < n; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      const std::int8_t s = state.status[index.of(i, j)];
      status[static_cast<std::size_t>(i) * n + j] = s;
      status[static_cast<std::size_t>(j) * n + i] = s;
    }
  }
  out.write_array<std::int8_t>("/status", std::span<const std::int8_t>(status), shape);
  if (!collection.labels.empty()) {
    const std::int64_t label_shape[1] = {n};
    out.write_array<std::int64_t>(
        "/labels", std::span<const std::int64_t>(collection.labels), label_shape);
  }
  out.set_attribute("/", "complete", std::int64_t{done == index.total() ? 1 : 0});
  out.set_attribute("/", "n_spaces", std::int64_t{n});
  out.set_attribute("/", "pairs_total", index.total());
  out.set_attribute("/", "pairs_done", done);
  out.set_attribute("/", "pairs_pruned", pruned);
  out.set_attribute("/", "seed", std::to_string(options.seed));
  out.set_attribute("/", "nearest", std::int64_t{options.nearest});
  out.set_attribute("/", "settings", settings);
  out.set_attribute("/", "collection", collection.path);
  out.set_attribute("/", "generator", "gwalign " GW_VERSION_STRING " pairwise");
  out.commit();
}

// The state recorded in an output being resumed (kInvalidArgument when it belongs to another run).
State read_output(const std::string& path,
                  const Collection& collection,
                  const std::string& settings) {
  const io::Reader reader(path);
  GW_CHECK_CODE(reader.has_attribute("/", "settings") &&
                    reader.read_string_attribute("/", "settings") == settings,
                ErrorCode::kInvalidArgument,
                "'" << path << "' was written by a different run (its settings attribute is not '"
                    << settings << "'); resume with the same collection and flags, or remove it");
  const PairIndex index{collection.size()};
  const Index n = collection.size();
  State state(index.total());
  const io::Array<double> objective = reader.read_array<double>("/distances", 2);
  const io::Array<double> standard_error = reader.read_array<double>("/stderr", 2);
  const io::Array<double> seconds = reader.read_array<double>("/seconds", 2);
  const io::Array<std::int8_t> status = reader.read_array<std::int8_t>("/status", 2);
  // A doctored or truncated file must not be read past its end.
  auto check_shape = [&](const char* name, std::int64_t rows, std::int64_t cols) {
    GW_CHECK_CODE(rows == n && cols == n,
                  ErrorCode::kBadData,
                  "'" << path << "' " << name << " is " << rows << " x " << cols << ", not " << n
                      << " x " << n << "; remove the output and start again");
  };
  check_shape("/distances", objective.rows(), objective.cols());
  check_shape("/stderr", standard_error.rows(), standard_error.cols());
  check_shape("/seconds", seconds.rows(), seconds.cols());
  check_shape("/status", status.rows(), status.cols());
  for (Index i = 0; i < n; ++i) {
    for (Index j = i + 1; j < n; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * n + j;
      const std::int64_t p = index.of(i, j);
      state.status[p] = status.data[at];
      state.objective[p] = objective.data[at];
      state.standard_error[p] = standard_error.data[at];
      state.seconds[p] = seconds.data[at];
    }
  }
  return state;
}

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

  LocalTransport local;
  Transport& comm = transport != nullptr ? *transport : local;
  const bool root = comm.rank() == 0;
  Stopwatch watch;
  const PairIndex index{collection.size()};
  const Index n = collection.size();
  const int threads = resolve_threads(options.threads);

  // Rank 0 decides what is left to do: everything, or what the resumed output lacks.
  State state(index.total());
  std::int64_t resumed = 0;
  std::string settings;
  if (root) {
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
    settings = settings_of(collection, options);
    if (exists) {
      state = read_output(options.output, collection, settings);
      for (std::int8_t s : state.status) resumed += s != kPending;
    }
  }

  // Every rank prepares every space (distances once per space, threads over spaces).
  Options prepare = solver;
  std::vector<PreparedSpace> spaces(n);
  std::vector<DistanceQuantiles> quantiles(options.nearest > 0 ? n : 0);
  {
    std::atomic<bool> failed{false};
    std::string message;
    ErrorCode code = ErrorCode::kInternal;
    std::mutex error_mutex;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (Index i = 0; i < n; ++i) {
      if (failed.load()) continue;
      try {
        spaces[i] = prepare_space(collection.spaces[i], prepare, options.point_metric);
        if (options.nearest > 0) {
          quantiles[i] = distance_quantiles(*spaces[i].provider, spaces[i].weights);
        }
      } catch (...) {
        const auto [what_code, what] = current_failure(threads);
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!failed.exchange(true)) {
          message = collection.spaces[i].description + ": " + what;
          code = what_code;
        }
      }
    }
    if (failed.load()) throw Error(code, message);
  }

  // The work list: pending pairs in pair order, or by increasing lower bound for --nearest (so
  // close pairs come first and the K-th distances shrink early).
  std::vector<std::int64_t> todo;
  if (root) {
    for (std::int64_t p = 0; p < index.total(); ++p) {
      if (state.status[p] == kPending) todo.push_back(p);
    }
    if (options.nearest > 0) {
      state.lower_bound.assign(index.total(), 0.0);
      for (std::int64_t p = 0; p < index.total(); ++p) {
        const auto [i, j] = index.at(p);
        state.lower_bound[p] = distribution_lower_bound(quantiles[i], quantiles[j]);
      }
      std::stable_sort(todo.begin(), todo.end(), [&](std::int64_t a, std::int64_t b) {
        return state.lower_bound[a] < state.lower_bound[b];
      });
    }
  }
  comm.broadcast(todo);
  const std::int64_t items = static_cast<std::int64_t>(todo.size());
  comm.begin(items);

  // Only exact losses set the pruning threshold (see RunOptions::nearest). A resumed output
  // keeps no flag for it, but /stderr is 0 exactly for exact losses.
  NearestTracker tracker(n, std::max(options.nearest, 1));
  if (root && options.nearest > 0) {
    for (std::int64_t p = 0; p < index.total(); ++p) {
      if ((state.status[p] == kDone || state.status[p] == kAbnormal) &&
          state.standard_error[p] == 0.0) {
        const auto [i, j] = index.at(p);
        tracker.add(i, j, state.objective[p]);
      }
    }
  }

  // Merges the transport's results into the state (rank 0).
  auto merged = [&](const std::vector<ItemResult>& results) {
    State out = state;
    for (std::int64_t k = 0; k < items; ++k) {
      const ItemResult& r = results[k];
      if (r.status == 0.0) continue;
      const std::int64_t p = todo[k];
      out.status[p] = static_cast<std::int8_t>(r.status);
      out.objective[p] = r.status == kPruned ? kNaN : r.objective;
      out.standard_error[p] = r.status == kPruned ? kNaN : r.standard_error;
      out.seconds[p] = r.status == kPruned ? kNaN : r.seconds;
    }
    return out;
  };

  RunSummary summary;
  summary.spaces = n;
  summary.pairs_total = index.total();
  summary.pairs_resumed = resumed;
  summary.ranks = comm.size();
  summary.threads = threads;

  std::atomic<std::int64_t> solved_here{0};
  std::atomic<bool> failed{false};
  std::string error_message;
  ErrorCode error_code = ErrorCode::kInternal;
  std::mutex error_mutex, checkpoint_mutex;
  // Records the first failure of any worker; the others stop at their next pair.
  auto fail = [&](const std::string& where) {
    const auto [code, what] = current_failure(threads);
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!failed.exchange(true)) {
      error_message = where + what;
      error_code = code;
    }
  };
  // Deadlines in seconds of `watch` (read by every worker, moved on by the one that acts).
  std::atomic<double> next_checkpoint{options.checkpoint_seconds}, next_progress{1.0};
  int checkpoints = 0;
  double write_seconds = 0.0;
  // Rank 0 writes a checkpoint when one is due; one thread at a time, the others keep solving.
  auto maybe_checkpoint = [&] {
    if (!root || watch.seconds() < next_checkpoint.load()) return;
    std::unique_lock<std::mutex> lock(checkpoint_mutex, std::try_to_lock);
    if (!lock.owns_lock() || watch.seconds() < next_checkpoint.load()) return;
    Stopwatch write_watch;
    write_output(options.output, collection, options, settings, merged(comm.snapshot()));
    write_seconds += write_watch.seconds();
    ++checkpoints;
    next_checkpoint.store(watch.seconds() + options.checkpoint_seconds);
  };
  auto maybe_progress = [&] {
    if (!root || !options.progress || watch.seconds() < next_progress.load()) return;
    std::unique_lock<std::mutex> lock(checkpoint_mutex, std::try_to_lock);
    if (!lock.owns_lock() || watch.seconds() < next_progress.load()) return;
    RunProgress progress;
    progress.done_this_run = comm.recorded();
    progress.done = resumed + progress.done_this_run;
    progress.total = index.total();
    progress.elapsed_seconds = watch.seconds();
    options.progress(progress);
    next_progress.store(watch.seconds() + 1.0);
  };

  // One thread per pair: the solver's own parallel regions (e.g. its two concurrent distance
  // queries) must not start teams inside a worker. With several workers the outer region is the
  // one active level; with one worker it is inactive, so no level may be active. (Measured: a
  // 2-thread team per iteration inside a single-threaded rank made a 150-point pair 10x slower on
  // a loaded 2-core machine.)
  const int previous_levels = omp_get_max_active_levels();
  omp_set_max_active_levels(threads > 1 ? 1 : 0);
#pragma omp parallel num_threads(threads)
  {
    std::int64_t begin = 0, end = 0;
    while (!failed.load() && comm.next_chunk(options.chunk, begin, end)) {
      for (std::int64_t k = begin; k < end && !failed.load(); ++k) {
        const std::int64_t p = todo[k];
        const auto [i, j] = index.at(p);
        ItemResult result;
        try {
          // Computed exact losses never fall below the bound (both are of the same
          // max-normalized matrices, and the bound holds for every plan), so a pair whose bound
          // exceeds both K-th exact distances holds neither space's K-nearest neighbour. An
          // estimated loss may fall below its bound: such a pair is never pruned. The margin
          // absorbs the rounding of the two computations.
          const bool exact_loss =
              options.nearest > 0 && loss_is_exact(spaces[i], spaces[j], solver);
          if (exact_loss) {
            const double bound = distribution_lower_bound(quantiles[i], quantiles[j]);
            const double margin = 1e-9 + 1e-6 * bound;
            if (bound - margin > tracker.kth(i) && bound - margin > tracker.kth(j)) {
              result.status = kPruned;
              comm.record(k, result);
              continue;
            }
          }
          Options pair_options = solver;
          pair_options.seed = pair_seed(options.seed, i, j);
          const PairResult pair = solve_pair(spaces[i], spaces[j], pair_options);
          // Pairs pruned so far relied on loss_is_exact; a solver whose rules drifted from it
          // must stop the run rather than leave a matrix with wrongly pruned pairs.
          GW_CHECK_CODE(!exact_loss || pair.loss_exact || !std::isfinite(pair.objective),
                        ErrorCode::kInternal,
                        "the loss came back estimated where pairwise::loss_is_exact predicted "
                        "it exact, so --nearest pruning is unsafe; run without --nearest");
          result.objective = pair.objective;
          result.standard_error = pair.standard_error;
          result.seconds = pair.seconds;
          result.iterations = pair.iterations;
          const bool ok = pair.termination == Termination::kConverged ||
                          pair.termination == Termination::kPlateau ||
                          pair.termination == Termination::kMaxIterations;
          result.status = ok && std::isfinite(pair.objective) ? kDone : kAbnormal;
          if (options.nearest > 0 && pair.loss_exact) tracker.add(i, j, pair.objective);
          comm.record(k, result);
        } catch (...) {
          fail("pair (" + std::to_string(i) + ", " + std::to_string(j) + "): ");
          continue;
        }
        const std::int64_t count = solved_here.fetch_add(1) + 1;
        if (options.abort_after >= 0 && count >= options.abort_after) std::_Exit(137);
        // Not the pair's failure: the output could not be rewritten (a full disk, a directory
        // removed during the run) or the progress callback threw.
        try {
          maybe_checkpoint();
        } catch (...) {
          fail("writing the checkpoint '" + options.output + "': ");
          continue;
        }
        try {
          maybe_progress();
        } catch (...) {
          fail("the progress callback: ");
        }
      }
    }
  }
  omp_set_max_active_levels(previous_levels);
  if (failed.load()) throw Error(error_code, error_message);
  comm.barrier();

  summary.seconds = watch.seconds();
  summary.checkpoints = checkpoints;  // the workers have joined: no lock needed
  if (root) {
    const std::vector<ItemResult> results = comm.snapshot();
    const State final_state = merged(results);
    Stopwatch write_watch;
    write_output(options.output, collection, options, settings, final_state);
    summary.checkpoint_write_seconds = write_seconds + write_watch.seconds();
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
  return summary;
}

}  // namespace gw::pairwise
