// The Chebyshev recurrence step of HeatDiffusion (diffusion.cpp), compiled once per
// instruction-set target in diffusion_isa.cpp (core/isa_dispatch_impl.h). Private to cellgraph.
#pragma once

#include <type_traits>

#include "core/isa_dispatch_impl.h"
#include "core/types.h"

namespace gw::detail {

// Channels per row of the recurrence buffers: 256 bytes = 64 float / 32 double channels, as four
// 64-byte vectors. Every buffer passed to the step is 64-byte aligned, kDiffusionRowBytes per row.
inline constexpr int kDiffusionRowBytes = 256;

// One step of the recurrence on the operator rows [lo, hi) of the graphs [g0, g1); the buffers
// hold the tile's rows from `base` on:
//   first step (prev == nullptr):  next = L~ cur,              yb += w * next
//   later steps:                   prev = 2 L~ cur - prev,     yb += w * prev   (in place)
// row_offsets: the operator's CSR offsets; entry_bytes[p]: the byte offset of entry p's column
// row within `cur`, counted from the first row of the entry's graph; node_offsets: the graphs'
// first rows (B + 1).
template <typename T>
using RecurrenceRowsFn = void (*)(const Offset* row_offsets,
                                  const Offset* entry_bytes,
                                  const T* values,
                                  const Offset* node_offsets,
                                  Index g0,
                                  Index g1,
                                  Index lo,
                                  Index hi,
                                  Index base,
                                  const T* cur,
                                  T* prev,
                                  T* next,
                                  T* yb,
                                  T w);

struct DiffusionKernels {
  RecurrenceRowsFn<float> recurrence_rows_f;
  RecurrenceRowsFn<double> recurrence_rows_d;

  template <typename T>
  RecurrenceRowsFn<T> recurrence_rows() const {
    if constexpr (std::is_same_v<T, float>) {
      return recurrence_rows_f;
    } else {
      return recurrence_rows_d;
    }
  }
};

GW_DECLARE_ISA_TABLE(DiffusionKernels, kDiffusionKernels)

inline const DiffusionKernels& diffusion_kernels() {
  return GW_ACTIVE_ISA_TABLE(kDiffusionKernels);
}

}  // namespace gw::detail
