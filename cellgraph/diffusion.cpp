#include "cellgraph/diffusion.h"

#include <Eigen/Dense>

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "cellgraph/diffusion_kernels_impl.h"
#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "graph/builder.h"
#include "graph/laplacian.h"

namespace gw {

// ---------------------------------------------------------------------------------------------
// Modified Bessel functions

namespace {

constexpr double kMaxBesselArgument = 700.0;

// Bytes per row of a tile buffer in apply(): four 64-byte vectors (64 float / 32 double channels).
constexpr Offset kRowBytes = 256;

void check_bessel_arguments(int k, double x) {
  GW_CHECK(k >= 0, "bessel_i: order k must be >= 0, got " << k);
  GW_CHECK(x >= 0.0 && x <= kMaxBesselArgument,
           "bessel_i: argument x must be in [0, " << kMaxBesselArgument << "], got " << x);
}

// Largest m >= 0 with m (m + k) <= q: the index of the largest term of the series, whose terms
// grow while m (m + k) <= q = (x/2)^2 and shrink after.
double peak_index(int k, double q) {
  double m = std::floor(0.5 * (-k + std::sqrt(static_cast<double>(k) * k + 4.0 * q)));
  m = std::max(m, 0.0);
  while (m > 0 && m * (m + k) > q) m -= 1.0;
  while ((m + 1) * (m + 1 + k) <= q) m += 1.0;
  return m;
}

// I_k(x) = sum_m (x/2)^(2m+k) / (m! (m+k)!) as exp(log_scale) * sum. Every term is positive, so
// there is no cancellation; the error is the rounding of the term recursion (a few ulp).
//   Direct: the first term (x/2)^k / k! as a product (k <= 170, where it is a normal double), the
//   rest by the ratio q / ((m+1)(m+1+k)), summed until past the peak and negligible.
//   Fallback (huge k, or a first term that underflows while later ones do not): the sum relative to
//   the peak term, walked outwards both ways, with only the peak term through lgamma (which costs
//   ~|lgamma| ulp, hence only as a fallback).
// Returns false in the fallback, where log_scale holds the log of the peak term.
bool bessel_series(int k, double x, double& log_scale, double& sum) {
  check_bessel_arguments(k, x);
  if (x == 0.0) {
    log_scale = 0.0;
    sum = k == 0 ? 1.0 : 0.0;
    return true;
  }
  const double half = 0.5 * x;
  const double q = half * half;
  const double m_star = peak_index(k, q);
  constexpr double kTiny = 1e-18;
  double first = 0.0;
  if (k <= 170) {
    double factorial = 1.0;
    for (int j = 2; j <= k; ++j) factorial *= j;
    first = std::pow(half, k) / factorial;
  }
  if (first >= 1e-280 && std::isfinite(first)) {
    sum = 0.0;
    double term = first;
    for (double m = 0.0;; m += 1.0) {
      sum += term;
      if (m >= m_star && term < kTiny * sum) break;
      term *= q / ((m + 1.0) * (m + 1.0 + k));
    }
    log_scale = 0.0;
    return true;  // I_k(x) <= e^x <= e^700: the sum is finite
  }
  const double m = m_star;
  log_scale = (2.0 * m + k) * std::log(half) - std::lgamma(m + 1.0) - std::lgamma(m + k + 1.0);
  sum = 1.0;
  double term = 1.0;
  for (double j = m + 1.0;; j += 1.0) {  // terms after the peak
    term *= q / (j * (j + k));
    sum += term;
    if (term < kTiny * sum) break;
  }
  term = 1.0;
  for (double j = m; j >= 1.0; j -= 1.0) {  // terms before the peak
    term *= j * (j + k) / q;
    sum += term;
    if (term < kTiny * sum) break;
  }
  return false;
}

}  // namespace

double bessel_i(int k, double x) {
  double log_scale = 0.0, sum = 0.0;
  const bool direct = bessel_series(k, x, log_scale, sum);
  return direct ? sum : std::exp(log_scale) * sum;
}

double bessel_i_scaled(int k, double x) {
  double log_scale = 0.0, sum = 0.0;
  const bool direct = bessel_series(k, x, log_scale, sum);
  return direct ? sum * std::exp(-x) : std::exp(log_scale - x) * sum;
}

std::vector<double> heat_chebyshev_weights(int order,
                                           double beta,
                                           double lambda_max,
                                           bool halve_c0) {
  GW_CHECK(order >= 0, "heat diffusion: order K must be >= 0, got " << order);
  GW_CHECK(std::isfinite(beta) && beta >= 0.0,
           "heat diffusion: beta must be finite and >= 0, got " << beta);
  GW_CHECK(std::isfinite(lambda_max) && lambda_max > 0.0,
           "heat diffusion: lambda_max must be finite and > 0, got " << lambda_max);
  const double beta_prime = beta * lambda_max / 2.0;
  GW_CHECK(beta_prime <= kMaxBesselArgument,
           "heat diffusion: beta * lambda_max / 2 = "
               << beta_prime << " exceeds " << kMaxBesselArgument << "; use a smaller beta");
  using Key = std::tuple<int, double, double>;
  static std::mutex mutex;
  static std::map<Key, std::vector<double>> cache;  // c_0 .. c_K, c_0 not halved
  constexpr std::size_t kMaxCacheEntries = 256;
  std::vector<double> c;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(Key{order, beta, lambda_max});
    if (it != cache.end()) c = it->second;
  }
  if (c.empty()) {
    c.resize(static_cast<std::size_t>(order) + 1);
    for (int k = 0; k <= order; ++k) {
      const double sign = (k % 2 == 0) ? 1.0 : -1.0;
      c[k] = 2.0 * sign * bessel_i_scaled(k, beta_prime);
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() >= kMaxCacheEntries) cache.clear();
    cache.emplace(Key{order, beta, lambda_max}, c);
  }
  if (halve_c0) c[0] *= 0.5;
  return c;
}

