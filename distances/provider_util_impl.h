// Private to distances/: pieces every provider's distances_to shares.
#pragma once

#include <span>

#include "core/types.h"
#include "distances/distance_provider.h"

namespace gw::detail {

// Checks a distances_to request: every anchor in [0, n) (kInvalidArgument naming the first bad id
// and its position) and out.size() == n * anchors.size().
void check_request(std::span<const Index> anchors, Index n, std::span<float> out);

// The n x m block of distances_to from m distance rows: out[i * m + k] = rows[k][i]. A blocked
// transpose: each block of nodes is written once while the m source rows stream through.
void gather_columns(std::span<const float* const> rows, Index n, std::span<float> out, int threads);

}  // namespace gw::detail
