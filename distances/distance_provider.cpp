#include "distances/distance_provider.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace gw {

std::string_view to_string(DistanceMode mode) {
  switch (mode) {
    case DistanceMode::kPrecomputed:
      return "precomputed";
    case DistanceMode::kDijkstra:
      return "dijkstra";
    case DistanceMode::kLandmark:
      return "landmark";
  }
  return "unknown";
}

std::optional<DistanceMode> distance_mode_from_string(std::string_view name) {
  for (DistanceMode mode :
       {DistanceMode::kPrecomputed, DistanceMode::kDijkstra, DistanceMode::kLandmark}) {
    if (name == to_string(mode)) return mode;
  }
  return std::nullopt;
}

namespace {
// Below this many entries a block is post-processed by the calling thread alone: an OpenMP
// region costs a few microseconds, as much as streaming ~16k floats.
constexpr std::int64_t kParallelThreshold = std::int64_t{1} << 16;
// Entries per dynamically scheduled chunk: dynamic, so that a thread whose core is busy elsewhere
// (a shared machine) does not hold up the pass.
constexpr std::int64_t kChunk = std::int64_t{1} << 15;
}  // namespace

double clamp_and_normalize(std::span<float> block, bool normalize) {
  const std::int64_t size = static_cast<std::int64_t>(block.size());
  float* data = block.data();

  // Pass 1: the largest finite entry, and whether there is any +inf / NaN / -inf. Each thread
  // scans its chunk with 16 independent lanes: the compiler turns them into vector max/or
  // operations without a loop-carried dependency (3-5x faster than an OpenMP simd reduction).
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr int kLanes = 16;
  constexpr int kHasInf = 1;
  constexpr int kHasBad = 2;
  float max_finite = -kInf;
  int flags = 0;
#pragma omp parallel if (size >= kParallelThreshold)
  {
    float lane_max[kLanes];
    int lane_flags[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      lane_max[l] = -kInf;
      lane_flags[l] = 0;
    }
    const std::int64_t blocks = size / kLanes;
#pragma omp for schedule(dynamic, kChunk / kLanes) nowait
    for (std::int64_t b = 0; b < blocks; ++b) {
      const float* x = data + b * kLanes;
      for (int l = 0; l < kLanes; ++l) {
        const float v = x[l];
        const bool finite = v > -kInf && v < kInf;  // false for NaN
        lane_max[l] = std::max(lane_max[l], finite ? v : -kInf);
        lane_flags[l] |= (v == kInf ? kHasInf : 0) | (!(v == v) || v == -kInf ? kHasBad : 0);
      }
    }
    float thread_max = -kInf;
    int thread_flags = 0;
    for (int l = 0; l < kLanes; ++l) {
      thread_max = std::max(thread_max, lane_max[l]);
      thread_flags |= lane_flags[l];
    }
#pragma omp critical(gw_clamp_and_normalize)
    {
      max_finite = std::max(max_finite, thread_max);
      flags |= thread_flags;
    }
  }
  for (std::int64_t i = size / kLanes * kLanes; i < size; ++i) {
    const float v = data[i];
    if (v > -kInf && v < kInf) max_finite = std::max(max_finite, v);
    flags |= (v == kInf ? kHasInf : 0) | (!(v == v) || v == -kInf ? kHasBad : 0);
  }
  const bool any_inf = (flags & kHasInf) != 0;
  const bool any_bad = (flags & kHasBad) != 0;
  if (any_bad) {
    std::int64_t first_bad = 0;
    while (data[first_bad] == data[first_bad] && data[first_bad] != -kInf) ++first_bad;
    GW_THROW(ErrorCode::kBadData,
             "distance block has " << data[first_bad] << " at flat position " << first_bad
                                   << "; distances must be non-negative numbers or +inf "
                                      "(unreachable)");
  }

  // Unreachable pairs sit "beyond" every reachable one; with nothing finite and positive to
  // scale from, 1 is the natural unit.
  const float inf_value = max_finite > 0.0f ? 1.5f * max_finite : 1.0f;
  const float block_max = any_inf ? std::max(inf_value, max_finite) : max_finite;
  const bool divide = normalize && size > 0 && block_max > 0.0f;
  if (!any_inf && !divide) return 1.0;

  // Pass 2. Division, not multiplication by a reciprocal, so the largest entry becomes exactly 1.
  const float divisor = divide ? block_max : 1.0f;
#pragma omp parallel for simd if (size >= kParallelThreshold) schedule(simd : dynamic, kChunk)
  for (std::int64_t i = 0; i < size; ++i) {
    const float v = data[i];
    data[i] = (v == kInf ? inf_value : v) / divisor;
  }
  return divisor;
}

}  // namespace gw
