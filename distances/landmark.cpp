#include "distances/landmark.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "distances/landmark_kernels_impl.h"
#include "distances/provider_util_impl.h"
#include "distances/shortest_paths_impl.h"
#include "graph/components.h"

namespace gw {
namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

FarthestPointSample farthest_point_sample(const CsrGraphView& graph,
                                          Index count,
                                          const FarthestPointOptions& options) {
  validate(graph, "graph");
  const Index n = graph.num_nodes;
  GW_CHECK(n >= 1, "farthest_point_sample: the graph has no nodes");
  GW_CHECK(count >= 1, "farthest_point_sample: count must be >= 1, got " << count);
  count = std::min(count, n);
  Index start = 0;
  if (options.start) {
    start = *options.start;
    const Index ids[] = {start};
    detail::check_node_ids(ids, n, "start");
  } else {
    Rng rng(options.seed);
    start = static_cast<Index>(rng.uniform_index(static_cast<std::uint64_t>(n)));
  }

  const std::size_t row_size = static_cast<std::size_t>(n);
  FarthestPointSample sample;
  sample.nodes.reserve(count);
  sample.radius.reserve(count);
  sample.min_distance.assign(row_size, kInf);
  std::vector<float> scratch;
  if (options.keep_rows) {
    sample.rows.resize(static_cast<std::size_t>(count) * row_size);
  } else {
    scratch.resize(row_size);
  }
  std::vector<std::uint8_t> picked(row_size, 0);
  float* min_distance = sample.min_distance.data();

  Index next = start;
  for (Index k = 0; k < count; ++k) {
    const Index node = next;
    sample.nodes.push_back(node);
    sample.radius.push_back(k == 0 ? kInf : min_distance[node]);
    picked[node] = 1;
    float* row = options.keep_rows ? sample.rows.data() + k * row_size : scratch.data();
    detail::dijkstra_row(graph, node, row);
    // One fused pass: fold the new row into the minima and find the next pick. The scan is O(n)
    // against the O(E log n) Dijkstra run, so it stays on one thread.
    float best = -1.0f;
    next = -1;
    for (Index v = 0; v < n; ++v) {
      const float m = std::min(min_distance[v], row[v]);
      min_distance[v] = m;
      if (!picked[v] && m > best) {
        best = m;
        next = v;
      }
    }
  }
  return sample;
}

LandmarkProvider::LandmarkProvider(const CsrGraphView& graph, const LandmarkOptions& options)
    : threads_(options.threads) {
  GW_CHECK(options.num_landmarks >= 1,
           "LandmarkOptions::num_landmarks must be >= 1, got " << options.num_landmarks);
  FarthestPointOptions fps;
  fps.seed = options.seed;
  fps.start = options.start;
  fps.keep_rows = true;
  FarthestPointSample sample = farthest_point_sample(graph, options.num_landmarks, fps);
  n_ = graph.num_nodes;
  d_ = static_cast<Index>(sample.nodes.size());
  landmarks_ = std::move(sample.nodes);
  counters_.shortest_path_runs = d_;
  build_coordinates(sample.rows, connected_components(graph));
}

LandmarkProvider::LandmarkProvider(std::vector<Index> landmarks,
                                   std::span<const float> rows,
                                   const Components& components,
                                   int threads)
    : threads_(threads) {
  n_ = static_cast<Index>(components.labels.size());
  d_ = static_cast<Index>(landmarks.size());
  GW_CHECK(d_ >= 1, "LandmarkProvider: no landmarks given");
  GW_CHECK(rows.size() == static_cast<std::size_t>(d_) * static_cast<std::size_t>(n_),
           "LandmarkProvider: rows has " << rows.size() << " entries, expected d x n = " << d_
                                         << " x " << n_ << " (one row per landmark, one label "
                                         << "per node in components)");
  detail::check_node_ids(landmarks, n_, "landmark");
  landmarks_ = std::move(landmarks);
  counters_.shortest_path_runs = d_;
  build_coordinates(rows, components);
}

void LandmarkProvider::build_coordinates(std::span<const float> sample_rows,
                                         const Components& components) {
  const int threads = resolve_threads(threads_);
  const std::size_t n = static_cast<std::size_t>(n_);
  const std::size_t d = static_cast<std::size_t>(d_);
  const float* rows = sample_rows.data();  // d x n
  // Per-landmark means of the finite coordinates (+inf counted as 0, as in centred_). Centring
  // shrinks |x|^2 and so the cancellation in |x|^2 + |y|^2 - 2 x.y.
  std::vector<double> mean(d);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t l = 0; l < static_cast<std::int64_t>(d); ++l) {
    double sum = 0.0;
    const float* row = rows + l * n;
    for (std::size_t i = 0; i < n; ++i) sum += std::isinf(row[i]) ? 0.0 : row[i];
    mean[l] = sum / static_cast<double>(n);
  }

