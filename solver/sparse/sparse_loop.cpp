// The sampled GW iterations on the sparse support (level 4, sparse_impl.h): the loop backend that
// run_gw_iterations drives, with sampling and re-growth on the host and the per-entry arithmetic
// in the SupportKernels of the backend (the CPU's here, cuda/sparse_loop_cuda.cpp's on a device).
//
// Support buffers per entry: column index 4 B, cost 4 B (float32), plan 8 B (float64), transpose
// 12 B (entry position + row); a re-growth builds the new column and plan arrays beside the old
// ones. Per iteration with M anchors: the provider queries ((n + k) M output), the cost on the
// support (nnz M multiply-adds: each entry's dot product of its row's and column's anchor
// distances), a few Sinkhorn iterations (two exponentials per entry each) and the momentum pass.
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
#include "solver/inputs.h"
#include "solver/sampled/loop_driver_impl.h"
#include "solver/sparse/sparse_impl.h"

namespace gw::detail {

namespace {

// The plan values of rows[0], rows[1], ... concatenated (each row's entries in CSR order).
std::vector<double> row_values_of(const SupportPlan& s, std::span<const Index> rows) {
  std::vector<double> values;
  for (Index i : rows) {
    values.insert(
        values.end(), s.values.begin() + s.offsets[i], s.values.begin() + s.offsets[i + 1]);
  }
  return values;
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
    if (opt_.fused_weight > 0.0) feature_ = support_feature_cost(pb_, support);
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
    const double* feature = feature_.empty() ? nullptr : feature_.data();
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
          value = static_cast<float>((1.0 - alpha_f) * value + alpha_f * feature[e]);
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

  void release() override {
    std::vector<float>().swap(cost_);
    std::vector<double>().swap(feature_);
  }

 private:
  const PreparedProblem& pb_;
  const Options& opt_;
  SupportPlan* s_ = nullptr;
  std::vector<float> xn_, yn_, cost_;
  std::vector<double> f_, g_, feature_;  // feature_: the fused feature cost per support entry
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
    AnchorPairs pairs;
    pairs.rows = sample_rows(row_mass_, uniforms);
    kernels_->plan_rows(s_, pairs.rows, sampled_values_);
    sample_csr_columns(s_.offsets, s_.cols, sampled_values_, uniforms, pairs);
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
    std::vector<std::pair<Index, Index>> additional =
        feature_candidates(lists, width, owner_offsets, owners);
    s_ = SupportPlan{};  // free the old support before the transpose of the new one is built
    s_ = build_support(n, k, width, lists, values, cover, std::move(additional));
    kernels_->set_support(s_);
    for (Index i = 0; i < n; ++i) {
      row_mass_[i] = 0.0;
      for (Offset e = s_.offsets[i]; e < s_.offsets[i + 1]; ++e) row_mass_[i] += s_.values[e];
    }
  }

  // Options::support_feature_candidates: each column's closest rows in feature space among the
  // owners (rows whose best match lies in a cell) of its cell and the cells next to it (at most
  // kFeaturePoolMax looked at), as (row, column) pairs not already in the rows' lists.
  std::vector<std::pair<Index, Index>> feature_candidates(const std::vector<Index>& lists, int width,
                                                          const std::vector<Offset>& owner_offsets,
                                                          const std::vector<Index>& owners) const {
    std::vector<std::pair<Index, Index>> additional;
    const int column_candidates = opt_.support_feature_candidates;
    if (column_candidates <= 0 || !pb_.source_features || !pb_.target_features) return additional;
    const Index k = pb_.k;
    const DenseMatrix<double>& f = *pb_.source_features;
    const DenseMatrix<double>& g = *pb_.target_features;
#pragma omp parallel
    {
      std::vector<std::pair<double, Index>> pool;
      std::vector<std::pair<Index, Index>> mine;
#pragma omp for schedule(dynamic, 256) nowait
      for (Index j = 0; j < k; ++j) {
        pool.clear();
        const Index home = target_cells_.cell[j];
        const Index* near = &target_index_.neighbours[static_cast<std::size_t>(home) * kNeighbourCells];
        const double* gj = &g.values[static_cast<std::size_t>(j) * g.cols];
        for (int c = 0; c < kNeighbourCells && pool.size() < kFeaturePoolMax; ++c) {
          const Index cell = near[c];
          if (cell < 0) break;
          for (Offset t = owner_offsets[cell]; t < owner_offsets[cell + 1] && pool.size() < kFeaturePoolMax; ++t) {
            const Index i = owners[t];
            const double* fi = &f.values[static_cast<std::size_t>(i) * f.cols];
            double d = 0.0;
            for (Index col = 0; col < f.cols; ++col) d += (fi[col] - gj[col]) * (fi[col] - gj[col]);
            pool.emplace_back(d, i);
          }
        }
        const std::size_t take = std::min<std::size_t>(pool.size(), static_cast<std::size_t>(column_candidates));
        std::partial_sort(pool.begin(), pool.begin() + take, pool.end());
        for (std::size_t t = 0; t < take; ++t) {
          const Index i = pool[t].second;
          const Index* row = &lists[static_cast<std::size_t>(i) * width];
          if (std::find(row, row + width, j) == row + width) mine.emplace_back(i, j);
        }
      }
#pragma omp critical
      additional.insert(additional.end(), mine.begin(), mine.end());
    }
    return additional;
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

}  // namespace

std::vector<double> support_feature_cost(const PreparedProblem& pb, const SupportPlan& s) {
  std::vector<double> out;
  if (pb.feature_cost != nullptr) {
    const DenseMatrix<double>& c = *pb.feature_cost;
    out.resize(s.nnz());
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < s.n; ++i)
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) out[e] = c(i, s.cols[e]);
  } else if (pb.source_features != nullptr) {
    const DenseMatrix<double>& f = *pb.source_features;
    const DenseMatrix<double>& g = *pb.target_features;
    const std::int64_t d = f.cols;
    std::vector<double> g_norm(g.rows);
    for (Index j = 0; j < g.rows; ++j) {
      double sum = 0.0;
      for (std::int64_t c = 0; c < d; ++c) sum += g.values[j * d + c] * g.values[j * d + c];
      g_norm[j] = sum;
    }
    const double scale = pb.feature_scale > 0.0 ? pb.feature_scale : 1.0;
    out.resize(s.nnz());
#pragma omp parallel for schedule(dynamic, 256)
    for (Index i = 0; i < s.n; ++i) {
      const double* fi = f.values.data() + static_cast<std::size_t>(i) * d;
      double f_norm = 0.0;
      for (std::int64_t c = 0; c < d; ++c) f_norm += fi[c] * fi[c];
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
        const Index j = s.cols[e];
        out[e] = feature_sq_distance(fi, f_norm, g.values.data() + static_cast<std::size_t>(j) * d,
                                     g_norm[j], d) /
                 scale;
      }
    }
  }
  return out;
}

SupportPlan run_support_iterations(const PreparedProblem& pb,
                                   const Options& fine,
                                   SparseStart start,
                                   Result& result) {
  SparseLoop loop(pb,
                  fine,
                  std::move(start.support),
                  start.target_cells,
                  start.target_index,
                  std::move(start.backbone));
  run_gw_iterations(loop, pb, fine, result);
  SupportPlan& plan = loop.support();
  loop.release_buffers();
  result.support_regrowths = loop.regrowths();
  return std::move(plan);
}

}  // namespace gw::detail
