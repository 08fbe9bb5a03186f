// The sparse-support solve path (see sparse_impl.h for the levels).
//
// Support buffers per entry: column index 4 B, cost 4 B (float32), plan 8 B (float64), transpose
// 12 B (entry position + row); a re-growth builds the new column and plan arrays beside the old
// ones. Per iteration with M anchors: the provider queries ((n + k) M output), the cost on the
// support (nnz M multiply-adds: each entry's dot product of its row's and column's anchor
// distances), a few Sinkhorn iterations (two exponentials per entry each) and the momentum pass.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>

#include <omp.h>

#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sampling/sampling.h"
#include "sinkhorn/sparse_sinkhorn.h"
#include "solver/sampled/loop_driver_impl.h"
#include "solver/solve.h"
#include "solver/sparse/sparse_impl.h"

namespace gw::detail {

namespace {

constexpr Index kMaxAutoCells = 2000;
// Cells of the target a re-grown row draws from: its best match's cell and the nearest ones.
constexpr int kNeighbourCells = 6;
// Every kBackboneStride-th entry of a row's starting support stays in it at every re-growth.
constexpr int kBackboneStride = 4;
// Share of a source cell's coarse-plan mass whose target cells enter its nodes' supports.
constexpr double kCoarseMassShare = 0.95;
// The fine level's stopping tests start after this many iterations, with at least this patience
// (see run_sparse_solve).
constexpr int kFineMinIterations = 10;
constexpr int kFinePatience = 5;
// Marginal scaling of the returned plan: at least kMinScaleSweeps sweeps, then stop once a sweep
// takes less than 1 - kScaleStall off the column error.
constexpr int kMinScaleSweeps = 10;
constexpr double kScaleStall = 0.99;
// Inner Sinkhorn iterations of the fine level's polishing iterations at most: the marginal
// scaling after the loop puts the rows on their marginals exactly, so the polishing solves need
// not (each of the 100 default iterations costs two exponentials per support entry).
constexpr int kFinePolishSinkhorn = 20;
// Provider output per quantization block.
constexpr std::size_t kQuantizeBlockBytes = std::size_t{64} << 20;
// Anchors per block of the loss estimate (n x block floats at a time).
constexpr int kLossBlock = 64;

// Row i's candidate list -> CSR, then every column no row reaches is attached to `cover_row(j)`
// (so the balanced Sinkhorn problem is feasible). `lists` is n x width, unused slots -1; values
// (same layout) are the starting plan entries.
SupportPlan build_support(Index n,
                          Index k,
                          int width,
                          const std::vector<Index>& lists,
                          const std::vector<double>& values,
                          const std::function<Index(Index)>& cover_row) {
  std::vector<char> reached(k, 0);
  for (Index c : lists)
    if (c >= 0) reached[c] = 1;
  std::vector<std::pair<Index, Index>> extra;  // (row, column), grouped by row below
  for (Index j = 0; j < k; ++j)
    if (!reached[j]) extra.emplace_back(cover_row(j), j);
  std::sort(extra.begin(), extra.end());
  SupportPlan s;
  s.n = n;
  s.k = k;
  s.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (Index i = 0; i < n; ++i) {
    Offset count = 0;
    for (int t = 0; t < width; ++t) count += lists[static_cast<std::size_t>(i) * width + t] >= 0;
    s.offsets[i + 1] = count;
  }
  for (const auto& [i, j] : extra) ++s.offsets[i + 1];
  for (Index i = 0; i < n; ++i) s.offsets[i + 1] += s.offsets[i];
  s.cols.resize(s.offsets[n]);
  s.values.resize(s.offsets[n]);
  // Rows are filled independently (each owns its range of the arrays); a row's extras are the
  // run of `extra` (sorted by row) that starts at its lower bound.
#pragma omp parallel
  {
    std::vector<std::pair<Index, double>> row;
#pragma omp for schedule(dynamic, 1024)
    for (Index i = 0; i < n; ++i) {
      row.clear();
      for (int t = 0; t < width; ++t) {
        const std::size_t at = static_cast<std::size_t>(i) * width + t;
        if (lists[at] >= 0) row.emplace_back(lists[at], values[at]);
      }
      auto e = std::lower_bound(extra.begin(), extra.end(), std::make_pair(i, Index{-1}));
      for (; e != extra.end() && e->first == i; ++e) row.emplace_back(e->second, 0.0);
      std::sort(row.begin(), row.end());
      Offset at = s.offsets[i];
      for (const auto& [j, v] : row) {
        s.cols[at] = j;
        s.values[at] = v;
        ++at;
      }
    }
  }
  s.transpose = transpose_support(s.view());
  return s;
}

// Cells as CSR (members of each cell, shuffled so that a prefix is a random subset), and each
// cell's nearest cells by pick distance.
struct CellIndex {
  std::vector<Offset> offsets;
  std::vector<Index> members;
  std::vector<Index> neighbours;  // cells x kNeighbourCells (the cell itself first), -1 padded
};

CellIndex index_cells(const Quantization& q, Index n, Rng& rng) {
  CellIndex index;
  index.offsets.assign(static_cast<std::size_t>(q.cells) + 1, 0);
  for (Index i = 0; i < n; ++i) ++index.offsets[q.cell[i] + 1];
  for (Index c = 0; c < q.cells; ++c) index.offsets[c + 1] += index.offsets[c];
  index.members.resize(n);
  std::vector<Offset> next(index.offsets.begin(), index.offsets.end() - 1);
  for (Index i = 0; i < n; ++i) index.members[next[q.cell[i]]++] = i;
  for (Index c = 0; c < q.cells; ++c) {
    rng.shuffle(std::span<Index>(index.members.data() + index.offsets[c],
                                 index.offsets[c + 1] - index.offsets[c]));
  }
  index.neighbours.assign(static_cast<std::size_t>(q.cells) * kNeighbourCells, -1);
#pragma omp parallel
  {
    std::vector<Index> order(q.cells);
#pragma omp for schedule(static)
    for (Index c = 0; c < q.cells; ++c) {
      std::iota(order.begin(), order.end(), 0);
      const float* d = &q.distances[static_cast<std::size_t>(c) * q.cells];
      const int count = std::min<Index>(kNeighbourCells, q.cells);
      std::partial_sort(order.begin(), order.begin() + count, order.end(), [&](Index a, Index b) {
        // The cell itself first (distance 0), then nearest, ties by id.
        const float da = a == c ? -1.0f : d[a], db = b == c ? -1.0f : d[b];
        return da < db || (da == db && a < b);
      });
      for (int t = 0; t < count; ++t)
        index.neighbours[static_cast<std::size_t>(c) * kNeighbourCells + t] = order[t];
    }
  }
  return index;
}

// Anchor pairs from a CSR plan with the dense sampler's conventions (sampling.h): rows by the
// cumulative row masses, then the column by a scan of the row's cumulative entries, from the same
// uniforms (rows first). In two steps, so that a plan kept elsewhere (on a device) needs to
// provide only the sampled rows' values: sample_rows fills pairs.rows, sample_columns takes the
// values of those rows, concatenated in anchor order (row_values_of), and fills pairs.cols.
AnchorPairs sample_rows(const SupportPlan& s,
                        std::span<const double> row_mass,
                        std::span<const double> uniforms) {
  const int m = static_cast<int>(uniforms.size() / 2);
  std::vector<double> cumulative(s.n);
  double total = 0.0;
  for (Index i = 0; i < s.n; ++i) cumulative[i] = (total += row_mass[i]);
  GW_CHECK_CODE(total > 0.0, ErrorCode::kBadData, "the sparse plan has no mass to sample from");
  AnchorPairs pairs;
  pairs.rows.resize(m);
  pairs.cols.resize(m);
  for (int t = 0; t < m; ++t) {
    const double target = uniforms[t] * total;
    Index i = static_cast<Index>(std::upper_bound(cumulative.begin(), cumulative.end(), target) -
                                 cumulative.begin());
    i = std::min(i, s.n - 1);
    while (i > 0 && row_mass[i] <= 0.0) --i;  // never land on an empty row
    pairs.rows[t] = i;
  }
  return pairs;
}

// The plan values of rows[0], rows[1], ... concatenated (each row's entries in CSR order).
std::vector<double> row_values_of(const SupportPlan& s, std::span<const Index> rows) {
  std::vector<double> values;
  for (Index i : rows) {
    values.insert(
        values.end(), s.values.begin() + s.offsets[i], s.values.begin() + s.offsets[i + 1]);
  }
  return values;
}

void sample_columns(const SupportPlan& s,
                    std::span<const double> uniforms,
                    std::span<const double> values,
                    AnchorPairs& pairs) {
  const int m = static_cast<int>(uniforms.size() / 2);
  std::size_t at = 0;  // anchor t's row starts at values[at]
  for (int t = 0; t < m; ++t) {
    const Index i = pairs.rows[t];
    const Offset begin = s.offsets[i], len = s.offsets[i + 1] - begin;
    const double* row = values.data() + at;
    at += static_cast<std::size_t>(len);
    double sum = 0.0;
    for (Offset e = 0; e < len; ++e) sum += row[e];
    const double u = uniforms[m + t] * sum;
    double acc = 0.0;
    Index j = len > 0 ? s.cols[begin + len - 1] : 0;
    for (Offset e = 0; e < len; ++e) {
      acc += row[e];
      if (u < acc) {
        j = s.cols[begin + e];
        break;
      }
    }
    pairs.cols[t] = j;
  }
}

AnchorPairs sample_support(const SupportPlan& s,
                           std::span<const double> row_mass,
                           std::span<const double> uniforms) {
  AnchorPairs pairs = sample_rows(s, row_mass, uniforms);
  sample_columns(s, uniforms, row_values_of(s, pairs.rows), pairs);
  return pairs;
}

// The support kernels on the CPU: OpenMP loops over the rows, sparse_sinkhorn and
// sparse_plan_momentum on the host support; the plan lives in support.values.
class CpuSupportKernels final : public SupportKernels {
 public:
  CpuSupportKernels(const PreparedProblem& pb, const Options& options)
      : pb_(pb), opt_(options), xn_(pb.n), yn_(pb.k), f_(pb.n, 0.0), g_(pb.k, 0.0) {}

