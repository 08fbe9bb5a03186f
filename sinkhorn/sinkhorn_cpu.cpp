// Fused CPU Sinkhorn: one streaming read of C per iteration.
//
// Work decomposition. Rows are handed to the OpenMP threads in static chunks of ~64K entries
// (static, so that every sum is formed in the same order on every run: results are bitwise
// reproducible for a given thread count). For each row i the thread
//   1. computes E_ij = exp(u_i + v_j - C_ij / eps) for the whole row into a row buffer (in L1/L2)
//      and its sum s_i, the row marginal of the current plan (u = f / eps, v = g / eps);
//   2. takes the row update from log s_i: u'_i = tau_a (log a_i - (log s_i - u_i));
//   3. adds the updated plan row P_ij = E_ij * exp(u'_i - u_i) into the thread's column sums.
// After the pass the per-thread column sums are added up (in parallel over columns); they are the
// column marginals sum_i exp(u'_i + v_j - C_ij / eps) of the plan after the row update, so the
// column update v'_j = tau_b (log b_j - (log colsum_j - v_j)) is O(k). One exp per entry, one
// read of C.
//
// Why no max shift in the common case: after a balanced column update every plan entry is at most
// b_j <= 1 (column sums equal b), so s_i cannot overflow; the same holds approximately with warm
// starts. Whatever does go out of range is caught per row / column and redone exactly:
//   - s_i outside [kSumLo, kSumHi] (underflow at small eps on a cold start, overflow after a warm
//     start on a new cost, NaN): max-shifted log-sum-exp in double over the row (exact_row_lse).
//   - exp(u'_i - u_i) > kScaleHi: E_ij below float's range would have been flushed to 0 although
//     P_ij is not negligible; the row's P_ij are recomputed from u'_i directly.
//   - colsum_j outside [kSumLo, kSumHi]: exact column log-sum-exp over the rows
//     (exact_column_update).
// With FTZ, a flushed entry loses at most FLT_MIN * kScaleHi = 1.2e-34 of mass per row, negligible
// against kSumLo = 1e-20 even for a million rows.
//
// Exponents are formed in base 2 (2^(u log2 e + ...) with the column copies wt = v log2 e), so
// that the AVX-512 kernel can take 2^n with vscalef (detail::exp2_row).
//
// The per-row loops (row exponential, column accumulation, exact fallback, plan output and blend)
// are compiled once per instruction-set target in sinkhorn_isa.cpp and reached through the table
// of the target active when a call starts (core/isa.h); this file owns threads, memory and errors.
//
// Precision: in kF32 the exponent is formed in float from float copies of u and v (ut2, wt);
// everything that depends on a single row or column (u_i, log s_i, the updates, the residual) is
// kept in double, and the row scale exp(u_i - ut2_i ln 2) carries the rounding of u_i exactly. Sums
// run in float over short blocks (1024 columns, kFlushRows rows) and are accumulated in double.
//
// The convergence residual (sinkhorn.h) needs the row sums of the current plan, which step 1
// computes anyway: a check costs nothing, except that when it succeeds the row update it would
// have fed is dropped, so the returned potentials are exactly the ones that were measured.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/error.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sinkhorn_common_impl.h"
#include "sinkhorn/sinkhorn_kernels_impl.h"

