#include "graph/knn.h"

#include <omp.h>
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "graph/builder.h"
#include "graph/components.h"

namespace gw {

namespace {

constexpr int kKdTreeMaxDim = 12;
// Above this many points kAuto takes the tree at any dimension: brute force costs n^2 d (1.2e12
// flops for 200,000 points in 30-D, minutes on a laptop-class CPU), while the tree's cost grows
// with the data's intrinsic dimension, which for embeddings such as single-cell PCA coordinates is
// far below d. Both are exact.
constexpr Index kBruteForceMaxNodes = 50000;
constexpr Index kLeafSize = 48;

// A candidate neighbour; ordered by (distance, index) so ties resolve to the smaller index.
struct Candidate {
  double dist2;
  Index index;
  bool operator<(const Candidate& other) const {
    return dist2 < other.dist2 || (dist2 == other.dist2 && index < other.index);
  }
};

// The k best candidates seen so far: a binary max-heap on (distance, index) with hand-written
// sifts over plain arrays (the root is the k-th best, i.e. the current pruning bound).
class TopK {
 public:
  explicit TopK(int k) : k_(k), dist_(k), index_(k) {}
  // Starts a new query. `cap` is a squared distance known to enclose at least k candidates; until
  // the heap is full, nothing farther than `cap` needs to be offered.
  void clear(double cap = std::numeric_limits<double>::infinity()) {
    size_ = 0;
    cap_ = cap;
  }
  // Squared distance beyond which a candidate cannot be among the best k.
  double bound() const { return size_ == k_ ? dist_[0] : cap_; }
  // Callers offer only candidates with dist2 <= bound(); an equal distance still needs the index
  // comparison.
  void offer(double dist2, Index index) {
    if (size_ < k_) {
      int child = size_++;
      while (child > 0) {
        const int parent = (child - 1) / 2;
        if (!greater(dist2, index, dist_[parent], index_[parent])) break;
        dist_[child] = dist_[parent];
        index_[child] = index_[parent];
        child = parent;
      }
      dist_[child] = dist2;
      index_[child] = index;
      return;
    }
    if (!greater(dist_[0], index_[0], dist2, index)) return;
    int parent = 0;
    while (true) {
      int child = 2 * parent + 1;
      if (child >= k_) break;
      if (child + 1 < k_ &&
          greater(dist_[child + 1], index_[child + 1], dist_[child], index_[child])) {
        ++child;
      }
      if (!greater(dist_[child], index_[child], dist2, index)) break;
      dist_[parent] = dist_[child];
      index_[parent] = index_[child];
      parent = child;
    }
    dist_[parent] = dist2;
    index_[parent] = index;
  }
  // The kept candidates sorted ascending by (distance, index).
  const std::vector<Candidate>& sorted() {
    out_.resize(size_);
    for (int p = 0; p < size_; ++p) out_[p] = {dist_[p], index_[p]};
    std::sort(out_.begin(), out_.end());
    return out_;
  }

 private:
  static bool greater(double da, Index ia, double db, Index ib) {
    return da > db || (da == db && ia > ib);
  }

  int k_;
  int size_ = 0;
  double cap_ = std::numeric_limits<double>::infinity();
  std::vector<double> dist_;
  std::vector<Index> index_;
  std::vector<Candidate> out_;
};

void store_row(KnnResult& result, Index row, const std::vector<Candidate>& sorted) {
  const std::size_t base = static_cast<std::size_t>(row) * result.k;
  for (int t = 0; t < result.k; ++t) {
    result.indices[base + t] = sorted[t].index;
    result.distances[base + t] = static_cast<float>(std::sqrt(sorted[t].dist2));
  }
}

// k-d tree over points stored in tree order (a node's points are contiguous), with tight
// bounding boxes per node. Splits at the median of the widest dimension.
class KdTree {
 public:
  struct Node {
    Index begin, end;
    int left = -1, right = -1;  // children; -1 for a leaf
  };

  KdTree(const std::vector<double>& points, Index n, int d) : n_(n), d_(d) {
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0);
    build(points, 0, n);
    coords_.resize(static_cast<std::size_t>(n) * d);
    soa_.resize(static_cast<std::size_t>(n) * d);
    for (Index p = 0; p < n; ++p) {
      for (int t = 0; t < d; ++t) {
        const double x = points[static_cast<std::size_t>(order_[p]) * d + t];
        coords_[static_cast<std::size_t>(p) * d + t] = x;
        soa_[static_cast<std::size_t>(t) * n + p] = x;
      }
    }
  }