  void set_support(SupportPlan& support) override {
    s_ = &support;
    cost_.assign(support.nnz(), 0.0f);
  }

  // Lambda_e = mean_t dx_it^2 + mean_t dy_jt^2 - (2 / M) sum_t dx_it dy_jt on each entry e = (i, j)
  // (the dense loop's cost, evaluated only where the support is), blended with the feature cost
  // when fused_weight > 0.
  void build_cost(std::span<const float> dx, std::span<const float> dy, int m) override {
    const Index n = pb_.n, k = pb_.k;
    const SupportPlan& s = *s_;
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const float* x = &dx[static_cast<std::size_t>(i) * m];
      float sum = 0.0f;
      for (int t = 0; t < m; ++t) sum += x[t] * x[t];
      xn_[i] = sum / static_cast<float>(m);
    }
#pragma omp parallel for schedule(static)
    for (Index j = 0; j < k; ++j) {
      const float* y = &dy[static_cast<std::size_t>(j) * m];
      float sum = 0.0f;
      for (int t = 0; t < m; ++t) sum += y[t] * y[t];
      yn_[j] = sum / static_cast<float>(m);
    }
    const float scale = -2.0f / static_cast<float>(m);
    const double alpha_f = opt_.fused_weight;
    const DenseMatrix<double>* feature = alpha_f > 0.0 ? pb_.feature_cost : nullptr;
#pragma omp parallel for schedule(dynamic, 256)
    for (Index i = 0; i < n; ++i) {
      const float* x = &dx[static_cast<std::size_t>(i) * m];
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
        const Index j = s.cols[e];
        const float* y = &dy[static_cast<std::size_t>(j) * m];
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int t = 0; t < m; ++t) dot += x[t] * y[t];
        float value = xn_[i] + yn_[j] + scale * dot;
        if (feature != nullptr) {
          value = static_cast<float>((1.0 - alpha_f) * value + alpha_f * (*feature)(i, j));
        }
        cost_[e] = value;
      }
    }
  }

  SinkhornResult sinkhorn(double epsilon, const SinkhornOptions& options) override {
    return sparse_sinkhorn(
        s_->view(), s_->transpose, cost_, pb_.p, pb_.q, epsilon, f_, g_, options);
  }

  void plan_momentum(double epsilon, double alpha, std::span<PlanBlendStats> stats) override {
    sparse_plan_momentum(
        s_->view(), cost_, f_, g_, epsilon, s_->values, alpha, stats, opt_.threads);
  }

  void plan_rows(const SupportPlan& support,
                 std::span<const Index> rows,
                 std::vector<double>& values) override {
    values = row_values_of(support, rows);
  }

  void sync_plan(SupportPlan&) override {}

  void release() override { std::vector<float>().swap(cost_); }

 private:
  const PreparedProblem& pb_;
  const Options& opt_;
  SupportPlan* s_ = nullptr;
  std::vector<float> xn_, yn_, cost_;
  std::vector<double> f_, g_;
};

