#include "graph/knn_reference.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace gw {

KnnResult knn_search_reference(std::span<const double> points, Index n, int d, int k) {
  k = std::min<Index>(k, n - 1);
  KnnResult result{n,
                   k,
                   std::vector<Index>(static_cast<std::size_t>(n) * k),
                   std::vector<float>(static_cast<std::size_t>(n) * k)};
  std::vector<std::pair<double, Index>> all;
  for (Index i = 0; i < n; ++i) {
    all.clear();
    for (Index j = 0; j < n; ++j) {
      if (j == i) continue;
      double sum = 0.0;
      for (int t = 0; t < d; ++t) {
        const double diff = points[static_cast<std::size_t>(j) * d + t] -
                            points[static_cast<std::size_t>(i) * d + t];
        sum += diff * diff;
      }
      all.emplace_back(sum, j);
    }
    std::sort(all.begin(), all.end());
    for (int t = 0; t < k; ++t) {
      result.indices[static_cast<std::size_t>(i) * k + t] = all[t].second;
      result.distances[static_cast<std::size_t>(i) * k + t] =
          static_cast<float>(std::sqrt(all[t].first));
    }
  }
  return result;
}

}  // namespace gw
