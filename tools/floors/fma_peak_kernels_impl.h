// The multiply-add peak that `gwalign bench` floors divide by, measured with the instructions of
// a given target (core/isa.h): compiled once per target in fma_peak_isa.cpp.
#pragma once

#include "core/isa_dispatch_impl.h"

namespace gw::cli {

// One timed pass: `threads` threads each run 16 independent chains of 64-byte-vector multiply-adds
// (one AVX-512 register, two AVX2 or four SSE registers per vector; fused where the target has
// FMA). Returns flop/s (2 per multiply-add per lane) of the pass.
using FmaPeakPassFn = double (*)(int threads);

struct FmaPeakKernels {
  FmaPeakPassFn f32;
  FmaPeakPassFn f64;
};

GW_DECLARE_ISA_TABLE(FmaPeakKernels, kFmaPeakKernels)

// The best of `passes` passes on T (float or double) with the instructions of the best target
// this CPU supports: the floor of a kernel is what the machine can do, whichever target runs.
template <typename T>
double measure_fma_peak(int threads, int passes = 3) {
  const FmaPeakKernels& kernels = GW_ISA_TABLE_FOR(best_isa(), kFmaPeakKernels);
  double best = 0.0;
  for (int pass = 0; pass < passes; ++pass) {
    const double rate = sizeof(T) == 4 ? kernels.f32(threads) : kernels.f64(threads);
    best = rate > best ? rate : best;
  }
  return best;
}

}  // namespace gw::cli
