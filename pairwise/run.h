// All-pairs GW distances over a collection (`gwalign pairwise`): OpenMP threads across pairs in
// one process, MPI ranks across processes, lower-bound pruning for K nearest neighbours, and a
// checkpointed HDF5 output from which a killed run resumes.
//
// Output (one HDF5 file, written by rank 0 only, always by writing a temporary file and renaming
// it onto the output, so the file on disk is always a complete, readable checkpoint):
//   /distances    N x N float64: the GW loss ("objective", gw::Result::gw_loss: distances
//                 max-normalized per space) of each pair; symmetric, 0 on the diagonal, NaN for a
//                 pair not (yet) computed or pruned
//   /gw_distance  N x N float64: 0.5 sqrt(objective), the distance CAJAL reports
//   /stderr       N x N float64: standard error of a sampled loss estimate (0 when exact)
//   /status       N x N int8: 0 pending, 1 done, 2 done but the solver ended abnormally
//                 (cancelled or non-finite; the value is kept), 3 pruned by the lower bound
//                 (--nearest); the diagonal is 1
//   /seconds      N x N float64: wall time of each pair's solve (NaN when not computed)
//   /lower_bound  N x N float64: the pruning bound (only with nearest > 0)
//   /labels       copied from the collection when it has them
//   attributes on "/": complete (int64, 1 once no pair is pending), n_spaces, pairs_total,
//   pairs_done, pairs_pruned, seed, nearest, settings (what a resume must match), collection.
//
// Pair (i, j), i < j, is solved once with seed pair_seed(seed, i, j) and one thread, by
// solve_pair(); its numbers do not depend on the thread count, the rank count or the order of
// the pairs. With nearest == 0 every run of the same command therefore writes the same
// /distances bit for bit. With nearest > 0, which pairs are pruned depends on the order in which
// results arrive (threads, ranks, scheduling), so /status and the NaN entries may differ between
// runs; what is stable is every computed entry (bit for bit the value a nearest == 0 run writes)
// and the K nearest neighbours of each space (nearest_neighbours() of /distances).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pairwise/collection.h"
#include "pairwise/pair_solve.h"
#include "solver/options.h"

namespace gw::pairwise {

class Transport;  // how work and results move between ranks (pairwise/transport_impl.h)

struct RunProgress {
  std::int64_t done = 0;   // pairs done (including those a resumed output held, and pruned ones)
  std::int64_t total = 0;  // pairs in all
  std::int64_t done_this_run = 0;
  double elapsed_seconds = 0.0;
};

struct RunOptions {
  // Per-pair solver options (default_pair_options(); threads is forced to 1, seed is replaced by
  // the pair's seed).
  Options solver;
  std::uint64_t seed = 0;
  // How point-cloud spaces become metric spaces (graphs and matrices are used as given).
  PointMetric point_metric = PointMetric::kEuclidean;
  // Threads per process, each solving one pair at a time (0: all available).
  int threads = 0;
  // 0: every pair. K > 0: only what each space's K nearest neighbours need; a pair is skipped
  // (status 3) when its lower bound exceeds, for both of its spaces, the K-th smallest exact
  // distance found so far, so the K nearest neighbours are those of the full matrix. The bound
  // holds for the exact loss of any plan, not for a Monte Carlo estimate (solver/loss.cpp
  // estimates the loss of spaces too large for the exact loss; /stderr > 0): estimated losses
  // never set the threshold, and a pair whose loss would be estimated (loss_is_exact() in
  // pair_solve.h) is always computed. Each process keeps its own threshold from the pairs it
  // solved (rank 0 also from a resumed output): under MPI, ranks prune less than one process
  // with as many threads would, never wrongly.
  int nearest = 0;
  // The output file. Its directory must exist and be writable (kCannotCreate before any work).
  std::string output;
  // Continue the run recorded in `output` (the same collection, by sizes and a fingerprint of
  // every space's data, weights and /labels, and the same settings; kInvalidArgument otherwise);
  // a missing output starts afresh. Without it an existing output is an error (kCannotCreate),
  // never overwritten.
  bool resume = false;
  // Seconds between checkpoints (rank 0 rewrites the output).
  double checkpoint_seconds = 10.0;
  // Pairs handed out per request (dynamic load balancing).
  int chunk = 4;
  // Test hook: after this many pairs solved in this process, end it at once with std::_Exit(137)
  // (as kill -9 would: no checkpoint, no cleanup). < 0: never.
  std::int64_t abort_after = -1;
  // Called on rank 0 about once a second while pairs are solved, from a worker thread.
  std::function<void(const RunProgress&)> progress;
};

struct RunSummary {
  Index spaces = 0;
  std::int64_t pairs_total = 0;
  std::int64_t pairs_computed = 0;  // solved by this run (all ranks)
  std::int64_t pairs_resumed = 0;   // taken from the output being resumed
  std::int64_t pairs_pruned = 0;    // skipped by the lower bound (all runs)
  std::int64_t pairs_abnormal = 0;  // status 2
  bool complete = false;
  int ranks = 1;
  int threads = 1;  // per process
  int checkpoints = 0;
  double checkpoint_write_seconds = 0.0;  // rank 0's time spent writing checkpoints and the output
  double seconds = 0.0;              // wall time of this run
  std::vector<double> pair_seconds;  // per pair solved by this run (rank 0; empty elsewhere)
  std::vector<int> pair_iterations;  // the same pairs' outer iterations
};

// Runs on every rank of `transport` (nullptr: this process alone). Rank 0 reads/writes the
// output; every rank reads the collection itself. Throws gw::Error for bad options, an output
// that cannot be created or resumed (kBadData for a resumed file whose /distances, /stderr,
// /seconds or /status is not N x N), a checkpoint that cannot be written (the message names the
// checkpoint), and what solve_pair throws (the message names the pair; std::bad_alloc becomes
// kBadData, any other exception kInternal).
RunSummary run_pairwise(const Collection& collection,
                        const RunOptions& options,
                        Transport* transport = nullptr);

// The K nearest neighbours of each space by a finished output's /distances (ties: smaller index
// first; NaN entries never chosen), N x K row-major; -1 where a space has fewer than K.
std::vector<Index> nearest_neighbours(const std::vector<double>& distances, Index n, int k);

}  // namespace gw::pairwise
