#include <algorithm>

#include "core/error.h"
#include "distances/provider_util_impl.h"
#include "distances/shortest_paths_impl.h"

namespace gw::detail {

void check_request(std::span<const Index> anchors, Index n, std::span<float> out) {
  check_node_ids(anchors, n, "anchor");
  GW_CHECK(out.size() == static_cast<std::size_t>(n) * anchors.size(),
           "distances_to: out has " << out.size() << " entries, expected n x m = " << n << " x "
                                    << anchors.size());
}

namespace {
// Nodes per block of the transpose: a block of the output (kBlock x m floats, m <= a few hundred)
// stays in L1/L2 while each source row contributes one contiguous kBlock-float segment.
constexpr Index kBlock = 128;
}  // namespace

void gather_columns(std::span<const float* const> rows,
                    Index n,
                    std::span<float> out,
                    int threads) {
  const std::size_t m = rows.size();
  if (m == 0 || n == 0) return;
  const Index num_blocks = (n + kBlock - 1) / kBlock;
  const float* const* src = rows.data();
  float* dst = out.data();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (num_blocks > 1)
  for (Index b = 0; b < num_blocks; ++b) {
    const Index begin = b * kBlock;
    const Index end = std::min<Index>(n, begin + kBlock);
    for (std::size_t k = 0; k < m; ++k) {
      const float* row = src[k];
      for (Index i = begin; i < end; ++i) dst[static_cast<std::size_t>(i) * m + k] = row[i];
    }
  }
}

}  // namespace gw::detail