  Index original(Index position) const { return order_[position]; }
  const double* coords(Index position) const {
    return &coords_[static_cast<std::size_t>(position) * d_];
  }

  // Exact k nearest neighbours of the point q (excluding `self`) by best-first descent.
  void query(const double* q, Index self, TopK& top) const {
    switch (d_) {
      case 1:
        return search<1>(0, q, self, top);
      case 2:
        return search<2>(0, q, self, top);
      case 3:
        return search<3>(0, q, self, top);
      default:
        return search<0>(0, q, self, top);
    }
  }

 private:
  const double* lo(int id) const { return &lo_[static_cast<std::size_t>(id) * d_]; }
  const double* hi(int id) const { return &hi_[static_cast<std::size_t>(id) * d_]; }

  int build(const std::vector<double>& points, Index begin, Index end) {
    const int id = static_cast<int>(nodes_.size());
    nodes_.push_back({begin, end});
    lo_.resize(lo_.size() + d_, std::numeric_limits<double>::infinity());
    hi_.resize(hi_.size() + d_, -std::numeric_limits<double>::infinity());
    for (Index p = begin; p < end; ++p) {
      const double* x = &points[static_cast<std::size_t>(order_[p]) * d_];
      for (int t = 0; t < d_; ++t) {
        lo_[static_cast<std::size_t>(id) * d_ + t] = std::min(lo(id)[t], x[t]);
        hi_[static_cast<std::size_t>(id) * d_ + t] = std::max(hi(id)[t], x[t]);
      }
    }
    int split = 0;
    for (int t = 1; t < d_; ++t) {
      if (hi(id)[t] - lo(id)[t] > hi(id)[split] - lo(id)[split]) split = t;
    }
    // Leaf: small, or all points identical (no split can separate them).
    if (end - begin <= kLeafSize || hi(id)[split] == lo(id)[split]) return id;
    const Index mid = begin + (end - begin) / 2;
    std::nth_element(
        order_.begin() + begin, order_.begin() + mid, order_.begin() + end, [&](Index a, Index b) {
          const double xa = points[static_cast<std::size_t>(a) * d_ + split];
          const double xb = points[static_cast<std::size_t>(b) * d_ + split];
          return xa < xb || (xa == xb && a < b);
        });
    const int left = build(points, begin, mid);
    const int right = build(points, mid, end);
    nodes_[id].left = left;
    nodes_[id].right = right;
    return id;
  }

  template <int D>
  double box_distance2(int id, const double* q) const {
    const int d = D > 0 ? D : d_;
    double sum = 0.0;
    for (int t = 0; t < d; ++t) {
      const double below = lo(id)[t] - q[t];
      const double above = q[t] - hi(id)[t];
      const double gap = below > 0.0 ? below : (above > 0.0 ? above : 0.0);
      sum += gap * gap;
    }
    return sum;
  }

  // D > 0: the dimension as a compile-time constant (unrolled distance loops); D == 0: d_.
  template <int D>
  void search(int id, const double* q, Index self, TopK& top) const {
    const int d = D > 0 ? D : d_;
    const Node& nd = nodes_[id];
    if (nd.left < 0) {
      // Distances of a block of the leaf's points at once (coordinate-major layout: the loop over
      // points vectorizes), then only those within the bound reach the heap. The per-point sum is
      // the same sequence of operations as everywhere else, so results stay bitwise exact.
      double dist[kLeafSize];
      for (Index block = nd.begin; block < nd.end; block += kLeafSize) {
        const Index count = std::min<Index>(kLeafSize, nd.end - block);
        for (Index p = 0; p < count; ++p) dist[p] = 0.0;
        for (int t = 0; t < d; ++t) {
          const double* x = &soa_[static_cast<std::size_t>(t) * n_ + block];
          const double qt = q[t];
          for (Index p = 0; p < count; ++p) {
            const double diff = x[p] - qt;
            dist[p] += diff * diff;
          }
        }
        double bound = top.bound();
        for (Index p = 0; p < count; ++p) {
          if (dist[p] > bound) continue;
          const Index j = order_[block + p];
          if (j == self) continue;
          top.offer(dist[p], j);
          bound = top.bound();
        }
      }
      return;
    }
    const double dl = box_distance2<D>(nd.left, q);
    const double dr = box_distance2<D>(nd.right, q);
    const int first = dl <= dr ? nd.left : nd.right;
    const int second = dl <= dr ? nd.right : nd.left;
    // Visit a box only if it may hold a point at least as close as the current bound: "<=" keeps
    // boxes that may hold an equidistant point with a smaller index.
    if (std::min(dl, dr) <= top.bound()) search<D>(first, q, self, top);
    if (std::max(dl, dr) <= top.bound()) search<D>(second, q, self, top);
  }

