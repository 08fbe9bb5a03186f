// The Chebyshev recurrence step of HeatDiffusion, compiled once per instruction-set target
// (core/isa_dispatch_impl.h): the 64-byte vectors below are one AVX-512 register, two AVX2 or four
// SSE registers, so each target's compiler issues its own width.
#include <algorithm>

#include "cellgraph/diffusion_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

// A 64-byte vector of T (GCC/Clang vector extension). Written explicitly because the compilers
// vectorize the plain loops over the wrong (nonzero) index, with gathers.
template <typename T>
struct VecOf {
  typedef T type __attribute__((vector_size(64)));
};
template <typename T>
using Vec = typename VecOf<T>::type;

// Four vectors per row: fewer pay the per-entry overhead (index load, address, broadcast) more
// often; the tile's buffers stay in L2 either way (bench/RESULTS.md, "Graph-cell kernels").
constexpr int kVecs = kDiffusionRowBytes / 64;

// An entry costs one index load, one broadcast and kVecs multiply-adds with a memory operand.
// Row i of prev is read only by row i, so the update in place is safe.
template <typename T>
void recurrence_rows_kernel(const Offset* __restrict rows,
                            const Offset* __restrict entry_bytes,
                            const T* __restrict values,
                            const Offset* node_offsets,
                            Index g0,
                            Index g1,
                            Index lo,
                            Index hi,
                            Index base,
                            const T* cur_data,
                            T* prev_data,
                            T* next_data,
                            T* yb_data,
                            T w) {
  using V = Vec<T>;
  const V* __restrict cur = reinterpret_cast<const V*>(cur_data);
  V* prev = reinterpret_cast<V*>(prev_data);
  V* next = reinterpret_cast<V*>(next_data);
  V* __restrict yb = reinterpret_cast<V*>(yb_data);
  for (Index b = g0; b < g1; ++b) {
    const Index r0 = std::max<Index>(lo, static_cast<Index>(node_offsets[b]));
    const Index r1 = std::min<Index>(hi, static_cast<Index>(node_offsets[b + 1]));
    const char* graph = reinterpret_cast<const char*>(
        cur + static_cast<std::size_t>(node_offsets[b] - base) * kVecs);
    for (Index i = r0; i < r1; ++i) {
      V acc[kVecs];
      for (int q = 0; q < kVecs; ++q) acc[q] = V{};
      for (Offset p = rows[i]; p < rows[i + 1]; ++p) {
        const T v = values[p];
        const V* src = reinterpret_cast<const V*>(graph + entry_bytes[p]);
        for (int q = 0; q < kVecs; ++q) acc[q] += v * src[q];
      }
      V* y = yb + static_cast<std::size_t>(i - base) * kVecs;
      if (prev == nullptr) {
        V* out = next + static_cast<std::size_t>(i - base) * kVecs;
        for (int q = 0; q < kVecs; ++q) {
          out[q] = acc[q];
          y[q] += w * acc[q];
        }
      } else {
        V* out = prev + static_cast<std::size_t>(i - base) * kVecs;
        for (int q = 0; q < kVecs; ++q) {
          const V t = T(2) * acc[q] - out[q];
          out[q] = t;
          y[q] += w * t;
        }
      }
    }
  }
}

}  // namespace

extern const DiffusionKernels kDiffusionKernels = {
    &recurrence_rows_kernel<float>,
    &recurrence_rows_kernel<double>,
};

}  // namespace gw::detail::GW_ISA_NS