// The loop backend on the support (the interface run_gw_iterations drives): sampling and
// re-growth here, the per-entry arithmetic in the SupportKernels of options.backend.
class SparseLoop {
 public:
  SparseLoop(const PreparedProblem& pb,
             const Options& options,
             SupportPlan support,
             const Quantization& target_cells,
             const CellIndex& target_index,
             std::vector<Index> backbone)
      : pb_(pb),
        opt_(options),
        s_(std::move(support)),
        backbone_(std::move(backbone)),
        target_cells_(target_cells),
        target_index_(target_index),
        m_max_(options.max_anchors(pb.n, pb.k)) {
    kernels_ = options.backend == Backend::kCuda ? make_cuda_support_kernels(pb, options)
                                                 : std::make_unique<CpuSupportKernels>(pb, options);
    dx_.resize(static_cast<std::size_t>(pb.n) * m_max_);
    dy_.resize(static_cast<std::size_t>(pb.k) * m_max_);
    stats_.resize(pb.n);
    row_mass_.assign(pb.n, 0.0);
    for (Index i = 0; i < pb.n; ++i)
      for (Offset e = s_.offsets[i]; e < s_.offsets[i + 1]; ++e) row_mass_[i] += s_.values[e];
    kernels_->set_support(s_);
    sinkhorn_options_.rho_a = options.rho_a;
    sinkhorn_options_.rho_b = options.rho_b;
    sinkhorn_options_.check_every = options.sinkhorn_check_every;
    sinkhorn_options_.threads = options.threads;
  }

  // Rows on the host from the row masses of the last step; the columns from the sampled rows'
  // plan values, which the kernels provide (a device copies only those rows back).
  AnchorPairs sample(std::span<const double> uniforms) {
    AnchorPairs pairs = sample_rows(s_, row_mass_, uniforms);
    kernels_->plan_rows(s_, pairs.rows, sampled_values_);
    sample_columns(s_, uniforms, sampled_values_, pairs);
    return pairs;
  }
  std::span<float> source_block(int m) {
    return std::span<float>(dx_).first(static_cast<std::size_t>(pb_.n) * m);
  }
  std::span<float> target_block(int m) {
    return std::span<float>(dy_).first(static_cast<std::size_t>(pb_.k) * m);
  }

  void build_cost(int m, bool precise) {
    precise_ = precise;
    kernels_->build_cost(source_block(m), target_block(m), m);
  }

  SinkhornResult sinkhorn(double epsilon, int max_iterations, double tolerance) {
    SinkhornOptions inner = sinkhorn_options_;
    inner.max_iterations = max_iterations;
    inner.tolerance = tolerance;
    return kernels_->sinkhorn(epsilon, inner);
  }

  IterationTotals plan_and_blend(double epsilon) {
    kernels_->plan_momentum(epsilon, opt_.momentum, stats_);
    IterationTotals totals;
    for (Index i = 0; i < pb_.n; ++i) {
      totals.error += stats_[i].change_sq;
      totals.cost += stats_[i].cost;
      row_mass_[i] = stats_[i].mass;
    }
    totals.error = std::sqrt(totals.error);
    ++iterations_;
    // Polishing iterations (precise costs) keep their support: they finish the plan, and a
    // re-growth would put fresh zero entries into it.
    if (opt_.support_regrow_every > 0 && !precise_ &&
        iterations_ % opt_.support_regrow_every == 0) {
      regrow();
      ++regrowths_;
    }
    return totals;
  }

  // The support with its current plan values.
  SupportPlan& support() {
    kernels_->sync_plan(s_);
    return s_;
  }
  int regrowths() const { return regrowths_; }
  void release_buffers() {
    kernels_->sync_plan(s_);
    kernels_->release();
    std::vector<float>().swap(dx_);
    std::vector<float>().swap(dy_);
    s_.transpose = SupportTranspose{};
  }