// ---------------------------------------------------------------------------------------------
// The batch operator

namespace {

void check_options(const DiffusionOptions& options) {
  GW_CHECK(options.order >= 0, "DiffusionOptions::order must be >= 0, got " << options.order);
  GW_CHECK(std::isfinite(options.beta) && options.beta >= 0.0,
           "DiffusionOptions::beta must be finite and >= 0, got " << options.beta);
  GW_CHECK(std::isfinite(options.lambda_max) && options.lambda_max > 0.0,
           "DiffusionOptions::lambda_max must be finite and > 0, got " << options.lambda_max);
  GW_CHECK(options.lanczos_steps >= 1,
           "DiffusionOptions::lanczos_steps must be >= 1, got " << options.lanczos_steps);
  resolve_threads(options.threads);
}

// Checks every size, endpoint and weight of the batch and sets node_offsets (B + 1 cumulative
// node counts: graph b's node i is batch row node_offsets[b] + i).
void check_graphs(const DiffusionGraphs& graphs, Index seq_len, std::vector<Offset>& node_offsets) {
  const Index batch = graphs.num_graphs();
  GW_CHECK(seq_len >= 0, "heat diffusion: seq_len must be >= 0, got " << seq_len);
  GW_CHECK(graphs.edge_ptr.size() == static_cast<std::size_t>(batch) + 1,
           "heat diffusion: edge_ptr has " << graphs.edge_ptr.size() << " entries for " << batch
                                           << " graphs; it needs B + 1");
  GW_CHECK(graphs.edge_ptr[0] == 0,
           "heat diffusion: edge_ptr[0] = " << graphs.edge_ptr[0] << "; it must be 0");
  GW_CHECK(graphs.src.size() == graphs.dst.size(),
           "heat diffusion: " << graphs.src.size() << " sources but " << graphs.dst.size()
                              << " targets");
  GW_CHECK(graphs.edge_ptr[batch] == static_cast<Offset>(graphs.src.size()),
           "heat diffusion: edge_ptr ends at " << graphs.edge_ptr[batch] << " but there are "
                                               << graphs.src.size() << " edges");
  GW_CHECK(graphs.weights.empty() || graphs.weights.size() == graphs.src.size(),
           "heat diffusion: " << graphs.weights.size() << " weights for " << graphs.src.size()
                              << " edges; give one per edge or none");
  node_offsets.assign(static_cast<std::size_t>(batch) + 1, 0);
  for (Index b = 0; b < batch; ++b) {
    const Index n = graphs.num_nodes[b];
    GW_CHECK(n >= 0 && n <= seq_len,
             "heat diffusion: graph " << b << " has " << n << " nodes; node counts must be in [0, "
                                      << seq_len << "] (the padded length S)");
    GW_CHECK(graphs.edge_ptr[b + 1] >= graphs.edge_ptr[b],
             "heat diffusion: edge_ptr decreases at graph " << b);
    node_offsets[b + 1] = node_offsets[b] + n;
    for (Offset e = graphs.edge_ptr[b]; e < graphs.edge_ptr[b + 1]; ++e) {
      const Index u = graphs.src[e];
      const Index v = graphs.dst[e];
      if (u < 0 || u >= n || v < 0 || v >= n) {
        GW_THROW(ErrorCode::kBadData,
                 "heat diffusion: graph " << b << ", edge " << e - graphs.edge_ptr[b] << " (" << u
                                          << " -> " << v << ") has a local node id outside [0, "
                                          << n << ")");
      }
      if (!graphs.weights.empty() &&
          !(graphs.weights[e] >= 0.0f && std::isfinite(graphs.weights[e]))) {
        GW_THROW(ErrorCode::kBadData,
                 "heat diffusion: graph " << b << ", edge " << e - graphs.edge_ptr[b]
                                          << " has weight " << graphs.weights[e]
                                          << "; weights must be finite and >= 0");
      }
    }
  }
  GW_CHECK(node_offsets[batch] <= std::numeric_limits<Index>::max(),
           "heat diffusion: " << node_offsets[batch] << " nodes in all exceed 2^31 - 1");
}

// Largest eigenvalue of the symmetric matrix `a` (an upper estimate): `steps` Lanczos steps from a
// fixed pseudo-random start, without reorthogonalization (spurious copies of converged Ritz values
// do not move the largest one), then the largest Ritz value plus its residual |beta_m s_m|.
double lanczos_largest(const CsrMatrix<double>& a, int steps, int threads) {
  const Index n = a.rows;
  if (n == 0) return 0.0;
  steps = std::min<Offset>(steps, n);
  std::vector<double> v(n), v_prev(n, 0.0), w(n);
  Rng rng(0x1a2c305eedULL);
  double norm = 0.0;
  for (double& x : v) {
    x = rng.uniform() - 0.5;
    norm += x * x;
  }
  norm = std::sqrt(norm);
  for (double& x : v) x /= norm;
  std::vector<double> alpha, beta;
  double beta_prev = 0.0;
  double residual = 0.0;
  for (int j = 0; j < steps; ++j) {
    double dot = 0.0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : dot)
    for (Index i = 0; i < n; ++i) {
      double s = 0.0;
      for (Offset p = a.row_offsets[i]; p < a.row_offsets[i + 1]; ++p) {
        s += a.values[p] * v[a.col_indices[p]];
      }
      w[i] = s;
      dot += s * v[i];
    }
    alpha.push_back(dot);
    double wnorm = 0.0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : wnorm)
    for (Index i = 0; i < n; ++i) {
      w[i] -= dot * v[i] + beta_prev * v_prev[i];
      wnorm += w[i] * w[i];
    }
    wnorm = std::sqrt(wnorm);
    residual = wnorm;
    if (j + 1 == steps || wnorm < 1e-12) break;  // done, or an invariant subspace was found
    beta.push_back(wnorm);
    beta_prev = wnorm;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (Index i = 0; i < n; ++i) {
      v_prev[i] = v[i];
      v[i] = w[i] / wnorm;
    }
  }
  const Eigen::Index m = static_cast<Eigen::Index>(alpha.size());
  Eigen::VectorXd diag = Eigen::Map<const Eigen::VectorXd>(alpha.data(), m);
  Eigen::VectorXd sub = Eigen::VectorXd::Zero(std::max<Eigen::Index>(m - 1, 0));
  for (Eigen::Index i = 0; i + 1 < m; ++i) sub[i] = beta[i];
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver;
  solver.computeFromTridiagonal(diag, sub, Eigen::ComputeEigenvectors);
  const double theta = solver.eigenvalues()[m - 1];
  const double last_component = solver.eigenvectors()(m - 1, m - 1);
  return theta + std::abs(residual * last_component);
}

}  // namespace