  coordinates_.resize(n * d);
  centred_.resize(n * d);
  sq_norms_.resize(n);
  bool all_finite = true;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : all_finite)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    double sq = 0.0;
    for (std::size_t l = 0; l < d; ++l) {
      const float x = rows[l * n + i];
      coordinates_[i * d + l] = x;
      const bool finite = !std::isinf(x);
      all_finite = all_finite && finite;
      const float c = static_cast<float>((finite ? x : 0.0) - mean[l]);
      centred_[i * d + l] = c;
      sq += static_cast<double>(c) * c;
    }
    sq_norms_[i] = static_cast<float>(sq);
  }

  if (components.count == 1 && all_finite) return;

  // Classes: nodes with the same component label and the same set of reaching landmarks. Keyed by
  // [label, mask words], sorted to number them.
  const std::size_t words = 1 + (d + 63) / 64;
  std::vector<std::uint64_t> keys(n * words, 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t* key = keys.data() + i * words;
    key[0] = static_cast<std::uint64_t>(components.labels[i]);
    for (std::size_t l = 0; l < d; ++l) {
      if (!std::isinf(coordinates_[i * d + l])) key[1 + l / 64] |= std::uint64_t{1} << (l % 64);
    }
  }
  std::vector<Index> order(n);
  std::iota(order.begin(), order.end(), 0);
  const auto key_less = [&](Index a, Index b) {
    return std::lexicographical_compare(keys.begin() + a * words,
                                        keys.begin() + (a + 1) * words,
                                        keys.begin() + b * words,
                                        keys.begin() + (b + 1) * words);
  };
  std::sort(order.begin(), order.end(), key_less);
  classes_.assign(n, 0);
  Index current = 0;
  for (std::size_t r = 1; r < n; ++r) {
    if (key_less(order[r - 1], order[r])) ++current;
    classes_[order[r]] = current;
  }
  num_classes_ = current + 1;
  if (num_classes_ == 1) classes_.clear();
}

std::size_t LandmarkProvider::memory_bytes() const {
  return landmarks_.size() * sizeof(Index) + coordinates_.size() * sizeof(float) +
         centred_.size() * sizeof(float) + sq_norms_.size() * sizeof(float) +
         classes_.size() * sizeof(Index);
}

namespace {
// Nodes per block: a block's coordinates (kBlock x d) and its output tile (kBlock x m) stay in L2
// while the GEMM and the epilogue run over them, so `out` is written once.
constexpr Index kBlock = 256;

// |x - y|^2 from |x|^2 + |y|^2 - 2 x.y loses digits when x and y are close: the float GEMM error
// is about d 2^-24 (|x|^2 + |y|^2). Entries with |x - y|^2 below kRefineRatio (|x|^2 + |y|^2) are
// recomputed directly from the coordinate differences, so near pairs (and the anchor itself) are
// exact up to float rounding, and elsewhere the relative error of |x - y| is at most about
// (d / 2) 2^-24 / kRefineRatio (1e-4 for d = 50, typically 100x less). Near pairs are few:
// the refinement costs ~1% of a request on kNN graphs.
constexpr float kRefineRatio = 1.0f / 64.0f;
}  // namespace

void LandmarkProvider::distances_to(std::span<const Index> anchors, std::span<float> out) const {
  detail::check_request(anchors, n_, out);
  counters_.count_request(anchors.size());
  const Index m = static_cast<Index>(anchors.size());
  if (m == 0) return;
  const std::size_t d = static_cast<std::size_t>(d_);

  std::vector<float> y(static_cast<std::size_t>(m) * d);
  std::vector<float> y_sq(m);
  std::vector<Index> anchor_class(m, 0);
  for (Index k = 0; k < m; ++k) {
    const Index a = anchors[k];
    std::copy_n(centred_.data() + a * d, d, y.data() + k * d);
    y_sq[k] = sq_norms_[a];
    if (!classes_.empty()) anchor_class[k] = classes_[a];
  }
  const detail::LandmarkRequest request{centred_.data(),
                                        coordinates_.data(),
                                        sq_norms_.data(),
                                        classes_.empty() ? nullptr : classes_.data(),
                                        y.data(),
                                        y_sq.data(),
                                        anchors.data(),
                                        anchor_class.data(),
                                        m,
                                        d_,
                                        kRefineRatio};
  // The tile GEMM and its epilogue run in the active instruction-set target's copy
  // (landmark_isa.cpp).
  const detail::LandmarkBlockFn block = detail::landmark_kernels().block;

  const Index num_blocks = (n_ + kBlock - 1) / kBlock;
  const int threads = resolve_threads(threads_);
  // Dynamic: on a shared machine a statically assigned half stalls the whole request when its
  // core is busy elsewhere.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 2)
  for (Index b = 0; b < num_blocks; ++b) {
    const Index begin = b * kBlock;
    block(request,
          begin,
          std::min(kBlock, n_ - begin),
          out.data() + static_cast<std::size_t>(begin) * m);
  }
}

std::unique_ptr<LandmarkProvider> make_landmark_provider(const CsrGraphView& graph,
                                                         const LandmarkOptions& options) {
  return std::make_unique<LandmarkProvider>(graph, options);
}

}  // namespace gw
