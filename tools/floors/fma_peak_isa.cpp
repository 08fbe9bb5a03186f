// The multiply-add peak pass, compiled once per instruction-set target (core/isa_dispatch_impl.h).
// Explicit 64-byte vector types: a plain loop may be compiled for narrower registers than the
// target has, which would lower the peak and flatter every ratio to it. C++ contracts the
// multiply and add into one FMA where the target has it.
#include <omp.h>

#include <cstdint>

#include "tools/floors/fma_peak_kernels_impl.h"

namespace gw::floors::GW_ISA_NS {
namespace {

template <typename T>
double fma_peak_pass(int threads) {
  typedef T V __attribute__((vector_size(64)));
  constexpr int kChains = 16;
  constexpr std::int64_t kIterations = std::int64_t{1} << 22;
  T sink = 0;
  const double start = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    V acc[kChains];
    // Distinct starting values, or the compiler folds identical chains into one.
    for (int i = 0; i < kChains; ++i) acc[i] = V{} + (T(1) + T(i) * T(1e-3));
    const V a = V{} + T(0.999999);
    const V b = V{} + T(1e-7);
    for (std::int64_t it = 0; it < kIterations; ++it) {
#pragma GCC unroll 16
      for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * a + b;
    }
    for (int i = 0; i < kChains; ++i) sink += acc[i][0];
  }
  const double seconds = omp_get_wtime() - start;
  volatile T keep = sink;
  (void)keep;
  const double lanes = 64.0 / sizeof(T);
  return 2.0 * kChains * lanes * static_cast<double>(kIterations) * threads / seconds;
}

}  // namespace

extern const FmaPeakKernels kFmaPeakKernels = {&fma_peak_pass<float>, &fma_peak_pass<double>};

}  // namespace gw::floors::GW_ISA_NS
