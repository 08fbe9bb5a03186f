// The cost GEMM of the CPU GW loop (gw_loop_cpu.cpp), compiled once per instruction-set target:
// Eigen picks its packet width and FMA use from the target's macros, so each copy runs at its
// target's width. Eigen's namespace is renamed per target by the build (core/isa_dispatch_impl.h).
#include <Eigen/Core>

#include "solver/gw_cost_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

template <typename Real>
using RowMatrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename Real>
void gemm_abt_kernel(const Real* left,
                     const Real* right,
                     Index rows,
                     Index cols,
                     Index inner,
                     Real* out,
                     Offset out_stride) {
  const Eigen::Map<const RowMatrix<Real>> a(left, rows, inner);
  const Eigen::Map<const RowMatrix<Real>> b(right, cols, inner);
  Eigen::Map<RowMatrix<Real>, 0, Eigen::OuterStride<>> c(
      out, rows, cols, Eigen::OuterStride<>(out_stride));
  c.noalias() = a * b.transpose();
}

}  // namespace

extern const GwCostKernels kGwCostKernels = {
    &gemm_abt_kernel<float>,
    &gemm_abt_kernel<double>,
};

}  // namespace gw::detail::GW_ISA_NS