  Index n_;
  int d_;
  std::vector<Index> order_;    // tree position -> original index
  std::vector<double> coords_;  // points in tree order, row-major
  std::vector<double> soa_;     // points in tree order, one array per coordinate
  std::vector<Node> nodes_;
  std::vector<double> lo_, hi_;  // bounding boxes, d per node
};

KnnResult knn_kdtree(const std::vector<double>& points, Index n, int d, int k) {
  KnnResult result{n,
                   k,
                   std::vector<Index>(static_cast<std::size_t>(n) * k),
                   std::vector<float>(static_cast<std::size_t>(n) * k)};
  const KdTree tree(points, n, d);
#pragma omp parallel
  {
    TopK top(k);
    Index previous = -1;
    double previous_radius = 0.0;
#pragma omp for schedule(dynamic, 64)
    for (Index p = 0; p < n; ++p) {
      const double* q = tree.coords(p);
      double cap = std::numeric_limits<double>::infinity();
      if (previous >= 0 && previous == p - 1) {
        const double* prev = tree.coords(previous);
        double step2 = 0.0;
        for (int t = 0; t < d; ++t) step2 += (q[t] - prev[t]) * (q[t] - prev[t]);
        const double radius = previous_radius + std::sqrt(step2);
        cap = radius * radius * (1.0 + 1e-9);
      }
      top.clear(cap);
      const Index self = tree.original(p);
      tree.query(q, self, top);
      const std::vector<Candidate>& sorted = top.sorted();
      previous = p;
      previous_radius = std::sqrt(sorted.back().dist2);
      store_row(result, self, sorted);
    }
  }
  return result;
}

// Blocked brute force: squared distances of a block of queries to all points by one GEMM
// (|q|^2 + |x|^2 - 2 q.x), which may be off by a rounding error bounded by `slack`; every point
// whose approximate distance is within 2*slack of the approximate k-th is then re-ranked with the
// exact formula, so the result is exactly the (distance, index) top k.
KnnResult knn_brute_force(const std::vector<double>& points, Index n, int d, int k) {
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  KnnResult result{n,
                   k,
                   std::vector<Index>(static_cast<std::size_t>(n) * k),
                   std::vector<float>(static_cast<std::size_t>(n) * k)};
  const Eigen::Map<const RowMatrix> x(points.data(), n, d);
  const Eigen::VectorXd norms = x.rowwise().squaredNorm();
  const double max_norm = norms.maxCoeff();
  constexpr Index kBlock = 16;
  const Index blocks = (n + kBlock - 1) / kBlock;
  auto exact = [&](Index i, Index j) {
    double sum = 0.0;
    for (int t = 0; t < d; ++t) {
      const double diff =
          points[static_cast<std::size_t>(j) * d + t] - points[static_cast<std::size_t>(i) * d + t];
      sum += diff * diff;
    }
    return sum;
  };
#pragma omp parallel
  {
    RowMatrix approx;
    std::vector<double> scratch;
    std::vector<Candidate> candidates;
#pragma omp for schedule(dynamic, 1)
    for (Index b = 0; b < blocks; ++b) {
      const Index begin = b * kBlock;
      const Index rows = std::min(kBlock, n - begin);
      approx.noalias() = -2.0 * x.middleRows(begin, rows) * x.transpose();
      for (Index r = 0; r < rows; ++r) {
        const Index i = begin + r;
        double* row = approx.row(r).data();
        for (Index j = 0; j < n; ++j) row[j] += norms[i] + norms[j];
        row[i] = std::numeric_limits<double>::infinity();
        scratch.assign(row, row + n);
        std::nth_element(scratch.begin(), scratch.begin() + (k - 1), scratch.end());
        // Rounding error of the GEMM form, with a generous constant: (d + 4) ulps of the norms.
        const double slack =
            (d + 4) * std::numeric_limits<double>::epsilon() * (norms[i] + max_norm);
        const double threshold = scratch[k - 1] + 2.0 * slack;
        candidates.clear();
        for (Index j = 0; j < n; ++j) {
          if (j != i && row[j] <= threshold) candidates.push_back({exact(i, j), j});
        }
        std::partial_sort(candidates.begin(), candidates.begin() + k, candidates.end());
        store_row(result, i, candidates);
      }
    }
  }
  return result;
}

template <typename T>
KnnResult knn_search_impl(
    std::span<const T> points, Index n, int d, int k, KnnAlgorithm algorithm) {
  GW_CHECK(n >= 1, "kNN search needs at least one point, got n = " << n);
  GW_CHECK(d >= 1, "kNN search: point dimension must be >= 1, got " << d);
  GW_CHECK(k >= 1, "kNN search: k must be >= 1, got " << k);
  GW_CHECK(points.size() == static_cast<std::size_t>(n) * d,
           "kNN search: " << points.size() << " coordinates for n = " << n
                          << " points of dimension " << d << " (expected "
                          << static_cast<std::size_t>(n) * d << ")");
  check_all_finite(points, "kNN input points");
  k = std::min<Index>(k, n - 1);
  if (k == 0) return KnnResult{n, 0, {}, {}};
  std::vector<double> coords(points.begin(), points.end());
  if (algorithm == KnnAlgorithm::kAuto) {
    algorithm = d <= kKdTreeMaxDim || n > kBruteForceMaxNodes ? KnnAlgorithm::kKdTree
                                                              : KnnAlgorithm::kBruteForce;
  }
  return algorithm == KnnAlgorithm::kKdTree ? knn_kdtree(coords, n, d, k)
                                            : knn_brute_force(coords, n, d, k);
}

// Undirected graph of a kNN relation: row i = out(i) U in(i) with distance weights. The weight of
// i - j is the same float from either side (the squared difference is symmetric), so "max" is
// simply that value. Specialized rather than build_csr(symmetrize): in-lists come out of a
// counting sort already ordered by source, only the out-neighbours that are not in-neighbours
// need sorting, and the two sorted lists merge in one pass.
CsrGraph symmetrize_knn(const KnnResult& knn) {
  const Index n = knn.n;
  const int k = knn.k;
  const std::size_t nk = static_cast<std::size_t>(n) * k;
  // In-lists by a counting sort over contiguous chunks of sources, one per thread: chunk c counts
  // its sources' out-edges per target, prefix sums give every (chunk, target) its cursor, and the
  // chunks place their edges without contention. Within a target's list, chunk c precedes c+1 and
  // sources ascend inside a chunk, so every in-list comes out sorted by source.
  const int chunks = std::max(1, std::min(omp_get_max_threads(), static_cast<int>(n / 4096) + 1));
  std::vector<Offset> cursor(static_cast<std::size_t>(chunks) * n, 0);
  auto chunk_begin = [&](int c) { return static_cast<Index>(static_cast<Offset>(n) * c / chunks); };
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    Offset* count = cursor.data() + static_cast<std::size_t>(c) * n;  // n may be 0
    for (std::size_t p = static_cast<std::size_t>(chunk_begin(c)) * k;
         p < static_cast<std::size_t>(chunk_begin(c + 1)) * k;
         ++p) {
      ++count[knn.indices[p]];
    }
  }
  std::vector<Offset> in_offsets(static_cast<std::size_t>(n) + 1, 0);
  for (Index j = 0; j < n; ++j) {
    Offset running = in_offsets[j];
    for (int c = 0; c < chunks; ++c) {
      const Offset count = cursor[static_cast<std::size_t>(c) * n + j];
      cursor[static_cast<std::size_t>(c) * n + j] = running;
      running += count;
    }
    in_offsets[j + 1] = running;
  }
  std::vector<Index> in_src(nk);
  std::vector<float> in_dist(nk);
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    Offset* next = cursor.data() + static_cast<std::size_t>(c) * n;
    for (Index i = chunk_begin(c); i < chunk_begin(c + 1); ++i) {
      for (int t = 0; t < k; ++t) {
        const std::size_t p = static_cast<std::size_t>(i) * k + t;
        const Offset pos = next[knn.indices[p]]++;
        in_src[pos] = i;
        in_dist[pos] = knn.distances[p];
      }
    }
  }
  std::vector<Offset>().swap(cursor);
  // Row i = in(i) (sorted) merged with the out-neighbours that are not also in-neighbours. A
  // thread-local stamp per node (stamp[j] == i: j is an out-neighbour of i) finds the mutual pairs
  // in one walk of in(i), so only the few out-only neighbours need sorting (most kNN pairs are
  // mutual) instead of all k. The out-only positions of row i are kept in slots [i k, i k + count)
  // of `out_only` for the second pass.
  const std::size_t kk = static_cast<std::size_t>(k);
  std::vector<Offset> row_offsets(static_cast<std::size_t>(n) + 1, 0);
  std::vector<int> out_only(nk);
