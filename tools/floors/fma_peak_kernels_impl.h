// The multiply-add peak pass of gw::floors (floors.h) with the instructions of a given target
// (core/isa.h): compiled once per target in fma_peak_isa.cpp. Private to tools/floors.
#pragma once

#include "core/isa_dispatch_impl.h"

namespace gw::floors {

// One timed pass: `threads` threads each run 16 independent chains of 64-byte-vector multiply-adds
// (one AVX-512 register, two AVX2 or four SSE registers per vector; fused where the target has
// FMA). Returns flop/s (2 per multiply-add per lane) of the pass.
using FmaPeakPassFn = double (*)(int threads);

struct FmaPeakKernels {
  FmaPeakPassFn f32;
  FmaPeakPassFn f64;
};

GW_DECLARE_ISA_TABLE(FmaPeakKernels, kFmaPeakKernels)

}  // namespace gw::floors
