// The per-target inner loops of the fused CPU Sinkhorn (sinkhorn_cpu.cpp), compiled once per
// instruction-set target in sinkhorn_isa.cpp (core/isa_dispatch_impl.h). Private to the module.
//
// Every function works on one row of k contiguous entries; the caller owns all memory, threads
// and error handling. Type letters: CostT (the cost matrix), T (the compute type), OutT / PlanT
// (the plan's element type).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/isa_dispatch_impl.h"
#include "sinkhorn/sinkhorn.h"

namespace gw::detail {

// out_j = 2^(c_j * scale + w_j + shift) for j < k; returns sum_j out_j (float partial sums over
// blocks of 1024 entries, accumulated in double). fast_exp_impl.h states accuracy and range.
template <typename CostT, typename T>
using Exp2RowFn = double (*)(const CostT* c, const T* w, T shift, T scale, std::int64_t k, T* out);

// log sum_j exp(wt_j ln 2 - c_j inv_eps) in double with a max shift; columns with wt_j = -inf are
// skipped. Sets *bad to 1 when an entry is NaN or +inf after scaling (a NaN or -inf cost); the
// return value is then meaningless. Returns -inf when every column is skipped.
template <typename CostT, typename T>
using ExactRowLseFn =
    double (*)(const CostT* c, const T* wt, double inv_eps, std::int64_t k, int* bad);

// acc_j += p_j * scale.
template <typename T>
using ScaledAddFn = void (*)(const T* p, T scale, std::int64_t k, T* acc);

// acc_j = (acc_j + p0_j * s0) + p1_j * s1, each step rounded as scaled_add rounds it: bit for bit
// two scaled_add calls, with one load and one store of acc instead of two.
template <typename T>
using ScaledAdd2Fn = void (*)(const T* p0, T s0, const T* p1, T s1, std::int64_t k, T* acc);

// sum_j += acc_j; acc_j = 0.
template <typename T>
using FlushFn = void (*)(T* acc, double* sum, std::int64_t k);

// out_j = OutT(r_j * scale).
template <typename T, typename OutT>
using ScaleStoreFn = void (*)(const T* r, T scale, std::int64_t k, OutT* out);

// The momentum blend of one plan row: p_j <- keep p_j + take PlanT(r_j * correction) for j < cols,
// returning sum (delta p_j)^2, sum c_j p_j and sum p_j of the blended row (in double).
template <typename CostT, typename T, typename PlanT>
using BlendRowFn = PlanBlendStats (*)(
    const T* r, T correction, const CostT* c, PlanT keep, PlanT take, std::int64_t cols, PlanT* p);

struct SinkhornKernels {
  Exp2RowFn<float, float> exp2_row_ff;
  Exp2RowFn<double, float> exp2_row_df;
  Exp2RowFn<float, double> exp2_row_fd;
  Exp2RowFn<double, double> exp2_row_dd;
  ExactRowLseFn<float, float> exact_row_lse_ff;
  ExactRowLseFn<double, float> exact_row_lse_df;
  ExactRowLseFn<float, double> exact_row_lse_fd;
  ExactRowLseFn<double, double> exact_row_lse_dd;
  ScaledAddFn<float> scaled_add_f;
  ScaledAddFn<double> scaled_add_d;
  ScaledAdd2Fn<float> scaled_add2_f;
  ScaledAdd2Fn<double> scaled_add2_d;
  FlushFn<float> flush_f;
  FlushFn<double> flush_d;
  ScaleStoreFn<float, float> scale_store_ff;
  ScaleStoreFn<float, double> scale_store_fd;
  ScaleStoreFn<double, float> scale_store_df;
  ScaleStoreFn<double, double> scale_store_dd;
  BlendRowFn<float, float, float> blend_fff;
  BlendRowFn<float, float, double> blend_ffd;
  BlendRowFn<float, double, float> blend_fdf;
  BlendRowFn<float, double, double> blend_fdd;
  BlendRowFn<double, float, float> blend_dff;
  BlendRowFn<double, float, double> blend_dfd;
  BlendRowFn<double, double, float> blend_ddf;
  BlendRowFn<double, double, double> blend_ddd;

  // The entry for the given types (resolved at compile time).
  template <typename CostT, typename T>
  Exp2RowFn<CostT, T> exp2_row() const {
    return pick<Exp2RowFn<CostT, T>>(exp2_row_ff, exp2_row_df, exp2_row_fd, exp2_row_dd);
  }
  template <typename CostT, typename T>
  ExactRowLseFn<CostT, T> exact_row_lse() const {
    return pick<ExactRowLseFn<CostT, T>>(
        exact_row_lse_ff, exact_row_lse_df, exact_row_lse_fd, exact_row_lse_dd);
  }
  template <typename T>
  ScaledAddFn<T> scaled_add() const {
    return pick<ScaledAddFn<T>>(scaled_add_f, scaled_add_d);
  }
  template <typename T>
  ScaledAdd2Fn<T> scaled_add2() const {
    return pick<ScaledAdd2Fn<T>>(scaled_add2_f, scaled_add2_d);
  }
  template <typename T>
  FlushFn<T> flush() const {
    return pick<FlushFn<T>>(flush_f, flush_d);
  }
  template <typename T, typename OutT>
  ScaleStoreFn<T, OutT> scale_store() const {
    return pick<ScaleStoreFn<T, OutT>>(
        scale_store_ff, scale_store_fd, scale_store_df, scale_store_dd);
  }
  template <typename CostT, typename T, typename PlanT>
  BlendRowFn<CostT, T, PlanT> blend_row() const {
    return pick<BlendRowFn<CostT, T, PlanT>>(
        blend_fff, blend_ffd, blend_fdf, blend_fdd, blend_dff, blend_dfd, blend_ddf, blend_ddd);
  }

 private:
  // The one argument whose type is Fn (every member above has a distinct type).
  template <typename Fn, typename First, typename... Rest>
  static Fn pick(First first, Rest... rest) {
    if constexpr (std::is_same_v<Fn, First>) {
      return first;
    } else {
      return pick<Fn>(rest...);
    }
  }
};

GW_DECLARE_ISA_TABLE(SinkhornKernels, kSinkhornKernels)

// The active target's table.
inline const SinkhornKernels& sinkhorn_kernels() { return GW_ACTIVE_ISA_TABLE(kSinkhornKernels); }

}  // namespace gw::detail
