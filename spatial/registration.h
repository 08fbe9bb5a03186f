// Rigid registration of one section onto another from a transport plan: the weighted Procrustes
// problem PASTE solves after its fused GW step (Zeira et al., Nature Methods 2022, "stacking").
//
//   minimize over R (d x d orthogonal), t (d)   sum_ij P_ij |R y_j + t - x_i|^2
//
// with x the source coordinates (the plan's rows) and y the target coordinates (its columns). With
// m = sum P, the weighted centroids x_bar = sum_i r_i x_i / m and y_bar = sum_j c_j y_j / m (r, c the
// plan's row and column sums) and the cross-covariance H = sum_ij P_ij (y_j - y_bar)(x_i - x_bar)^T,
// the optimum is R = V S U^T from the SVD H = U Sigma V^T, where S = I when reflections are allowed
// and S = diag(1, ..., 1, sign det(V U^T)) otherwise (Umeyama 1991), and t = x_bar - R y_bar.
// The SVD is Eigen's JacobiSVD of the d x d matrix; the work is one pass over the plan's entries.
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "spatial/plan_view.h"

namespace gw::spatial {

// y -> R y + t in d dimensions (d = 2 or 3). rotation is d x d row-major (R[r * d + c]).
struct RigidTransform {
  int dimension = 0;
  std::vector<double> rotation;
  std::vector<double> translation;
  // det(R) = -1 (only when RegistrationOptions::allow_reflection).
  bool reflection = false;

  static RigidTransform identity(int dimension);
  // Applies the transform to n x d points (row-major), returning n x d points.
  std::vector<double> apply(std::span<const double> points) const;
  // this o other: x -> R_this (R_other x + t_other) + t_this.
  RigidTransform compose(const RigidTransform& other) const;
  // The rotation angle in radians (2-D: atan2(R10, R00); 3-D: the angle of the axis-angle form).
  double angle() const;
};

struct RegistrationOptions {
  // Allow det(R) = -1 (a mirrored section, e.g. a slide mounted face down). Off by default: a
  // reflection fits noise in nearly symmetric tissue better than the true rotation does.
  bool allow_reflection = false;
};

struct Registration {
  RigidTransform transform;
  // sum_ij P_ij |R y_j + t - x_i|^2 after the fit, and its root mean per unit mass
  // sqrt(residual / mass), in the coordinates' units.
  double residual = 0.0;
  double rms_residual = 0.0;
  // Total plan mass used (sum P).
  double mass = 0.0;
};

// Fits the motion that carries `target` (k x d, the plan's columns) onto `source` (n x d, its
// rows). kInvalidArgument when d is not 2 or 3, the point arrays do not match the plan's shape, or
// the plan has no positive mass; kBadData on a non-finite coordinate or mass. O(nnz d^2) for a CSR
// plan, O(n k d^2) dense. Thread-safe (no shared state).
Registration register_sections(const PlanView& plan,
                               std::span<const double> source,
                               std::span<const double> target,
                               int d,
                               const RegistrationOptions& options = {});

}  // namespace gw::spatial