 private:
  // Each row keeps its heaviest half (by current plan mass) and fills the rest from its best
  // match's cell and that cell's nearest cells; kept entries keep their values, new ones start at
  // 0 and get mass from the next blend.
  void regrow() {
    kernels_->sync_plan(s_);
    const Index n = pb_.n, k = pb_.k;
    const int width = opt_.support_size;
    const int keep = width / 2;
    std::vector<Index> lists(static_cast<std::size_t>(n) * width, -1);
    std::vector<double> values(lists.size(), 0.0);
    std::vector<Index> best(n, -1);
#pragma omp parallel
    {
      std::vector<Offset> order;
#pragma omp for schedule(dynamic, 256)
      for (Index i = 0; i < n; ++i) {
        const Offset begin = s_.offsets[i], size = s_.offsets[i + 1] - begin;
        order.resize(size);
        std::iota(order.begin(), order.end(), begin);
        const Offset kept = std::min<Offset>(keep, size);
        std::partial_sort(
            order.begin(), order.begin() + kept, order.end(), [&](Offset a, Offset b) {
              return s_.values[a] > s_.values[b] || (s_.values[a] == s_.values[b] && a < b);
            });
        Index* row = &lists[static_cast<std::size_t>(i) * width];
        double* vals = &values[static_cast<std::size_t>(i) * width];
        int count = 0;
        for (Offset t = 0; t < kept; ++t) {
          if (s_.values[order[t]] <= 0.0 && t > 0) break;
          vals[count] = s_.values[order[t]];
          row[count++] = s_.cols[order[t]];
        }
        if (count == 0) continue;
        best[i] = row[0];
        // The backbone: a fixed share of the starting support, whose slots follow the coarse
        // plan and cover every target cell in proportion to it, so that the support stays
        // (nearly) feasible whatever the rows' best matches are.
        const int backbone_width = static_cast<int>(backbone_.size() / std::max<Index>(n, 1));
        for (int t = 0; t < backbone_width && count < width; ++t) {
          const Index j = backbone_[static_cast<std::size_t>(i) * backbone_width + t];
          if (j < 0 || std::find(row, row + count, j) != row + count) continue;
          row[count++] = j;
        }
        // The free slots go round-robin over the best match's cell and its nearest cells, one
        // member each turn (each cell from a row-dependent start), so that every cell near some
        // row's best match is reached by many rows (which keeps the balanced problem feasible)
        // and a row can move to a neighbouring cell.
        const Index home = target_cells_.cell[row[0]];
        const Index* near =
            &target_index_.neighbours[static_cast<std::size_t>(home) * kNeighbourCells];
        Offset cursor[kNeighbourCells] = {};
        bool progress = true;
        while (count < width && progress) {
          progress = false;
          for (int c = 0; c < kNeighbourCells && count < width; ++c) {
            const Index cell = near[c];
            if (cell < 0) break;
            const Offset begin = target_index_.offsets[cell];
            const Offset size = target_index_.offsets[cell + 1] - begin;
            const Offset start =
                (static_cast<Offset>(i) * 2654435761LL) % std::max<Offset>(size, 1);
            while (cursor[c] < size) {
              const Index j = target_index_.members[begin + (start + cursor[c]++) % size];
              if (std::find(row, row + count, j) != row + count) continue;
              row[count++] = j;
              progress = true;
              break;
            }
          }
        }
      }
    }
    // A column left uncovered goes to one of the rows whose best match lies in its cell (spread
    // over them by column id, so that no row must carry many such columns), else to a row spread
    // by column id.
    const Index cells = target_cells_.cells;
    std::vector<Offset> owner_offsets(static_cast<std::size_t>(cells) + 1, 0);
    for (Index i = 0; i < n; ++i)
      if (best[i] >= 0) ++owner_offsets[target_cells_.cell[best[i]] + 1];
    for (Index c = 0; c < cells; ++c) owner_offsets[c + 1] += owner_offsets[c];
    std::vector<Index> owners(owner_offsets[cells]);
    {
      std::vector<Offset> next(owner_offsets.begin(), owner_offsets.end() - 1);
      for (Index i = 0; i < n; ++i)
        if (best[i] >= 0) owners[next[target_cells_.cell[best[i]]]++] = i;
    }
    auto cover = [&](Index j) {
      const Index c = target_cells_.cell[j];
      const Offset size = owner_offsets[c + 1] - owner_offsets[c];
      return size > 0 ? owners[owner_offsets[c] + j % size]
                      : static_cast<Index>((static_cast<Offset>(j) * n) / k);
    };
    s_ = SupportPlan{};  // free the old support before the transpose of the new one is built
    s_ = build_support(n, k, width, lists, values, cover);
    kernels_->set_support(s_);
    for (Index i = 0; i < n; ++i) {
      row_mass_[i] = 0.0;
      for (Offset e = s_.offsets[i]; e < s_.offsets[i + 1]; ++e) row_mass_[i] += s_.values[e];
    }
  }

  const PreparedProblem& pb_;
  const Options& opt_;
  SupportPlan s_;
  std::vector<Index> backbone_;  // n x (support_size / kBackboneStride), -1 padded
  const Quantization& target_cells_;
  const CellIndex& target_index_;
  const int m_max_;
  std::unique_ptr<SupportKernels> kernels_;
  SinkhornOptions sinkhorn_options_;
  std::vector<float> dx_, dy_;
  std::vector<double> row_mass_, sampled_values_;
  std::vector<PlanBlendStats> stats_;
  bool precise_ = false;
  int iterations_ = 0;
  int regrowths_ = 0;
};

// Sinkhorn-Knopp scaling of the support's entries towards (p, q): stop when the column L1 error
// after a row pass is below `tolerance`, and end on a row pass either way, so the rows are exact
// (to rounding) and the columns carry what is left when the support is (nearly) infeasible.
// Column sums are per-thread partial arrays added in thread order.
void scale_support(SupportPlan& s,
                   std::span<const double> p,
                   std::span<const double> q,
                   double tolerance,
                   int max_sweeps) {
  std::vector<double> col(s.k);
  auto row_pass = [&] {
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < s.n; ++i) {
      double mass = 0.0;
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) mass += s.values[e];
      if (mass <= 0.0) continue;
      const double scale = p[i] / mass;
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) s.values[e] *= scale;
    }
  };
  auto column_sums = [&] {
    std::fill(col.begin(), col.end(), 0.0);
#pragma omp parallel
    {
      std::vector<double> local(s.k, 0.0);
#pragma omp for schedule(static) nowait
      for (Offset e = 0; e < s.nnz(); ++e) local[s.cols[e]] += s.values[e];
#pragma omp for ordered schedule(static, 1)
      for (int thread = 0; thread < omp_get_num_threads(); ++thread) {
#pragma omp ordered
        for (Index j = 0; j < s.k; ++j) col[j] += local[j];
      }
    }
  };
  double previous = std::numeric_limits<double>::infinity();
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    row_pass();
    column_sums();
    double error = 0.0;
    for (Index j = 0; j < s.k; ++j) error += std::abs(col[j] - q[j]);
    // Converged, or stalled: on a (nearly) infeasible support the error settles at what the
    // support cannot carry, and further sweeps only cost time.
    if (error < tolerance || (sweep >= kMinScaleSweeps && error > kScaleStall * previous)) break;
    previous = error;
#pragma omp parallel for schedule(static)
    for (Offset e = 0; e < s.nnz(); ++e) {
      const double c = col[s.cols[e]];
      if (c > 0.0) s.values[e] *= q[s.cols[e]] / c;
    }
  }
  row_pass();
}

