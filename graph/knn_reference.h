// Reference oracle for kNN search: every pair, plain loops, double precision, no threads.
// For tests only (not installed).
#pragma once

#include <span>

#include "graph/knn.h"

namespace gw {

// Same contract as knn_search (ordering by (distance, index), self excluded, k clipped to n - 1).
KnnResult knn_search_reference(std::span<const double> points, Index n, int d, int k);

}  // namespace gw