HeatDiffusion::HeatDiffusion(const DiffusionGraphs& graphs,
                             Index seq_len,
                             const DiffusionOptions& options)
    : options_(options), seq_len_(seq_len) {
  check_options(options);
  const int threads = resolve_threads(options.threads);
  check_graphs(graphs, seq_len, node_offsets_);
  const Index batch = graphs.num_graphs();
  const Index total = static_cast<Index>(node_offsets_.back());
  // The loops below are over graphs: no more threads than graphs (a single graph is built on the
  // calling thread, without starting a team).
  const int team = static_cast<int>(std::clamp<Index>(batch, 1, threads));

  // Each graph's Laplacian on its own (graph/builder.h, graph/laplacian.h), in one parallel loop
  // over graphs: the graphs are small, so building them one per thread beats one batch-wide
  // build with a barrier per pass. The inputs are checked above; anything thrown here is a bug,
  // carried out of the parallel region and rethrown.
  BuildOptions build;
  build.symmetrize = options.symmetrize;
  build.duplicates = DuplicatePolicy::kKeepAll;  // parallel edges add up (kMax if symmetrized)
  build.self_loops = SelfLoopPolicy::kKeep;
  std::vector<CsrMatrix<double>> laps(batch);
  Index first_asymmetric = batch;
  std::exception_ptr failure;
#pragma omp parallel for num_threads(team) schedule(dynamic, 1) reduction(min : first_asymmetric)
  for (Index b = 0; b < batch; ++b) {
    try {
      // The graph core's own parallel loops run single-threaded in here (with threads = 1 the
      // outer region is inactive, and nested regions would otherwise start new teams).
      ScopedThreads single(1);
      const Offset e0 = graphs.edge_ptr[b];
      const Offset m = graphs.edge_ptr[b + 1] - e0;
      const EdgeListView edges{
          graphs.src.subspan(e0, m),
          graphs.dst.subspan(e0, m),
          graphs.weights.empty() ? std::span<const float>{} : graphs.weights.subspan(e0, m)};
      const CsrGraph graph = build_csr(graphs.num_nodes[b], edges, build);
      if (options.estimate_lambda_max && !options.symmetrize && !is_symmetric(graph)) {
        first_asymmetric = std::min(first_asymmetric, b);
      }
      laps[b] = normalized_laplacian(graph);
    } catch (...) {
#pragma omp critical(gw_heat_diffusion_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  GW_CHECK(first_asymmetric == batch,
           "DiffusionOptions::estimate_lambda_max needs undirected graphs (every edge with its "
           "reverse of equal weight, or symmetrize = true), but graph "
               << first_asymmetric << " is not; use lambda_max = 2 instead");

  lambda_max_ = options.lambda_max;
  if (options.estimate_lambda_max) {
    // Lanczos on the whole block-diagonal L (the largest eigenvalue of the batch).
    CsrMatrix<double> lap;
    lap.rows = lap.cols = total;
    lap.row_offsets.assign(static_cast<std::size_t>(total) + 1, 0);
    for (Index b = 0; b < batch; ++b) {
      const Index base = static_cast<Index>(node_offsets_[b]);
      const Offset entry_base = lap.row_offsets[base];
      for (Index i = 0; i < laps[b].rows; ++i) {
        lap.row_offsets[base + i + 1] = entry_base + laps[b].row_offsets[i + 1];
      }
      for (Offset p = 0; p < laps[b].nnz(); ++p) {
        lap.col_indices.push_back(laps[b].col_indices[p] + base);
        lap.values.push_back(laps[b].values[p]);
      }
    }
    lambda_max_ = std::min(2.0, lanczos_largest(lap, options.lanczos_steps, threads));
    // A batch of edgeless graphs has L = I: the spectrum is {1}.
    lambda_max_ = std::max(lambda_max_, 1e-6);
  }
  weights_ = heat_chebyshev_weights(options.order, options.beta, lambda_max_, options.halve_c0);

  // L~ = (2 / lambda_max) L - I, dropping entries that cancel exactly (with lambda_max = 2 every
  // diagonal without a self loop), which saves a sixth of the work at 5 edges per node.
  const double scale = 2.0 / lambda_max_;
  const auto shifted = [scale](const CsrMatrix<double>& lap, Index i, Offset p) {
    return scale * lap.values[p] - (lap.col_indices[p] == i ? 1.0 : 0.0);
  };
  op_.rows = op_.cols = total;
  op_.row_offsets.assign(static_cast<std::size_t>(total) + 1, 0);
#pragma omp parallel for num_threads(team) schedule(dynamic, 4)
  for (Index b = 0; b < batch; ++b) {
    const CsrMatrix<double>& lap = laps[b];
    const Index base = static_cast<Index>(node_offsets_[b]);
    for (Index i = 0; i < lap.rows; ++i) {
      Offset count = 0;
      for (Offset p = lap.row_offsets[i]; p < lap.row_offsets[i + 1]; ++p) {
        count += shifted(lap, i, p) != 0.0 ? 1 : 0;
      }
      op_.row_offsets[base + i + 1] = count;
    }
  }
  for (Index i = 0; i < total; ++i) op_.row_offsets[i + 1] += op_.row_offsets[i];
  const Offset nnz = op_.row_offsets[total];
  op_.col_indices.resize(nnz);
  op_.values.resize(nnz);
  values_f32_.resize(nnz);
  entry_bytes_.resize(nnz);
#pragma omp parallel for num_threads(team) schedule(dynamic, 4)
  for (Index b = 0; b < batch; ++b) {
    const CsrMatrix<double>& lap = laps[b];
    const Index base = static_cast<Index>(node_offsets_[b]);
    for (Index i = 0; i < lap.rows; ++i) {
      Offset out = op_.row_offsets[base + i];
      for (Offset p = lap.row_offsets[i]; p < lap.row_offsets[i + 1]; ++p) {
        const double value = shifted(lap, i, p);
        if (value == 0.0) continue;
        const Index j = lap.col_indices[p];
        op_.col_indices[out] = base + j;
        op_.values[out] = value;
        values_f32_[out] = static_cast<float>(value);
        entry_bytes_[out] = static_cast<Offset>(j) * kRowBytes;
        ++out;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The recurrence

namespace {

// 64 bytes of T, 64-byte aligned: the recurrence buffers' element type, so that every row of
// kVecs of them is aligned for the kernel's vector loads (diffusion_isa.cpp). Not a vector type:
// GCC caps a vector type's alignment at the widest register of the target it compiles for (16
// bytes in a baseline build), while this file and the AVX-512 kernel must agree on 64.
template <typename T>
struct alignas(64) Vec {
  T lanes[64 / sizeof(T)];
};

// Channels per block: four vectors = 64 float / 32 double channels = 256 bytes per row. Fewer
// vectors per row pay the per-entry overhead (index load, address, broadcast) more often; the
// tile's buffers stay in L2 either way (bench/RESULTS.md, "Graph-cell kernels").
constexpr int kVecs = 4;
static_assert(kVecs * 64 == kRowBytes, "entry_bytes_ assume kRowBytes per tile row");
static_assert(kRowBytes == detail::kDiffusionRowBytes, "the kernel's row layout");
template <typename T>
constexpr int kBlock = kVecs * 64 / static_cast<int>(sizeof(T));

// Below this many multiply-adds (~3 ms on one core) a batch with fewer tasks than threads runs on
// the calling thread instead of splitting each product's rows across the team (see apply_impl).
constexpr double kTeamMinMultiplyAdds = 1 << 26;

// A tile's working set (X block, two recurrence buffers, the Y block) is kept under ~1 MiB so the
// whole recurrence runs out of one core's L2 (2 MiB on the benchmark machine).
constexpr std::size_t kTileBytes = std::size_t{1} << 20;

// One step of the recurrence (detail::RecurrenceRowsFn, diffusion_kernels_impl.h) runs in the
// active instruction-set target's copy, compiled in diffusion_isa.cpp.
template <typename T>
T* as_scalars(Vec<T>* v) {
  return reinterpret_cast<T*>(v);  // no member access: an empty workspace has a null buffer
}

// w_k in the compute type, with values below the smallest normal number flushed to 0: the
// weights decay like (beta'/2)^k / k!, so in float w_18 .. w_20 (at beta' = 0.1) would be
// subnormal, and every multiply-add with a subnormal operand takes a microcode assist (~100
// cycles on x86): three such steps cost more than the other 61. The flushed terms are below
// 1.2e-38 |T_k x|, far under float resolution.
template <typename T>
T compute_weight(double w) {
  const T rounded = static_cast<T>(w);
  return std::abs(rounded) < std::numeric_limits<T>::min() ? T(0) : rounded;
}

// A task: the graphs [graph_begin, graph_end) (operator rows [row_begin, row_end)) and the channel
// block starting at channel `c0` with `width` <= kBlock channels.
struct Task {
  Index graph_begin, graph_end;
  Index row_begin, row_end;
  Index c0, width;
};

template <typename T>
struct Workspace {
  // rows x kVecs vectors each (64-byte aligned): T_0 (then T_2, T_4, ...), T_1 (T_3, ...), Y.
  std::vector<Vec<T>> x, a, y;
  void ensure(Index rows) {
    const std::size_t size = static_cast<std::size_t>(rows) * kVecs;
    if (x.size() < size) {
      x.resize(size);
      a.resize(size);
      y.resize(size);
    }
  }
  T* row(std::vector<Vec<T>>& buffer, Index r) {
    return reinterpret_cast<T*>(buffer.data() + static_cast<std::size_t>(r) * kVecs);
  }
};

// Runs the whole recurrence of one task. Called by one thread alone (part = 0, parts = 1), or by
// every thread of a team with its share `part` of `parts` (then each step ends at a barrier, and
// the workspace is shared).
template <typename T>
void run_task(detail::RecurrenceRowsFn<T> recurrence_rows,
              const Task& task,
              const CsrMatrix<double>& op,
              const Offset* entry_bytes,
              const T* values,
              const std::vector<Offset>& node_offsets,
              const std::vector<double>& weights,
              Index seq_len,
              Index channels,
              const T* x,
              T* y,
              Workspace<T>& ws,
              int part,
              int parts) {
  constexpr int kW = kBlock<T>;
  const Index rows = task.row_end - task.row_begin;
  const Index lo = task.row_begin + static_cast<Index>(static_cast<Offset>(rows) * part / parts);
  const Index hi =
      task.row_begin + static_cast<Index>(static_cast<Offset>(rows) * (part + 1) / parts);
  const auto sync = [parts] {
    if (parts > 1) {
#pragma omp barrier
    }
  };
  // Unpad: gather this part's rows of the channel block (zero beyond `width`), Y = w_0 X.
  const T w0 = compute_weight<T>(weights[0]);
  for (Index b = task.graph_begin; b < task.graph_end; ++b) {
    const Index first = std::max<Index>(lo, static_cast<Index>(node_offsets[b]));
    const Index last = std::min<Index>(hi, static_cast<Index>(node_offsets[b + 1]));
    for (Index r = first; r < last; ++r) {
      const Index i = r - static_cast<Index>(node_offsets[b]);
      const T* src = x + (static_cast<std::size_t>(b) * seq_len + i) * channels + task.c0;
      T* xr = ws.row(ws.x, r - task.row_begin);
      T* yr = ws.row(ws.y, r - task.row_begin);
      for (int c = 0; c < kW; ++c) {
        xr[c] = c < task.width ? src[c] : T(0);
        yr[c] = w0 * xr[c];
      }
    }
  }
  const int order = static_cast<int>(weights.size()) - 1;
  if (order >= 1) {
    sync();
    recurrence_rows(op.row_offsets.data(),
                    entry_bytes,
                    values,
                    node_offsets.data(),
                    task.graph_begin,
                    task.graph_end,
                    lo,
                    hi,
                    task.row_begin,
                    as_scalars<T>(ws.x.data()),
                    nullptr,
                    as_scalars<T>(ws.a.data()),
                    as_scalars<T>(ws.y.data()),
                    compute_weight<T>(weights[1]));
  }
  // T_{k-2} and T_{k-1}. X (= T_0) is last needed by step 2, which overwrites it with T_2 row by
  // row, so two buffers carry the whole recurrence.
  Vec<T>* prev = ws.x.data();
  Vec<T>* cur = ws.a.data();
  for (int k = 2; k <= order; ++k) {
    sync();
    recurrence_rows(op.row_offsets.data(),
                    entry_bytes,
                    values,
                    node_offsets.data(),
                    task.graph_begin,
                    task.graph_end,
                    lo,
                    hi,
                    task.row_begin,
                    as_scalars<T>(cur),
                    as_scalars<T>(prev),
                    nullptr,
                    as_scalars<T>(ws.y.data()),
                    compute_weight<T>(weights[k]));
    std::swap(prev, cur);
  }
  // Repad: write this part's rows of the channel block; padding rows of the task's graphs are
  // zeroed by the part that owns the graph's last row range (any single owner would do).
  for (Index b = task.graph_begin; b < task.graph_end; ++b) {
    const Index first = std::max<Index>(lo, static_cast<Index>(node_offsets[b]));
    const Index last = std::min<Index>(hi, static_cast<Index>(node_offsets[b + 1]));
    for (Index r = first; r < last; ++r) {
      const Index i = r - static_cast<Index>(node_offsets[b]);
      T* dst = y + (static_cast<std::size_t>(b) * seq_len + i) * channels + task.c0;
      const T* yr = ws.row(ws.y, r - task.row_begin);
      std::memcpy(dst, yr, static_cast<std::size_t>(task.width) * sizeof(T));
    }
  }
  for (Index b = task.graph_begin + part; b < task.graph_end; b += parts) {
    const Index n = static_cast<Index>(node_offsets[b + 1] - node_offsets[b]);
    for (Index i = n; i < seq_len; ++i) {
      T* dst = y + (static_cast<std::size_t>(b) * seq_len + i) * channels + task.c0;
      std::memset(dst, 0, static_cast<std::size_t>(task.width) * sizeof(T));
    }
  }
}

}  // namespace

template <typename T>
void HeatDiffusion::apply_impl(std::span<const T> x, Index channels, std::span<T> y) const {
  constexpr int kW = kBlock<T>;
  const Index batch = num_graphs();
  GW_CHECK(channels >= 1, "HeatDiffusion::apply: channels must be >= 1, got " << channels);
  const std::size_t expected = static_cast<std::size_t>(batch) * seq_len_ * channels;
  GW_CHECK(x.size() == expected,
           "HeatDiffusion::apply: x holds " << x.size() << " values; [B, S, C] = [" << batch << ", "
                                            << seq_len_ << ", " << channels << "] needs "
                                            << expected);
  GW_CHECK(y.size() == expected,
           "HeatDiffusion::apply: y holds " << y.size() << " values; it needs " << expected);
  GW_CHECK(expected == 0 || x.data() + x.size() <= y.data() || y.data() + y.size() <= x.data(),
           "HeatDiffusion::apply: x and y overlap; give y its own buffer");
  if (expected == 0) return;
  const T* values = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    values = values_f32_.data();
  } else {
    values = op_.values.data();
  }
  const int threads = resolve_threads(options_.threads);
  const Index blocks = (channels + kW - 1) / kW;
  const Index total_rows = num_nodes();

  // Group consecutive graphs into tiles of about `target` rows: small enough for the cache,
  // and at least ~4 tasks per thread when the batch allows it.
  const Index cache_rows = static_cast<Index>(kTileBytes / (4 * kW * sizeof(T)));
  const Offset balanced = (static_cast<Offset>(total_rows) * blocks + 4 * threads - 1) /
                          (4 * static_cast<Offset>(threads));
  const Index target = static_cast<Index>(std::clamp<Offset>(balanced, 1, cache_rows));
  std::vector<Task> tasks;
  Index max_rows = 0;
  for (Index g0 = 0; g0 < batch;) {
    Index g1 = g0 + 1;
    while (g1 < batch && node_offsets_[g1] - node_offsets_[g0] < target &&
           node_offsets_[g1 + 1] - node_offsets_[g0] <= target) {
      ++g1;
    }
    const Index r0 = static_cast<Index>(node_offsets_[g0]);
    const Index r1 = static_cast<Index>(node_offsets_[g1]);
    max_rows = std::max(max_rows, r1 - r0);
    for (Index blk = 0; blk < blocks; ++blk) {
      const Index c0 = blk * kW;
      tasks.push_back({g0, g1, r0, r1, c0, std::min<Index>(kW, channels - c0)});
    }
    g0 = g1;
  }

  const detail::RecurrenceRowsFn<T> recurrence_rows =
      detail::diffusion_kernels().recurrence_rows<T>();
  const auto run = [&](const Task& task, Workspace<T>& ws, int part, int parts) {
    run_task<T>(recurrence_rows,
                task,
                op_,
                entry_bytes_.data(),
                values,
                node_offsets_,
                weights_,
                seq_len_,
                channels,
                x.data(),
                y.data(),
                ws,
                part,
                parts);
  };
  // A few small tasks (one graph of a few hundred nodes) run on the calling thread: splitting
  // them across a team costs a barrier per Chebyshev step, which is cheap on an idle machine but
  // costs up to a scheduler time slice whenever another process holds a core.
  const double macs = static_cast<double>(weights_.size() - 1) * static_cast<double>(op_.nnz()) *
                      static_cast<double>(channels);
  if (static_cast<Offset>(tasks.size()) < threads && macs < kTeamMinMultiplyAdds) {
    Workspace<T> ws;
    ws.ensure(max_rows);
    for (const Task& task : tasks) {
      run(task, ws, 0, 1);
    }
    return;
  }
  if (static_cast<Offset>(tasks.size()) >= threads) {
#pragma omp parallel num_threads(threads)
    {
      Workspace<T> ws;
      ws.ensure(max_rows);
#pragma omp for schedule(dynamic, 1)
      for (std::size_t t = 0; t < tasks.size(); ++t) {
        run(tasks[t], ws, 0, 1);
      }
    }
    return;
  }
  // Fewer tasks than threads (e.g. one graph): the team splits each product's rows.
  Workspace<T> ws;
  ws.ensure(max_rows);
#pragma omp parallel num_threads(threads)
  {
    const int part = omp_get_thread_num();
    const int parts = omp_get_num_threads();
    for (const Task& task : tasks) {
      run(task, ws, part, parts);
#pragma omp barrier
    }
  }
}

void HeatDiffusion::apply(std::span<const float> x, Index channels, std::span<float> y) const {
  apply_impl<float>(x, channels, y);
}

void HeatDiffusion::apply(std::span<const double> x, Index channels, std::span<double> y) const {
  apply_impl<double>(x, channels, y);
}

void diffuse_batch(const DiffusionGraphs& graphs,
                   std::span<const float> x,
                   Index seq_len,
                   Index channels,
                   std::span<float> y,
                   const DiffusionOptions& options) {
  HeatDiffusion(graphs, seq_len, options).apply(x, channels, y);
}

void diffuse_batch(const DiffusionGraphs& graphs,
                   std::span<const double> x,
                   Index seq_len,
                   Index channels,
                   std::span<double> y,
                   const DiffusionOptions& options) {
  HeatDiffusion(graphs, seq_len, options).apply(x, channels, y);
}

}  // namespace gw