// The loss estimator of estimate_gw_loss (solve.h) on a CSR plan: the same pairs for the same
// plan (dense sampler conventions) and the same scale (each side's distances divided by the
// largest finite distance of all P anchors' columns). The queries run in blocks of kLossBlock
// anchors, so the output stays at (n + k) x kLossBlock floats; each anchor keeps its three sums
// in raw units (r . dx^2, c . dy^2, dx . T dy) and the scale is applied once all blocks are seen.
// Unreachable entries (+inf) count as 1.5 x the largest finite distance as in the dense
// estimator; in the cross term they take 1.5 x their own block's largest distance (the only
// difference from the dense estimator, and only for disconnected inputs).
LossEstimate estimate_support_loss(const PreparedProblem& pb,
                                   const SupportPlan& s,
                                   int anchors,
                                   std::uint64_t seed) {
  Rng rng(seed, /*stream=*/2);
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, anchors);
  std::vector<double> r(s.n, 0.0), c(s.k, 0.0);
  for (Index i = 0; i < s.n; ++i)
    for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
      r[i] += s.values[e];
      c[s.cols[e]] += s.values[e];
    }
  const double mass = std::accumulate(r.begin(), r.end(), 0.0);
  const AnchorPairs pairs = sample_support(s, r, uniforms);
  // Per anchor: finite and unreachable parts of r . dx^2 and c . dy^2, and the cross sum.
  std::vector<double> ax(anchors), ax_inf(anchors), by(anchors), by_inf(anchors), cross(anchors);
  double max_x = 0.0, max_y = 0.0;
  std::vector<float> dx, dy;
  for (int start = 0; start < anchors; start += kLossBlock) {
    const int b = std::min(kLossBlock, anchors - start);
    dx.resize(static_cast<std::size_t>(s.n) * b);
    dy.resize(static_cast<std::size_t>(s.k) * b);
    pb.source->distances_to(std::span<const Index>(pairs.rows.data() + start, b), dx);
    pb.target->distances_to(std::span<const Index>(pairs.cols.data() + start, b), dy);
    double bx = 0.0, by_max = 0.0;
    for (float v : dx)
      if (std::isfinite(v)) bx = std::max<double>(bx, v);
    for (float v : dy)
      if (std::isfinite(v)) by_max = std::max<double>(by_max, v);
    max_x = std::max(max_x, bx);
    max_y = std::max(max_y, by_max);
    const double fill_x = 1.5 * bx, fill_y = 1.5 * by_max;
    // All b anchors of the block at once, row by row: a row's entries gather their columns' b
    // contiguous distances (vectorized over the anchors) instead of one strided float per anchor
    // and entry. Per-thread sums are added in thread order, so the value depends on the thread
    // count only through rounding.
    std::vector<double> fx(b, 0.0), ix(b, 0.0), fy(b, 0.0), iy(b, 0.0), cr(b, 0.0);
#pragma omp parallel
    {
      std::vector<double> lfx(b, 0.0), lix(b, 0.0), lfy(b, 0.0), liy(b, 0.0), lcr(b, 0.0);
      std::vector<double> x(b), ty(b);
#pragma omp for schedule(static) nowait
      for (Index i = 0; i < s.n; ++i) {
        const float* row = &dx[static_cast<std::size_t>(i) * b];
        for (int t = 0; t < b; ++t) {
          const bool finite = std::isfinite(row[t]);
          x[t] = finite ? row[t] : fill_x;
          lfx[t] += finite ? r[i] * x[t] * x[t] : 0.0;
          lix[t] += finite ? 0.0 : r[i];
          ty[t] = 0.0;
        }
        for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
          const float* col = &dy[static_cast<std::size_t>(s.cols[e]) * b];
          const double w = s.values[e];
#pragma omp simd
          for (int t = 0; t < b; ++t) ty[t] += w * (std::isfinite(col[t]) ? col[t] : fill_y);
        }
#pragma omp simd
        for (int t = 0; t < b; ++t) lcr[t] += x[t] * ty[t];
      }
#pragma omp for schedule(static)
      for (Index j = 0; j < s.k; ++j) {
        const float* col = &dy[static_cast<std::size_t>(j) * b];
        for (int t = 0; t < b; ++t) {
          const bool finite = std::isfinite(col[t]);
          lfy[t] += finite ? c[j] * static_cast<double>(col[t]) * col[t] : 0.0;
          liy[t] += finite ? 0.0 : c[j];
        }
      }
#pragma omp for ordered schedule(static, 1)
      for (int thread = 0; thread < omp_get_num_threads(); ++thread) {
#pragma omp ordered
        for (int t = 0; t < b; ++t) {
          fx[t] += lfx[t];
          ix[t] += lix[t];
          fy[t] += lfy[t];
          iy[t] += liy[t];
          cr[t] += lcr[t];
        }
      }
    }
    for (int t = 0; t < b; ++t) {
      ax[start + t] = fx[t];
      ax_inf[start + t] = ix[t];
      by[start + t] = fy[t];
      by_inf[start + t] = iy[t];
      cross[start + t] = cr[t];
    }
  }
  const double sx = max_x > 0.0 ? max_x : 1.0, sy = max_y > 0.0 ? max_y : 1.0;
  std::vector<double> per_anchor(anchors);
  for (int p = 0; p < anchors; ++p) {
    per_anchor[p] = ax[p] / (sx * sx) + 2.25 * ax_inf[p] + by[p] / (sy * sy) + 2.25 * by_inf[p] -
                    2.0 * cross[p] / (sx * sy);
  }
  const double mean = std::accumulate(per_anchor.begin(), per_anchor.end(), 0.0) / anchors;
  double var = 0.0;
  for (double v : per_anchor) var += (v - mean) * (v - mean);
  var = anchors > 1 ? var / (anchors - 1) : 0.0;
  return {mean * mass, std::sqrt(var / anchors) * mass};
}

}  // namespace

Index resolved_support_cells(Index n, Index k, const Options& options) {
  const Index smaller = std::min(n, k);
  Index cells = options.support_cells;
  if (cells == 0) {
    cells = smaller / std::max(1, options.support_size / 2);
    cells = std::clamp<Index>(cells, 2, kMaxAutoCells);
  }
  return std::min(cells, smaller);
}