namespace gw {
namespace {

using detail::kInf;
using detail::SinkhornKernels;

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

constexpr double kSumLo = 1e-20;
constexpr double kSumHi = 1e30;
constexpr double kScaleHi = 1e4;
// Column sums run in float over this many rows before they are added into double (row sums run in
// float over blocks of 1024 entries); short enough that float rounding stays ~1e-6 relative.
constexpr int kFlushRows = 32;
// A thread gets at least this many cost entries per pass (~30 us of work): below that, fork/join
// and barrier costs dominate, and on a busy machine a descheduled thread stalls every barrier.
constexpr Offset kMinEntriesPerThread = Offset{1} << 16;

int threads_for(const CostView& cost, int requested) {
  const Offset entries = static_cast<Offset>(cost.rows()) * cost.cols();
  const Offset useful = std::max<Offset>(1, entries / kMinEntriesPerThread);
  return static_cast<int>(std::min<Offset>(resolve_threads(requested), useful));
}

// 64-byte aligned scratch array (AVX-512 loads never split a cache line).
template <typename T>
class AlignedArray {
 public:
  explicit AlignedArray(std::size_t count = 0) { resize(count); }
  void resize(std::size_t count) {
    const std::size_t bytes = ((count * sizeof(T) + 63) / 64) * 64;
    data_.reset(bytes == 0 ? nullptr : static_cast<T*>(std::aligned_alloc(64, bytes)));
    if (bytes != 0 && data_ == nullptr) throw std::bad_alloc();
    size_ = count;
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }
  std::size_t size() const { return size_; }
  void fill(T value) { std::fill(data_.get(), data_.get() + size_, value); }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

// Runs `body` inside an OpenMP region and rethrows the first exception a thread raised (an
// exception must not leave a parallel region).
class ExceptionCollector {
 public:
  template <typename Fn>
  void run(Fn&& fn) {
    try {
      fn();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

// Where the solver gets cost rows from. Dense today; a factored cost (Lambda has rank M + 2, see
// CostView in sinkhorn.h) would produce the row into a buffer here instead.
template <typename CostT>
struct DenseRows {
  const CostT* data;
  Offset stride;
  const CostT* row(Index i) const { return data + static_cast<Offset>(i) * stride; }
};

// Rows [begin, end) of thread `tid` out of `threads` for n rows.
inline void thread_rows(Index n, int tid, int threads, Index& begin, Index& end) {
  begin = static_cast<Index>(static_cast<Offset>(n) * tid / threads);
  end = static_cast<Index>(static_cast<Offset>(n) * (tid + 1) / threads);
}

template <typename CostT, typename T>
class FusedSinkhorn {
 public:
  FusedSinkhorn(const CostView& cost,
                std::span<const double> a,
                std::span<const double> b,
                double epsilon,
                const SinkhornOptions& options,
                int threads)
      : rows_{static_cast<const CostT*>(cost.data()), cost.row_stride()},
        n_(cost.rows()),
        k_(cost.cols()),
        a_(a),
        b_(b),
        epsilon_(epsilon),
        inv_eps_(1.0 / epsilon),
        cost_scale_(static_cast<T>(-kLog2e / epsilon)),
        tau_a_(detail::damping(options.rho_a, epsilon)),
        tau_b_(detail::damping(options.rho_b, epsilon)),
        options_(options),
        threads_(threads),
        u_(n_),
        u_new_(n_),
        v_(k_),
        v_next_(k_),
        log_a_(n_),
        log_b_(k_),
        flagged_column_(k_),
        wt_(k_),
        wt_next_(k_),
        exp2_row_(detail::sinkhorn_kernels().exp2_row<CostT, T>()),
        exact_row_lse_(detail::sinkhorn_kernels().exact_row_lse<CostT, T>()),
        scaled_add_(detail::sinkhorn_kernels().scaled_add<T>()),
        scaled_add2_(detail::sinkhorn_kernels().scaled_add2<T>()),
        flush_(detail::sinkhorn_kernels().flush<T>()) {
    for (Index i = 0; i < n_; ++i) log_a_[i] = a_[i] > 0.0 ? std::log(a_[i]) : -kInf;
    for (Index j = 0; j < k_; ++j) log_b_[j] = b_[j] > 0.0 ? std::log(b_[j]) : -kInf;
    scratch_.reserve(threads_);
    for (int t = 0; t < threads_; ++t) scratch_.emplace_back(k_);
  }

  SinkhornResult run(std::span<double> f, std::span<double> g) {
    for (Index i = 0; i < n_; ++i) u_[i] = detail::to_scaled(f[i], epsilon_);
    for (Index j = 0; j < k_; ++j) {
      v_[j] = detail::to_scaled(g[j], epsilon_);
      wt_[j] = static_cast<T>(v_[j] * kLog2e);
    }
    SinkhornResult result;
    result.backend = Backend::kCpu;
    result.threads = threads_;
    for (int t = 0;; ++t) {
      const bool check = detail::is_check_iteration(t, options_);
      const double residual = row_pass(check);
      if (check && detail::finish_check(t, residual, options_, result)) break;
      u_.swap(u_new_);
      column_update();
    }
    for (Index i = 0; i < n_; ++i) f[i] = detail::from_scaled(u_[i], epsilon_);
    for (Index j = 0; j < k_; ++j) g[j] = detail::from_scaled(v_[j], epsilon_);
    return result;
  }

 private:
  struct Scratch {
    explicit Scratch(Index k) : row(k), pending(k), col_block(k), col_sum(k) {}
    AlignedArray<T> row;        // E_ij, then P_ij, of the row being processed
    AlignedArray<T> pending;    // P_ij of the row before it, not yet in col_block
    T pending_scale = 0;
    bool has_pending = false;
    AlignedArray<T> col_block;  // column sums over the last < kFlushRows rows
    AlignedArray<double> col_sum;
    int rows_in_block = 0;
  };

  // Steps 1-3 of the file comment for every row; u_new_ and the column update candidates
  // (v_next_, wt_next_, flagged_column_) are the outputs. Returns the residual of the current
  // plan when `check` is set.
  double row_pass(bool check) {
    const Index chunk_rows =
        static_cast<Index>(std::max<Offset>(1, kMinEntriesPerThread / std::max<Index>(k_, 1)));
    const Index chunks = (n_ + chunk_rows - 1) / chunk_rows;
    std::vector<double> residuals(threads_, 0.0);
    ExceptionCollector errors;
#pragma omp parallel num_threads(threads_)
    {
      const int thread = omp_get_thread_num();
      Scratch& s = scratch_[thread];
      s.col_block.fill(0);
      s.col_sum.fill(0.0);
      s.rows_in_block = 0;
      s.has_pending = false;
      // Static chunks: every thread sums the same rows in the same order on every run, so the
      // column sums (per thread, added up below in thread order) and hence the potentials are
      // bitwise reproducible for a given thread count, as the solver promises for a seed.
#pragma omp for schedule(static) nowait
      for (Index chunk = 0; chunk < chunks; ++chunk) {
        if (errors.failed()) continue;  // an exception must not leave the worksharing loop
        errors.run([&] {
          const Index end = std::min<Index>(n_, (chunk + 1) * chunk_rows);
          for (Index i = chunk * chunk_rows; i < end; ++i) {
            residuals[thread] += process_row(i, s, check);
          }
        });
      }
      errors.run([&] { flush(s); });
#pragma omp barrier
      // Column sums and the column update candidates (v_next_, applied only if the solve goes
      // on), in parallel: O(k) logs per iteration are not negligible next to the pass.
      errors.run([&] {
#pragma omp for schedule(static)
        for (Index j = 0; j < k_; ++j) {
          double total = 0.0;
          for (int t = 0; t < threads_; ++t) total += scratch_[t].col_sum[j];
          column_candidate(j, total);
        }
      });
    }
    errors.rethrow();
    double residual = 0.0;
    for (double r : residuals) residual += r;  // thread order: reproducible
    return residual;
  }

  // One row: returns its residual term (0 unless `check`).
  double process_row(Index i, Scratch& s, bool check) {
    const double mass = a_[i];
    const double u = u_[i];
    if (mass == 0.0 && u == -kInf) {  // an empty row stays empty; its cost is never read
      u_new_[i] = -kInf;
      return 0.0;
    }
    const CostT* crow = rows_.row(i);
    // E_ij = 2^(ut2 + wt_j - C_ij log2(e) / eps) = exp(u_i + v_j - C_ij / eps) up to the rounding
    // of ut2 (carried exactly by the row scale below) and of wt (the solver's v is wt * ln 2).
    const T ut2 = static_cast<T>(u * kLog2e);
    const double sum = exp2_row_(crow, wt_.data(), ut2, cost_scale_, k_, s.row.data());
    const bool fast = sum >= kSumLo && sum <= kSumHi;
    // LSE_j(v_j - C_ij / eps) with v_j = wt_j ln 2, in double.
    const double lse =
        fast ? std::log(sum) - static_cast<double>(ut2) * kLn2 : exact_row_lse(crow, i);

    double residual = 0.0;
    if (check) {
      const double row_mass = u == -kInf ? 0.0 : std::exp(u + lse);
      residual = detail::row_residual(row_mass, mass, u, epsilon_, options_.rho_a);
    }
    if (mass == 0.0) {
      u_new_[i] = -kInf;
      return residual;
    }
    GW_CHECK_CODE(lse != -kInf,
                  ErrorCode::kBadData,
                  "sinkhorn: row " << i
                                   << " has positive mass but no finite-cost entry towards "
                                      "any positive-mass column");
    const double u_new = tau_a_ * (log_a_[i] - lse);
    u_new_[i] = u_new;

    const double scale = fast ? std::exp(u_new - static_cast<double>(ut2) * kLn2) : kInf;
    if (scale <= kScaleHi) {
      accumulate(s, static_cast<T>(scale));
    } else {
      // Recompute P_ij = exp(u'_i + v_j - C_ij / eps) directly (see the file comment).
      const T unt2 = static_cast<T>(u_new * kLog2e);
      const T correction = static_cast<T>(std::exp(u_new - static_cast<double>(unt2) * kLn2));
      exp2_row_(crow, wt_.data(), unt2, cost_scale_, k_, s.row.data());
      accumulate(s, correction);
    }
    return residual;
  }

  // col_block += scale s.row. Rows go in pairs: the first waits in s.pending (the buffers are
  // swapped), and the second adds both in one pass over col_block (scaled_add2, the same roundings
  // in the same order as two scaled_add passes), which saves a load and a store of the column sums
  // per entry.
  void accumulate(Scratch& s, T scale) {
    if (s.has_pending) {
      scaled_add2_(s.pending.data(), s.pending_scale, s.row.data(), scale, k_, s.col_block.data());
      s.has_pending = false;
    } else {
      std::swap(s.row, s.pending);
      s.pending_scale = scale;
      s.has_pending = true;
    }
    if (++s.rows_in_block == kFlushRows) flush(s);
  }

  void flush(Scratch& s) {
    if (s.has_pending) {
      scaled_add_(s.pending.data(), s.pending_scale, k_, s.col_block.data());
      s.has_pending = false;
    }
    if (s.rows_in_block == 0) return;
    flush_(s.col_block.data(), s.col_sum.data(), k_);
    s.rows_in_block = 0;
  }

  // log sum_j exp(v_j - C_ij / eps) in double with a max shift, v_j = wt_j ln 2. Columns with
  // wt_j = -inf (zero mass) are skipped. Throws kBadData on a NaN or -inf cost entry.
  double exact_row_lse(const CostT* crow, Index i) const {
    int bad = 0;
    const double lse = exact_row_lse_(crow, wt_.data(), inv_eps_, k_, &bad);
    GW_CHECK_CODE(
        bad == 0, ErrorCode::kBadData, "sinkhorn: the cost has a NaN or -inf entry in row " << i);
    return lse;
  }

  // Column j's update from its sum over the plan after the row update (that plan used u' and
  // the current wt_): v' = tau_b (log b_j - (log colsum_j - v_j)). Sums out of range are flagged
  // for the exact fallback.
  void column_candidate(Index j, double sum) {
    flagged_column_[j] = 0;
    if (b_[j] == 0.0) {
      v_next_[j] = -kInf;
    } else if (sum >= kSumLo && sum <= kSumHi) {
      const double lse = std::log(sum) - static_cast<double>(wt_[j]) * kLn2;
      v_next_[j] = tau_b_ * (log_b_[j] - lse);
    } else {
      flagged_column_[j] = 1;
      return;
    }
    wt_next_[j] = static_cast<T>(v_next_[j] * kLog2e);
  }

  // Applies the column update prepared by the last row pass (u_ already holds u').
  void column_update() {
    flagged_.clear();
    for (Index j = 0; j < k_; ++j) {
      if (flagged_column_[j] != 0) flagged_.push_back(j);
    }
    if (!flagged_.empty()) exact_column_update();
    v_.swap(v_next_);
    std::swap(wt_, wt_next_);
  }

  // Exact log-sum-exp over the rows for the flagged columns, in one row-major sweep over C.
  void exact_column_update() {
    const std::size_t count = flagged_.size();
    std::vector<detail::OnlineLse> lse(count);
    ExceptionCollector errors;
    std::mutex merge;
#pragma omp parallel num_threads(threads_)
    errors.run([&] {
      std::vector<detail::OnlineLse> local(count);
      Index begin, end;
      thread_rows(n_, omp_get_thread_num(), threads_, begin, end);
      for (Index i = begin; i < end; ++i) {
        const double u = u_[i];
        if (u == -kInf) continue;
        const CostT* crow = rows_.row(i);
        for (std::size_t q = 0; q < count; ++q) {
          local[q].add(u - static_cast<double>(crow[flagged_[q]]) * inv_eps_);
        }
      }
      std::lock_guard<std::mutex> lock(merge);
      for (std::size_t q = 0; q < count; ++q) lse[q].merge(local[q]);
    });
    errors.rethrow();
    for (std::size_t q = 0; q < count; ++q) {
      const Index j = flagged_[q];
      const double value = lse[q].value();
      GW_CHECK_CODE(!std::isnan(value) && value != kInf,
                    ErrorCode::kBadData,
                    "sinkhorn: the cost has a NaN or -inf entry in column " << j);
      GW_CHECK_CODE(value != -kInf,
                    ErrorCode::kBadData,
                    "sinkhorn: column " << j
                                        << " has positive mass but no finite-cost entry "
                                           "towards any positive-mass row");
      v_next_[j] = tau_b_ * (log_b_[j] - value);
      wt_next_[j] = static_cast<T>(v_next_[j] * kLog2e);
    }
  }

  DenseRows<CostT> rows_;
  Index n_;
  Index k_;
  std::span<const double> a_;
  std::span<const double> b_;
  double epsilon_;
  double inv_eps_;
  T cost_scale_;  // T(-log2(e) / eps): C_ij * cost_scale_ is the cost's exponent in base 2
  double tau_a_;
  double tau_b_;
  SinkhornOptions options_;
  int threads_;
  std::vector<double> u_;       // scaled row potentials f / eps (-inf: zero mass)
  std::vector<double> u_new_;   // after the row update of the current pass
  std::vector<double> v_;       // scaled column potentials g / eps
  std::vector<double> v_next_;  // the column update prepared by the current pass
  std::vector<double> log_a_, log_b_;
  std::vector<unsigned char> flagged_column_;
  AlignedArray<T> wt_;  // T(v_ * log2(e)): what the streaming pass reads
  AlignedArray<T> wt_next_;
  std::vector<Scratch> scratch_;
  std::vector<Index> flagged_;
  // The active target's row loops, fixed for the whole solve.
  detail::Exp2RowFn<CostT, T> exp2_row_;
  detail::ExactRowLseFn<CostT, T> exact_row_lse_;
  detail::ScaledAddFn<T> scaled_add_;
  detail::ScaledAdd2Fn<T> scaled_add2_;
  detail::FlushFn<T> flush_;
};

template <typename CostT, typename T>
SinkhornResult run_fused(const CostView& cost,
                         std::span<const double> a,
                         std::span<const double> b,
                         double epsilon,
                         std::span<double> f,
                         std::span<double> g,
                         const SinkhornOptions& options,
                         int threads) {
  FusedSinkhorn<CostT, T> solver(cost, a, b, epsilon, options, threads);
  return solver.run(f, g);
}

template <typename CostT, typename T, typename OutT>
void plan_rows(const CostView& cost,
               std::span<const double> f,
               std::span<const double> g,
               double epsilon,
               OutT* out,
               Offset out_stride,
               int threads) {
  const Index n = cost.rows();
  const Index k = cost.cols();
  const DenseRows<CostT> rows{static_cast<const CostT*>(cost.data()), cost.row_stride()};
  AlignedArray<T> wt(k);
  for (Index j = 0; j < k; ++j) wt[j] = static_cast<T>(detail::to_scaled(g[j], epsilon) * kLog2e);
  const T cost_scale = static_cast<T>(-kLog2e / epsilon);
  const SinkhornKernels& kernels = detail::sinkhorn_kernels();
  const auto exp2_row = kernels.exp2_row<CostT, T>();
  const auto scale_store = kernels.scale_store<T, OutT>();
#pragma omp parallel num_threads(threads)
  {
    AlignedArray<T> row(k);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      OutT* __restrict o = out + static_cast<Offset>(i) * out_stride;
      const double u = detail::to_scaled(f[i], epsilon);
      if (u == -kInf) {
        std::fill(o, o + k, OutT(0));
        continue;
      }
      // The solver's row kernel and row scale, so that the plan is exactly the one whose
      // marginals the solver measured.
      const T ut2 = static_cast<T>(u * kLog2e);
      const T correction = static_cast<T>(std::exp(u - static_cast<double>(ut2) * kLn2));
      exp2_row(rows.row(i), wt.data(), ut2, cost_scale, k, row.data());
      scale_store(row.data(), correction, k, o);
    }
  }
}

// The momentum update of the GW loop fused into the plan pass (sinkhorn_plan_momentum): the
// same row kernel and row scale as plan_rows, then the blend into the caller's plan block with
// the per-row statistics accumulated on the way, so T_new is never stored.
template <typename CostT, typename T, typename PlanT>
void plan_momentum_rows(const CostView& cost,
                        std::span<const double> f,
                        std::span<const double> g,
                        double epsilon,
                        PlanT* plan,
                        Index plan_rows_count,
                        Index plan_cols,
                        Offset plan_stride,
                        double alpha,
                        std::span<PlanBlendStats> stats,
                        int threads) {
  const Index k = cost.cols();
  const DenseRows<CostT> rows{static_cast<const CostT*>(cost.data()), cost.row_stride()};
  AlignedArray<T> wt(k);
  for (Index j = 0; j < k; ++j) wt[j] = static_cast<T>(detail::to_scaled(g[j], epsilon) * kLog2e);
  const T cost_scale = static_cast<T>(-kLog2e / epsilon);
  const PlanT keep = static_cast<PlanT>(1.0 - alpha);
  const PlanT take = static_cast<PlanT>(alpha);
  const SinkhornKernels& kernels = detail::sinkhorn_kernels();
  const auto exp2_row = kernels.exp2_row<CostT, T>();
  const auto blend_row = kernels.blend_row<CostT, T, PlanT>();
#pragma omp parallel num_threads(threads)
  {
    AlignedArray<T> row(k);
#pragma omp for schedule(static)
    for (Index i = 0; i < plan_rows_count; ++i) {
      PlanT* p = plan + static_cast<Offset>(i) * plan_stride;
      const CostT* c = rows.row(i);
      const double u = detail::to_scaled(f[i], epsilon);
      T correction = T(0);
      if (u != -kInf) {
        const T ut2 = static_cast<T>(u * kLog2e);
        correction = static_cast<T>(std::exp(u - static_cast<double>(ut2) * kLn2));
        exp2_row(c, wt.data(), ut2, cost_scale, k, row.data());
      } else {
        std::fill(row.data(), row.data() + k, T(0));
      }
      stats[i] = blend_row(row.data(), correction, c, keep, take, plan_cols, p);
    }
  }
}

template <typename CostT, typename T>
void plan_momentum_dispatch(const CostView& cost,
                            std::span<const double> f,
                            std::span<const double> g,
                            double epsilon,
                            const PlanView& plan,
                            double alpha,
                            std::span<PlanBlendStats> stats,
                            int threads) {
  if (plan.element_type() == Precision::kF32) {
    plan_momentum_rows<CostT, T>(cost,
                                 f,
                                 g,
                                 epsilon,
                                 plan.f32(),
                                 plan.rows(),
                                 plan.cols(),
                                 plan.row_stride(),
                                 alpha,
                                 stats,
                                 threads);
  } else {
    plan_momentum_rows<CostT, T>(cost,
                                 f,
                                 g,
                                 epsilon,
                                 plan.f64(),
                                 plan.rows(),
                                 plan.cols(),
                                 plan.row_stride(),
                                 alpha,
                                 stats,
                                 threads);
  }
}

template <typename CostT, typename T>
void plan_dispatch_out(const CostView& cost,
                       std::span<const double> f,
                       std::span<const double> g,
                       double epsilon,
                       const PlanView& plan,
                       int threads) {
  if (plan.element_type() == Precision::kF32) {
    plan_rows<CostT, T>(cost, f, g, epsilon, plan.f32(), plan.row_stride(), threads);
  } else {
    plan_rows<CostT, T>(cost, f, g, epsilon, plan.f64(), plan.row_stride(), threads);
  }
}

}  // namespace

SinkhornResult sinkhorn(const CostView& cost,
                        std::span<const double> a,
                        std::span<const double> b,
                        double epsilon,
                        std::span<double> f,
                        std::span<double> g,
                        const SinkhornOptions& options) {
  detail::validate_problem("sinkhorn", cost, a, b, epsilon, f, g, options);
  const int threads = threads_for(cost, options.threads);
  set_flush_denormals_all_threads(threads);
  const bool cost_f32 = cost.element_type() == Precision::kF32;
  if (options.precision == Precision::kF32) {
    return cost_f32 ? run_fused<float, float>(cost, a, b, epsilon, f, g, options, threads)
                    : run_fused<double, float>(cost, a, b, epsilon, f, g, options, threads);
  }
  return cost_f32 ? run_fused<float, double>(cost, a, b, epsilon, f, g, options, threads)
                  : run_fused<double, double>(cost, a, b, epsilon, f, g, options, threads);
}

void sinkhorn_plan(const CostView& cost,
                   std::span<const double> f,
                   std::span<const double> g,
                   double epsilon,
                   const PlanView& plan,
                   const SinkhornOptions& options) {
  detail::validate_plan("sinkhorn_plan", cost, f, g, epsilon, plan, options);
  const int threads = threads_for(cost, options.threads);
  set_flush_denormals_all_threads(threads);
  const bool cost_f32 = cost.element_type() == Precision::kF32;
  if (options.precision == Precision::kF32) {
    if (cost_f32) {
      plan_dispatch_out<float, float>(cost, f, g, epsilon, plan, threads);
    } else {
      plan_dispatch_out<double, float>(cost, f, g, epsilon, plan, threads);
    }
  } else if (cost_f32) {
    plan_dispatch_out<float, double>(cost, f, g, epsilon, plan, threads);
  } else {
    plan_dispatch_out<double, double>(cost, f, g, epsilon, plan, threads);
  }
}

void sinkhorn_plan_momentum(const CostView& cost,
                            std::span<const double> f,
                            std::span<const double> g,
                            double epsilon,
                            const PlanView& plan,
                            double alpha,
                            std::span<PlanBlendStats> stats,
                            const SinkhornOptions& options) {
  GW_CHECK(plan.rows() <= cost.rows() && plan.cols() <= cost.cols(),
           "sinkhorn_plan_momentum: the plan (" << plan.rows() << " x " << plan.cols()
                                                << ") must be a leading block of the cost ("
                                                << cost.rows() << " x " << cost.cols() << ")");
  GW_CHECK(plan.row_stride() >= plan.cols(),
           "sinkhorn_plan_momentum: plan row stride " << plan.row_stride() << " < " << plan.cols());
  GW_CHECK(stats.size() == static_cast<std::size_t>(plan.rows()),
           "sinkhorn_plan_momentum: " << stats.size() << " row statistics for " << plan.rows()
                                      << " plan rows");
  GW_CHECK(alpha > 0.0 && alpha <= 1.0,
           "sinkhorn_plan_momentum: alpha must be in (0, 1], got " << alpha);
  const char* who = "sinkhorn_plan_momentum";
  GW_CHECK(options.threads >= 0,
           who << ": SinkhornOptions.threads must be >= 0, got " << options.threads);
  detail::check_cost_shape(who, cost);
  GW_CHECK(f.size() == static_cast<std::size_t>(cost.rows()) &&
               g.size() == static_cast<std::size_t>(cost.cols()),
           who << ": potentials of " << f.size() << " and " << g.size() << " entries for a "
               << cost.rows() << " x " << cost.cols() << " cost");
  detail::check_epsilon(who, epsilon);
  GW_CHECK(plan.data() != nullptr, who << ": the plan view has no data pointer");
  detail::check_potentials(who, f, "f");
  detail::check_potentials(who, g, "g");
  const int threads = threads_for(cost, options.threads);
  set_flush_denormals_all_threads(threads);
  const bool cost_f32 = cost.element_type() == Precision::kF32;
  if (options.precision == Precision::kF32) {
    if (cost_f32) {
      plan_momentum_dispatch<float, float>(cost, f, g, epsilon, plan, alpha, stats, threads);
    } else {
      plan_momentum_dispatch<double, float>(cost, f, g, epsilon, plan, alpha, stats, threads);
    }
  } else if (cost_f32) {
    plan_momentum_dispatch<float, double>(cost, f, g, epsilon, plan, alpha, stats, threads);
  } else {
    plan_momentum_dispatch<double, double>(cost, f, g, epsilon, plan, alpha, stats, threads);
  }
}

}  // namespace gw
