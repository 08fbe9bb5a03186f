// The pairwise output file (its layout is documented in pairwise/run.h): how pairs are numbered,
// the per-pair state a run keeps, the settings a resume must match, and writing / reading the
// HDF5 file. Private to pairwise/ (run.cpp and output.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pairwise/collection.h"
#include "pairwise/run.h"

namespace gw::pairwise::detail {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// /status values (and ItemResult::status).
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

// Everything the output holds, per pair (in PairIndex order).
struct State {
  std::vector<double> objective, standard_error, seconds, lower_bound;
  std::vector<std::int8_t> status;

  explicit State(std::int64_t pairs = 0)
      : objective(pairs, kNaN),
        standard_error(pairs, kNaN),
        seconds(pairs, kNaN),
        status(pairs, kPending) {}
};

// What a resume must match: the collection (sizes and a fingerprint of its contents) and every
// flag that changes a pair's numbers or which pairs are computed.
std::string settings_of(const Collection& collection, const RunOptions& options);

// Writes `state` as the complete output file at `path` (atomically: a temporary renamed onto it).
void write_output(const std::string& path,
                  const Collection& collection,
                  const RunOptions& options,
                  const std::string& settings,
                  const State& state);

// The state recorded in an output being resumed (kInvalidArgument when it belongs to another run,
// kBadData when an array is not N x N).
State read_output(const std::string& path,
                  const Collection& collection,
                  const std::string& settings);

}  // namespace gw::pairwise::detail
