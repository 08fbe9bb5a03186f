// Reference (oracle) Sinkhorn: plain loops in double, max-shifted log-sum-exp, no threads, no
// tricks. Same interface and iteration schedule as gw::sinkhorn() (sinkhorn.h), so the fused CPU
// kernel and the CUDA kernels are tested against it iterate by iterate. Not installed; for tests
// and benchmarks. O(n k) per iteration with two passes over C (rows, then columns).
#pragma once

#include <span>

#include "sinkhorn/sinkhorn.h"

namespace gw {

// Same contract as gw::sinkhorn(); options.precision and options.threads are ignored (always
// double, one thread). The result's threads field is 1.
SinkhornResult sinkhorn_reference(const CostView& cost,
                                  std::span<const double> a,
                                  std::span<const double> b,
                                  double epsilon,
                                  std::span<double> f,
                                  std::span<double> g,
                                  const SinkhornOptions& options = {});

// The plan T_ij = exp((f_i + g_j - C_ij) / epsilon) in double into `plan` (n * k, row-major,
// contiguous). Zero-mass potentials give exact zeros.
void sinkhorn_plan_reference(const CostView& cost,
                             std::span<const double> f,
                             std::span<const double> g,
                             double epsilon,
                             std::span<double> plan);

}  // namespace gw