Quantization quantize(const DistanceProvider& provider,
                      Index cells,
                      std::uint64_t seed,
                      std::uint64_t stream,
                      std::size_t block_bytes) {
  const Index n = provider.num_nodes();
  GW_CHECK(cells >= 1 && cells <= n, "quantize: " << cells << " cells for " << n << " nodes");
  Quantization q;
  q.cells = cells;
  // Picks: the first `cells` entries of a seeded Fisher-Yates shuffle of the node ids.
  Rng rng(seed, stream);
  std::vector<Index> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  for (Index t = 0; t < cells; ++t) {
    const Index swap = t + static_cast<Index>(rng.uniform_index(static_cast<std::uint64_t>(n - t)));
    std::swap(ids[t], ids[swap]);
  }
  q.picks.assign(ids.begin(), ids.begin() + cells);
  std::vector<Index>().swap(ids);
  q.cell.assign(n, 0);
  std::vector<float> nearest(n, std::numeric_limits<float>::infinity());
  q.distances.assign(static_cast<std::size_t>(cells) * cells, 0.0f);
  const Index block =
      std::clamp<Index>(static_cast<Index>(block_bytes / (sizeof(float) * n)), 1, 256);
  std::vector<float> out;
  for (Index start = 0; start < cells; start += block) {
    const Index b = std::min(block, cells - start);
    out.resize(static_cast<std::size_t>(n) * b);
    provider.distances_to(std::span<const Index>(q.picks.data() + start, b), out);
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const float* row = &out[static_cast<std::size_t>(i) * b];
      for (Index t = 0; t < b; ++t) {
        if (row[t] < nearest[i]) {
          nearest[i] = row[t];
          q.cell[i] = start + t;
        }
      }
    }
    for (Index a = 0; a < cells; ++a) {
      const float* row = &out[static_cast<std::size_t>(q.picks[a]) * b];
      for (Index t = 0; t < b; ++t)
        q.distances[static_cast<std::size_t>(a) * cells + start + t] = row[t];
    }
  }
  // A pick is always in its own cell (ties with another pick at distance 0 go to the lower id;
  // such a duplicate's cell is then empty and carries no mass).
  for (Index a = 0; a < cells; ++a) {
    for (Index b = a + 1; b < cells; ++b) {
      float& ab = q.distances[static_cast<std::size_t>(a) * cells + b];
      float& ba = q.distances[static_cast<std::size_t>(b) * cells + a];
      ab = ba = std::min(ab, ba);
    }
    q.distances[static_cast<std::size_t>(a) * cells + a] = 0.0f;
  }
  return q;
}

// The starting support of the sparse path and what its re-growth needs (the target side's cells).
struct SparseStart {
  SupportPlan support;
  std::vector<Index> backbone;
  Quantization target_cells;
  CellIndex target_index;
};

// (1) quantization, (2) the coarse alignment, (3) the starting support.
SparseStart coarse_start(PreparedProblem& pb, const Options& options, Result& result) {
  const Index n = pb.n, k = pb.k;
  // (1) quantization, (2) the coarse alignment.
  const Index cells = resolved_support_cells(n, k, options);
  Quantization src, tgt;
  {
    ScopedPhase phase(result.timings, "quantize");
    src = quantize(*pb.source, cells, options.seed, /*stream=*/5, kQuantizeBlockBytes);
    tgt = quantize(*pb.target, cells, options.seed, /*stream=*/6, kQuantizeBlockBytes);
  }
  std::vector<double> pc(cells, 0.0), qc(cells, 0.0);
  for (Index i = 0; i < n; ++i) pc[src.cell[i]] += pb.p[i];
  for (Index j = 0; j < k; ++j) qc[tgt.cell[j]] += pb.q[j];
  Result coarse;
  {
    ScopedPhase phase(result.timings, "coarse");
    Problem problem;
    problem.source = Geometry::from_distances(DenseMatrix<float>(cells, cells, src.distances));
    problem.target = Geometry::from_distances(DenseMatrix<float>(cells, cells, tgt.distances));
    problem.source_weights = pc;
    problem.target_weights = qc;
    Options coarse_options = options;
    coarse_options.support = Support::kDense;
    coarse_options.compute_gw_loss = options.restarts > 1;  // probes rank by loss
    coarse_options.plan_format = PlanFormat::kDense;
    coarse_options.multiscale = false;
    // The caller's progress callback sees the coarse level as level 1 of 2.
    coarse_options.progress = nullptr;
    if (options.progress) {
      coarse_options.progress = [&options](const Progress& p) {
        Progress at = p;
        at.level = 1;
        at.levels = 2;
        return options.progress(at);
      };
    }
    coarse_options.num_anchors = std::min<int>(options.num_anchors, static_cast<int>(cells));
    // The coarse plan only seeds the fine level: the exact solver stops at float32's noise floor
    // (no float64 finish, which took 0.8 s of the 2,000-cell coarse solve of the 100,000 x
    // 100,000 spiral on 2 cores and moves the seed only in its last digits).
    coarse_options.exact_tolerance = std::max(options.exact_tolerance.value(), kExactFloat32Tolerance);
    const Strategy strategy = coarse_level_strategy(problem, coarse_options);
    coarse = solve_with(problem, coarse_options, strategy);
    GW_CHECK_CODE(coarse.termination != Termination::kNonFinite,
                  ErrorCode::kInternal,
                  "the coarse " << cells << " x " << cells
                                << " alignment of the sparse path failed: " << coarse.message);
  }
  result.multiscale_used = true;
  result.multiscale_size = cells;
  result.multiscale_iterations = coarse.iterations;
  result.multiscale_seconds = coarse.total_seconds;

  // (3) the starting support. Source cell a spreads its row of the coarse plan over the target
  // cells that hold kCoarseMassShare of it (heaviest first, at most support_size cells), and each
  // of its nodes gives cell b a number of slots proportional to Tc(a, b): s_ab of its
  // support_size candidates. The nodes of cell a take consecutive runs of s_ab members of b
  // (cyclically, by their rank in a), so the members of b are covered evenly and the support
  // holds the lifted coarse plan's structure: T0_ij = Tc(a, b) (p_i / pc_a) / s_ab on those
  // slots has (nearly) the target marginals, which keeps the balanced problem on the support
  // feasible.
  Rng rng(options.seed, /*stream=*/7);
  const CellIndex target_index = index_cells(tgt, k, rng);
  const CellIndex source_index = index_cells(src, n, rng);
  const int width = options.support_size;
  SupportPlan support;
  std::vector<Index> backbone;
  {
    ScopedPhase phase(result.timings, "support");
    std::vector<std::vector<std::pair<Index, int>>> slots(cells);
#pragma omp parallel for schedule(dynamic, 16)
    for (Index a = 0; a < cells; ++a) {
      const double* row = &coarse.plan[static_cast<std::size_t>(a) * cells];
      std::vector<Index> order(cells);
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](Index x, Index y) {
        return row[x] > row[y] || (row[x] == row[y] && x < y);
      });
      const double total = std::accumulate(row, row + cells, 0.0);
      double taken = 0.0;
      int count = 0;
      while (count < std::min<Index>(cells, width) &&
             (count == 0 || taken < kCoarseMassShare * total)) {
        taken += row[order[count++]];
      }
      // Largest-remainder apportionment of the width over the taken cells, at least one slot each.
      std::vector<std::pair<Index, int>> out;
      std::vector<std::pair<double, int>> remainders;
      int used = 0;
      for (int t = 0; t < count; ++t) {
        const double exact = taken > 0.0 ? width * row[order[t]] / taken : 0.0;
        const int whole = std::max(1, static_cast<int>(exact));
        out.emplace_back(order[t], whole);
        used += whole;
        remainders.emplace_back(exact - whole, t);
      }
      std::sort(remainders.begin(), remainders.end(), std::greater<>());
      for (std::size_t t = 0; used < width && t < remainders.size(); ++t, ++used) {
        ++out[remainders[t].second].second;
      }
      slots[a] = std::move(out);
    }
    std::vector<Index> rank(n);
    for (Index a = 0; a < cells; ++a)
      for (Offset t = source_index.offsets[a]; t < source_index.offsets[a + 1]; ++t)
        rank[source_index.members[t]] = static_cast<Index>(t - source_index.offsets[a]);
    std::vector<Index> lists(static_cast<std::size_t>(n) * width, -1);
    std::vector<double> values(lists.size(), 0.0);