#pragma omp parallel
  {
    std::vector<Index> stamp(n, -1);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const Index* out = &knn.indices[i * kk];
      for (int t = 0; t < k; ++t) stamp[out[t]] = i;
      for (Offset b = in_offsets[i]; b < in_offsets[i + 1]; ++b) {
        if (stamp[in_src[b]] == i) stamp[in_src[b]] = -1;  // mutual: leaves the out-only set
      }
      int* mine = &out_only[i * kk];
      int count = 0;
      for (int t = 0; t < k; ++t) {
        if (stamp[out[t]] == i) mine[count++] = t;
      }
      std::sort(mine, mine + count, [out](int a, int b) { return out[a] < out[b]; });
      row_offsets[i + 1] = (in_offsets[i + 1] - in_offsets[i]) + count;
    }
  }
  for (Index i = 0; i < n; ++i) row_offsets[i + 1] += row_offsets[i];
  std::vector<Index> cols(row_offsets[n]);
  std::vector<float> weights(row_offsets[n]);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    // The distance of i - j is the same float from both sides (see above), so a mutual pair takes
    // the in-list's copy.
    const Index* out = &knn.indices[i * kk];
    const float* out_dist = &knn.distances[i * kk];
    const int* mine = &out_only[i * kk];
    // The row holds in(i) and the out-only neighbours, so their count is the row length minus
    // the in-list's.
    const int count = static_cast<int>((row_offsets[i + 1] - row_offsets[i]) -
                                       (in_offsets[i + 1] - in_offsets[i]));
    Offset b = in_offsets[i], at = row_offsets[i];
    const Offset b_end = in_offsets[i + 1];
    int a = 0;
    while (a < count || b < b_end) {
      if (b == b_end || (a < count && out[mine[a]] < in_src[b])) {
        cols[at] = out[mine[a]];
        weights[at] = out_dist[mine[a]];
        ++a;
      } else {
        cols[at] = in_src[b];
        weights[at] = in_dist[b];
        ++b;
      }
      ++at;
    }
  }
  return CsrGraph(n, std::move(row_offsets), std::move(cols), std::move(weights));
}

