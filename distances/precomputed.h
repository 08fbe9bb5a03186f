// Providers backed by a full n x n distance matrix: all-pairs shortest paths of a graph
// ("precomputed"), or a matrix the user gives ("dense").
//
// Memory: 4 n^2 bytes (n = 10,000: 400 MB) held for the provider's lifetime.
// Query: distances_to copies m rows of the matrix into the n x m block, O(n m).
// Thread-safety: immutable after construction; distances_to may run concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/types.h"
#include "distances/distance_provider.h"
#include "graph/csr_graph.h"

namespace gw {

struct PrecomputedOptions {
  // CPU threads for the all-pairs computation and for queries (0 = all available).
  int threads = 0;
  // Refuse a graph whose n x n float32 matrix would take more than this many bytes (default
  // 4 GiB, n ~ 32,700): beyond that use the dijkstra or landmark mode.
  std::size_t max_bytes = std::size_t{4} << 30;
};

struct DenseOptions {
  // Accept a matrix with D[i][j] != D[j][i]. distances_to then reads row anchor of the matrix,
  // i.e. out[i * m + k] = D[anchors[k]][i] (the distance from the anchor to node i).
  bool allow_asymmetric = false;
  // The symmetry check accepts |D[i][j] - D[j][i]| <= symmetry_tolerance * max(D[i][j], D[j][i])
  // (default: a few float32 roundings, so a matrix computed symmetrically in float passes).
  float symmetry_tolerance = 1e-6f;
  // CPU threads for validation and queries (0 = all available).
  int threads = 0;
};

// A provider over an owned n x n float32 matrix D (row-major, D[s * n + v] = distance from s to
// v). distances_to fills out[i * m + k] = D[anchors[k] * n + i].
class PrecomputedProvider final : public DistanceProvider {
 public:
  // Takes the matrix as is (no validation: use the factories below). `name` is what name()
  // returns; `setup_runs` the number of shortest-path runs it took to build (for stats()).
  PrecomputedProvider(
      std::vector<float> matrix, Index n, std::string name, std::int64_t setup_runs, int threads);

  std::string_view name() const override { return name_; }
  Index num_nodes() const override { return n_; }
  void distances_to(std::span<const Index> anchors, std::span<float> out) const override;
  std::size_t memory_bytes() const override { return matrix_.size() * sizeof(float); }
  DistanceStats stats() const override { return counters_.snapshot(); }
  bool holds_full_matrix() const override { return true; }

  // The full matrix, n x n row-major (for exact GW losses and tests). Valid while *this lives.
  std::span<const float> matrix() const { return matrix_; }

 private:
  std::vector<float> matrix_;
  Index n_;
  std::string name_;
  int threads_;
  mutable DistanceCounters counters_;
};

// All-pairs shortest paths of `graph` (see shortest_paths.h for direction and rounding), computed
// once here, parallel over sources. name() = "precomputed". Validates the graph (kBadData);
// kInvalidArgument when the matrix would exceed options.max_bytes. The graph is not kept.
std::unique_ptr<PrecomputedProvider> make_precomputed_provider(
    const CsrGraphView& graph, const PrecomputedOptions& options = {});

// Wraps a user-given n x n matrix (row-major, takes ownership). name() = "dense". Validated:
// kInvalidArgument if matrix.size() != n * n or n < 1; kBadData naming the entry (i, j) for a NaN,
// -inf or negative entry, a non-zero diagonal entry, or (unless options.allow_asymmetric) an
// asymmetric pair. +inf entries mean "unreachable". O(n^2).
std::unique_ptr<PrecomputedProvider> make_dense_provider(std::vector<float> matrix,
                                                         Index n,
                                                         const DenseOptions& options = {});

}  // namespace gw
