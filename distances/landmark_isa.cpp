// The landmark provider's block kernel, compiled once per instruction-set target
// (core/isa_dispatch_impl.h): the tile GEMM (Eigen, at the target's packet width) and its
// epilogue (square roots, near-pair refinement, component masking).
#include <Eigen/Core>

#include <cmath>
#include <limits>

#include "distances/landmark_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void landmark_block_kernel(const LandmarkRequest& r, Index begin, Index rows, float* out) {
  const Index m = r.m;
  const std::size_t d = static_cast<std::size_t>(r.d);
  const Eigen::Map<const RowMajorMatrix> x(r.centred + begin * d, rows, r.d);
  const Eigen::Map<const RowMajorMatrix> y(r.anchors_centred, m, r.d);
  Eigen::Map<RowMajorMatrix> tile(out, rows, m);
  tile.noalias() = x * y.transpose();

  for (Index row = 0; row < rows; ++row) {
    const Index i = begin + row;
    float* o = out + static_cast<std::size_t>(row) * m;
    const float x_sq = r.sq_norms[i];
    // Branch-free loops (an int OR, a select): GCC vectorizes them; `||` and std::max under
    // `omp simd` it does not.
    int refine = 0;
    for (Index k = 0; k < m; ++k) {
      const float sq = x_sq + r.anchor_sq_norms[k] - 2.0f * o[k];
      refine |= sq < r.refine_ratio * (x_sq + r.anchor_sq_norms[k]) ? 1 : 0;
      o[k] = sq;
    }
    if (refine != 0) {
      const float* xi = r.coordinates + i * d;
      for (Index k = 0; k < m; ++k) {
        if (!(o[k] < r.refine_ratio * (x_sq + r.anchor_sq_norms[k]))) continue;
        // Both +inf at a landmark: same class, that landmark contributes nothing.
        const float* xa = r.coordinates + static_cast<std::size_t>(r.anchors[k]) * d;
        float sq = 0.0f;
        for (std::size_t l = 0; l < d; ++l) {
          const float diff = xi[l] == xa[l] ? 0.0f : xi[l] - xa[l];
          sq += diff * diff;
        }
        o[k] = sq;
      }
    }
    for (Index k = 0; k < m; ++k) {
      const float sq = o[k];
      o[k] = std::sqrt(sq > 0.0f ? sq : 0.0f);
    }
    if (r.classes != nullptr) {
      const Index c = r.classes[i];
      for (Index k = 0; k < m; ++k) {
        if (r.anchor_classes[k] != c) o[k] = std::numeric_limits<float>::infinity();
      }
    }
  }
}

}  // namespace

extern const LandmarkKernels kLandmarkKernels = {&landmark_block_kernel};

}  // namespace gw::detail::GW_ISA_NS
