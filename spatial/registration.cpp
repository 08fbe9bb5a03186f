#include "spatial/registration.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace gw::spatial {
namespace {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;

Mat rotation_matrix(const RigidTransform& t) {
  const int d = t.dimension;
  Mat r(d, d);
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) r(a, b) = t.rotation[static_cast<std::size_t>(a) * d + b];
  return r;
}

RigidTransform from_eigen(const Mat& r, const Vec& t, bool reflection) {
  RigidTransform out;
  out.dimension = static_cast<int>(r.rows());
  const int d = out.dimension;
  out.rotation.resize(static_cast<std::size_t>(d) * d);
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) out.rotation[static_cast<std::size_t>(a) * d + b] = r(a, b);
  out.translation.assign(t.data(), t.data() + d);
  out.reflection = reflection;
  return out;
}

}  // namespace

RigidTransform RigidTransform::identity(int dimension) {
  GW_CHECK(dimension == 2 || dimension == 3,
           "a rigid transform is 2-D or 3-D, got dimension " << dimension);
  return from_eigen(Mat::Identity(dimension, dimension), Vec::Zero(dimension), false);
}

std::vector<double> RigidTransform::apply(std::span<const double> points) const {
  const int d = dimension;
  GW_CHECK(d > 0 && points.size() % static_cast<std::size_t>(d) == 0,
           "points to transform: " << points.size() << " values are not rows of " << d);
  std::vector<double> out(points.size());
  const std::size_t n = points.size() / static_cast<std::size_t>(d);
  for (std::size_t i = 0; i < n; ++i) {
    for (int a = 0; a < d; ++a) {
      double v = translation[a];
      for (int b = 0; b < d; ++b) v += rotation[static_cast<std::size_t>(a) * d + b] * points[i * d + b];
      out[i * d + a] = v;
    }
  }
  return out;
}

RigidTransform RigidTransform::compose(const RigidTransform& other) const {
  GW_CHECK(dimension == other.dimension,
           "cannot compose transforms of dimension " << dimension << " and " << other.dimension);
  const Mat r1 = rotation_matrix(*this);
  const Mat r2 = rotation_matrix(other);
  const Vec t1 = Eigen::Map<const Vec>(translation.data(), dimension);
  const Vec t2 = Eigen::Map<const Vec>(other.translation.data(), dimension);
  return from_eigen(r1 * r2, r1 * t2 + t1, reflection != other.reflection);
}

double RigidTransform::angle() const {
  if (dimension == 2) return std::atan2(rotation[2], rotation[0]);
  // Axis-angle: trace R = 1 + 2 cos(theta) for a proper rotation.
  const double trace = rotation[0] + rotation[4] + rotation[8];
  return std::acos(std::clamp((trace - 1.0) / 2.0, -1.0, 1.0));
}

Registration register_sections(const PlanView& plan,
                               std::span<const double> source,
                               std::span<const double> target,
                               int d,
                               const RegistrationOptions& options) {
  GW_CHECK(d == 2 || d == 3, "registration needs 2-D or 3-D coordinates, got " << d << "-D");
  const Index n = plan.rows();
  const Index k = plan.cols();
  GW_CHECK(source.size() == static_cast<std::size_t>(n) * d,
           "registration: source coordinates hold " << source.size() << " values, expected n x d = "
                                                    << n << " x " << d);
  GW_CHECK(target.size() == static_cast<std::size_t>(k) * d,
           "registration: target coordinates hold " << target.size() << " values, expected k x d = "
                                                    << k << " x " << d);
  for (double v : source) GW_CHECK_CODE(std::isfinite(v), ErrorCode::kBadData, "registration: non-finite source coordinate");
  for (double v : target) GW_CHECK_CODE(std::isfinite(v), ErrorCode::kBadData, "registration: non-finite target coordinate");

  // Pass 1: mass and weighted centroids (row sums weight x, column sums weight y).
  double mass = 0.0;
  Vec x_bar = Vec::Zero(d);
  Vec y_bar = Vec::Zero(d);
  bool finite = true;
  for (Index i = 0; i < n; ++i) {
    const double* x = &source[static_cast<std::size_t>(i) * d];
    plan.for_each_in_row(i, [&](Index j, double p) {
      if (!std::isfinite(p) || p < 0.0) finite = false;
      if (p <= 0.0) return;
      mass += p;
      const double* y = &target[static_cast<std::size_t>(j) * d];
      for (int a = 0; a < d; ++a) {
        x_bar[a] += p * x[a];
        y_bar[a] += p * y[a];
      }
    });
  }
  GW_CHECK_CODE(finite, ErrorCode::kBadData, "registration: the plan holds a negative or non-finite mass");
  GW_CHECK(mass > 0.0, "registration: the plan has no positive mass");
  x_bar /= mass;
  y_bar /= mass;

  // Pass 2: the cross-covariance about the centroids (centred first: no cancellation when the
  // coordinates sit far from the origin, as slide coordinates in micrometres do).
  Mat h = Mat::Zero(d, d);
  for (Index i = 0; i < n; ++i) {
    Vec xc(d);
    for (int a = 0; a < d; ++a) xc[a] = source[static_cast<std::size_t>(i) * d + a] - x_bar[a];
    plan.for_each_in_row(i, [&](Index j, double p) {
      if (p <= 0.0) return;
      for (int a = 0; a < d; ++a) {
        const double yc = target[static_cast<std::size_t>(j) * d + a] - y_bar[a];
        for (int b = 0; b < d; ++b) h(a, b) += p * yc * xc[b];
      }
    });
  }
  Eigen::JacobiSVD<Mat> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Mat u = svd.matrixU();
  const Mat v = svd.matrixV();
  Mat s = Mat::Identity(d, d);
  const double det = (v * u.transpose()).determinant();
  bool reflection = false;
  if (det < 0.0) {
    if (options.allow_reflection) {
      reflection = true;
    } else {
      s(d - 1, d - 1) = -1.0;
    }
  }
  const Mat r = v * s * u.transpose();
  const Vec t = x_bar - r * y_bar;

  Registration out;
  out.transform = from_eigen(r, t, reflection);
  out.mass = mass;
  double residual = 0.0;
  for (Index i = 0; i < n; ++i) {
    const double* x = &source[static_cast<std::size_t>(i) * d];
    plan.for_each_in_row(i, [&](Index j, double p) {
      if (p <= 0.0) return;
      const double* y = &target[static_cast<std::size_t>(j) * d];
      double sq = 0.0;
      for (int a = 0; a < d; ++a) {
        double moved = t[a];
        for (int b = 0; b < d; ++b) moved += r(a, b) * y[b];
        sq += (moved - x[a]) * (moved - x[a]);
      }
      residual += p * sq;
    });
  }
  out.residual = residual;
  out.rms_residual = std::sqrt(residual / mass);
  return out;
}

}  // namespace gw::spatial