template <typename T>
CsrGraph knn_graph_impl(std::span<const T> points, Index n, int d, const KnnGraphOptions& options) {
  const KnnResult knn = knn_search_impl(points, n, d, options.k, options.algorithm);
  CsrGraph graph =
      knn.k == 0 ? CsrGraph(n, std::vector<Offset>(static_cast<std::size_t>(n) + 1, 0), {}, {})
                 : symmetrize_knn(knn);
  if (!options.connect || connected_components(graph).count == 1) return graph;
  return std::move(stitch_components(graph, points, d).graph);
}

}  // namespace

KnnResult knn_search(std::span<const float> points, Index n, int d, int k, KnnAlgorithm algorithm) {
  return knn_search_impl(points, n, d, k, algorithm);
}

KnnResult knn_search(
    std::span<const double> points, Index n, int d, int k, KnnAlgorithm algorithm) {
  return knn_search_impl(points, n, d, k, algorithm);
}

CsrGraph knn_graph(std::span<const float> points, Index n, int d, const KnnGraphOptions& options) {
  return knn_graph_impl(points, n, d, options);
}

CsrGraph knn_graph(std::span<const double> points, Index n, int d, const KnnGraphOptions& options) {
  return knn_graph_impl(points, n, d, options);
}

}  // namespace gw
