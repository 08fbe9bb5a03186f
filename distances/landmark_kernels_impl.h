// The landmark provider's block kernel (landmark.cpp), compiled once per instruction-set target in
// landmark_isa.cpp (core/isa_dispatch_impl.h). Private to the module.
#pragma once

#include "core/isa_dispatch_impl.h"
#include "core/types.h"

namespace gw::detail {

// The inputs of one request, shared by its blocks. Coordinates are row-major, d per node.
struct LandmarkRequest {
  const float* centred;          // n x d, coordinates minus their mean (the GEMM's operand)
  const float* coordinates;      // n x d, as measured (the exact near-pair recomputation)
  const float* sq_norms;         // n, |centred_i|^2
  const Index* classes;          // n connected-component ids, or nullptr when connected
  const float* anchors_centred;  // m x d, the anchors' rows of `centred`
  const float* anchor_sq_norms;  // m
  const Index* anchors;          // m node ids
  const Index* anchor_classes;   // m component ids (ignored without `classes`)
  Index m;
  Index d;
  float refine_ratio;  // recompute entries with |x - y|^2 < refine_ratio (|x|^2 + |y|^2) exactly
};

// out (rows x m, row-major, the rows [begin, begin + rows) of the request's n x m output):
// Euclidean distances in landmark space; +inf between different components.
using LandmarkBlockFn = void (*)(const LandmarkRequest& request,
                                 Index begin,
                                 Index rows,
                                 float* out);

struct LandmarkKernels {
  LandmarkBlockFn block;
};

GW_DECLARE_ISA_TABLE(LandmarkKernels, kLandmarkKernels)

inline const LandmarkKernels& landmark_kernels() { return GW_ACTIVE_ISA_TABLE(kLandmarkKernels); }

}  // namespace gw::detail