#pragma omp parallel for schedule(dynamic, 256)
    for (Index i = 0; i < n; ++i) {
      const Index a = src.cell[i];
      Index* row = &lists[static_cast<std::size_t>(i) * width];
      double* vals = &values[static_cast<std::size_t>(i) * width];
      int count = 0;
      for (const auto& [b, share] : slots[a]) {
        const Offset begin = target_index.offsets[b];
        const Offset size = target_index.offsets[b + 1] - begin;
        const int take = static_cast<int>(std::min<Offset>({share, size, width - count}));
        if (take <= 0) continue;
        const double lift = coarse.plan[static_cast<std::size_t>(a) * cells + b] *
                            (pc[a] > 0.0 ? pb.p[i] / pc[a] : 0.0) / take;
        const Offset start = (static_cast<Offset>(rank[i]) * share) % size;
        for (int t = 0; t < take; ++t) {
          row[count] = target_index.members[begin + (start + t) % size];
          vals[count++] = lift;
        }
      }
    }
    // An uncovered target joins a row of the source cell that couples most to its cell.
    std::vector<Index> best_source_cell(cells, 0);
    for (Index b = 0; b < cells; ++b) {
      double best = -1.0;
      for (Index a = 0; a < cells; ++a) {
        const double t = coarse.plan[static_cast<std::size_t>(a) * cells + b];
        if (t > best) {
          best = t;
          best_source_cell[b] = a;
        }
      }
    }
    auto cover = [&](Index j) {
      const Index a = best_source_cell[tgt.cell[j]];
      const Offset size = source_index.offsets[a + 1] - source_index.offsets[a];
      if (size == 0) return static_cast<Index>((static_cast<Offset>(j) * n) / k);
      return source_index.members[source_index.offsets[a] + j % size];
    };
    const int backbone_width = width / kBackboneStride;
    backbone.assign(static_cast<std::size_t>(n) * backbone_width, -1);
    for (Index i = 0; i < n; ++i)
      for (int t = 0; t < backbone_width; ++t)
        backbone[static_cast<std::size_t>(i) * backbone_width + t] =
            lists[static_cast<std::size_t>(i) * width + t * kBackboneStride];
    support = build_support(n, k, width, lists, values, cover);
  }
  std::vector<double>().swap(coarse.plan);

  SparseStart start;
  start.support = std::move(support);
  start.backbone = std::move(backbone);
  start.target_cells = std::move(tgt);
  start.target_index = target_index;
  return start;
}

// The full support: every row holds all k columns, with the dense loop's starting plan.
SparseStart full_start(PreparedProblem& pb, const Options& options, Result& result) {
  const Index n = pb.n, k = pb.k;
  std::vector<double> initial;
  if (options.initial_plan == InitialPlan::kDistanceProfiles) {
    ScopedPhase phase(result.timings, "init");
    initial = distance_profile_plan(pb, options);
  } else {
    initial.resize(static_cast<std::size_t>(n) * k);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < k; ++j)
        initial[static_cast<std::size_t>(i) * k + j] = pb.p[i] * pb.q[j];
  }
  std::vector<Index> lists(initial.size());
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < k; ++j) lists[static_cast<std::size_t>(i) * k + j] = j;
  SparseStart start;
  {
    ScopedPhase phase(result.timings, "support");
    start.support =
        build_support(n, k, static_cast<int>(k), lists, initial, [](Index) { return 0; });
  }
  return start;
}

void run_sparse_solve(PreparedProblem& pb, const Options& options, Result& result) {
  GW_CHECK(pb.source != nullptr,
           "support = sparse needs geometry on both sides (fused_weight = 1 is plain OT on a "
           "dense feature cost; use support = dense)");
  GW_CHECK(!options.partial_mass, "partial_mass is not supported with support = sparse");
  GW_CHECK(options.lambda_ema == 0.0, "lambda_ema is not supported with support = sparse");
  GW_CHECK(pb.initial_plan.empty(),
           "a dense initial plan cannot start the sparse path (it has n x k entries); leave "
           "Problem::initial_plan unset or use support = dense");
  const Index n = pb.n, k = pb.k;
  result.backend = options.backend;
  result.threads = available_threads();
  set_flush_denormals_all_threads(result.threads);

  // (1) - (3), or the whole of n x k when support_size >= k: the dense loop's start and schedule
  // on a CSR support (nothing to quantize or re-grow; the sparse path then runs the dense loop's
  // algorithm, which the tests compare entry by entry).
  const int width = options.support_size;
  const bool full_support = width >= k;
  SparseStart start =
      full_support ? full_start(pb, options, result) : coarse_start(pb, options, result);
  SupportPlan support = std::move(start.support);
  std::vector<Index> backbone = std::move(start.backbone);
  const Quantization& tgt = start.target_cells;
  const CellIndex& target_index = start.target_index;

  // (4) the sampled GW iterations on the support.
  // The fine level continues where the coarse level's annealing ended: epsilon stays at
  // epsilon_final (starting it at epsilon again would first blur the coarse plan's structure,
  // then spend the whole decay re-sharpening it), and since it starts near its optimum its
  // stopping tests apply early (kFineMinIterations) with a plateau patience of one re-growth
  // period (at least kFinePatience iterations).
  Options fine = options;
  if (full_support) {
    fine.support_regrow_every = 0;  // the support is already everything
  } else {
    fine.epsilon = options.resolved_epsilon_final();
    fine.epsilon_final = fine.epsilon;
    fine.min_iterations = std::min<int>(options.min_iterations, kFineMinIterations);
    fine.plateau_patience = std::min(options.resolved_plateau_patience(),
                                     std::max(options.support_regrow_every, kFinePatience));
    fine.polish_sinkhorn_iterations =
        std::min<int>(options.polish_sinkhorn_iterations, kFinePolishSinkhorn);
    if (options.progress) {
      fine.progress = [&options](const Progress& p) {
        Progress at = p;
        at.level = 2;
        at.levels = 2;
        return options.progress(at);
      };
    }
  }
  SparseLoop loop(pb, fine, std::move(support), tgt, target_index, std::move(backbone));
  run_gw_iterations(loop, pb, fine, result);
  SupportPlan& plan = loop.support();
  loop.release_buffers();
  result.support_regrowths = loop.regrowths();

  // (5) pruning, marginals, matching. The plan is pruned to its support_size heaviest entries per
  // row first, so the scaling works on the entries the caller gets back and its rows stay exact.
  const bool balanced = std::isinf(options.rho_a) && std::isinf(options.rho_b);
  SupportPlan out;
  {
    ScopedPhase phase(result.timings, "output");
    out.n = n;
    out.k = k;
    out.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (Index i = 0; i < n; ++i)
      out.offsets[i + 1] =
          out.offsets[i] + std::min<Offset>(width, plan.offsets[i + 1] - plan.offsets[i]);
    out.cols.resize(out.offsets[n]);
    out.values.resize(out.offsets[n]);
#pragma omp parallel
    {
      std::vector<Offset> order;
#pragma omp for schedule(dynamic, 256)
      for (Index i = 0; i < n; ++i) {
        const Offset begin = plan.offsets[i], size = plan.offsets[i + 1] - begin;
        order.resize(size);
        std::iota(order.begin(), order.end(), begin);
        const Offset kept = std::min<Offset>(width, size);
        // Heaviest first; ties by column (columns ascend within a row).
        std::partial_sort(
            order.begin(), order.begin() + kept, order.end(), [&](Offset x, Offset y) {
              return plan.values[x] > plan.values[y] || (plan.values[x] == plan.values[y] && x < y);
            });
        std::sort(order.begin(), order.begin() + kept);
        for (Offset t = 0; t < kept; ++t) {
          out.cols[out.offsets[i] + t] = plan.cols[order[t]];
          out.values[out.offsets[i] + t] = plan.values[order[t]];
        }
      }
    }
    result.support_nnz = plan.nnz();
    plan = SupportPlan{};
  }
  if (options.round_marginals && balanced && result.termination != Termination::kNonFinite) {
    ScopedPhase phase(result.timings, "round");
    scale_support(out, pb.p, pb.q, /*tolerance=*/1e-9, /*max_sweeps=*/200);
  }
  {
    ScopedPhase phase(result.timings, "output");
    result.matching.assign(n, 0);
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) {
      Offset best = -1;
      for (Offset e = out.offsets[i]; e < out.offsets[i + 1]; ++e)
        if (best < 0 || out.values[e] > out.values[best]) best = e;
      if (best >= 0) result.matching[i] = out.cols[best];
    }
    // Marginal errors and mass of the returned plan.
    std::vector<double> col(k, 0.0);
    double row_error = 0.0, mass = 0.0;
    for (Index i = 0; i < n; ++i) {
      double row = 0.0;
      for (Offset e = out.offsets[i]; e < out.offsets[i + 1]; ++e) {
        row += out.values[e];
        col[out.cols[e]] += out.values[e];
      }
      row_error += std::abs(row - pb.p[i]);
      mass += row;
    }
    double col_error = 0.0;
    for (Index j = 0; j < k; ++j) col_error += std::abs(col[j] - pb.q[j]);
    result.plan_mass = mass;
    result.row_marginal_error = row_error;
    result.column_marginal_error = col_error;
    result.plan_topk.rows = n;
    result.plan_topk.cols = k;
    result.plan_topk.row_offsets = std::move(out.offsets);
    result.plan_topk.col_indices = std::move(out.cols);
    result.plan_topk.values = std::move(out.values);
  }
  if (options.compute_gw_loss && result.plan_mass > 0.0 && std::isfinite(result.plan_mass)) {
    ScopedPhase phase(result.timings, "loss");
    // The estimate is over the returned plan (as on the dense path).
    SupportPlan returned;
    returned.n = n;
    returned.k = k;
    returned.offsets = std::move(result.plan_topk.row_offsets);
    returned.cols = std::move(result.plan_topk.col_indices);
    returned.values = std::move(result.plan_topk.values);
    const LossEstimate estimate =
        estimate_support_loss(pb, returned, options.loss_anchors, options.seed);
    result.plan_topk.row_offsets = std::move(returned.offsets);
    result.plan_topk.col_indices = std::move(returned.cols);
    result.plan_topk.values = std::move(returned.values);
    result.gw_loss = estimate.value;
    result.gw_loss_stderr = estimate.standard_error;
    result.gw_loss_exact = false;
  }
}

}  // namespace gw::detail
