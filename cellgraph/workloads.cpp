#include "cellgraph/workloads.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "core/error.h"

namespace gw {

namespace {

// Draws genes with probability proportional to (rank + 1)^-0.5 over a fixed random ranking, by
// binary search in the cumulative weights.
class SkewedGenes {
 public:
  SkewedGenes(Rng& rng, Index num_genes, Index excluded) {
    genes_.resize(num_genes);
    std::iota(genes_.begin(), genes_.end(), 0);
    rng.shuffle(std::span<Index>(genes_));
    if (excluded >= 0) genes_.erase(std::find(genes_.begin(), genes_.end(), excluded));
    cumulative_.resize(genes_.size());
    double total = 0.0;
    for (std::size_t r = 0; r < genes_.size(); ++r) {
      total += 1.0 / std::sqrt(static_cast<double>(r) + 1.0);
      cumulative_[r] = total;
    }
  }
  Index draw(Rng& rng) const {
    const double u = rng.uniform() * cumulative_.back();
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    const std::size_t r = std::min<std::size_t>(it - cumulative_.begin(), genes_.size() - 1);
    return genes_[r];
  }

 private:
  std::vector<Index> genes_;
  std::vector<double> cumulative_;
};

}  // namespace

std::vector<SyntheticEdgeType> synthetic_yeast_graph(std::uint64_t seed, Index num_genes) {
  GW_CHECK(
      num_genes > kYeastHubDegree,
      "synthetic_yeast_graph: need more than " << kYeastHubDegree << " genes, got " << num_genes);
  std::vector<SyntheticEdgeType> types(9);
  for (int t = 0; t < 9; ++t) {
    Rng rng(seed, static_cast<std::uint64_t>(t));
    SyntheticEdgeType& type = types[t];
    type.name = "type_" + std::to_string(t);
    type.directed = (t == 1 || t == 2);
    const Offset target = kYeastTypeEdges[t];
    std::unordered_set<std::uint64_t> seen;
    seen.reserve(static_cast<std::size_t>(target) * 2);
    auto add = [&](Index u, Index v) {
      const Index a = type.directed ? u : std::min(u, v);
      const Index b = type.directed ? v : std::max(u, v);
      const std::uint64_t key = static_cast<std::uint64_t>(a) * num_genes + b;
      if (!seen.insert(key).second) return false;
      type.edges.src.push_back(u);
      type.edges.dst.push_back(v);
      return true;
    };
    Index hub = -1;
    if (t == 2) {
      hub = static_cast<Index>(rng.uniform_index(num_genes));
      std::vector<Index> others;
      for (Index g = 0; g < num_genes; ++g) {
        if (g != hub) others.push_back(g);
      }
      rng.shuffle(std::span<Index>(others));
      for (Offset i = 0; i < kYeastHubDegree; ++i) add(hub, others[i]);
    }
    if (t == 8) {
      for (Index g = 0; g < num_genes; ++g) add(g, g);
    }
    const SkewedGenes genes(rng, num_genes, hub);
    while (static_cast<Offset>(type.edges.src.size()) < target) {
      const Index u = genes.draw(rng);
      const Index v = genes.draw(rng);
      if (u != v) add(u, v);
    }
  }
  return types;
}

PerturbationSet random_perturbations(Rng& rng, Index num_genes, Index samples, Index per_sample) {
  GW_CHECK(
      per_sample >= 0 && per_sample <= num_genes,
      "random_perturbations: " << per_sample << " distinct genes per sample out of " << num_genes);
  PerturbationSet set;
  set.ptr.push_back(0);
  for (Index b = 0; b < samples; ++b) {
    const Offset start = static_cast<Offset>(set.ids.size());
    while (static_cast<Offset>(set.ids.size()) - start < per_sample) {
      const Index g = static_cast<Index>(rng.uniform_index(num_genes));
      if (std::find(set.ids.begin() + start, set.ids.end(), g) == set.ids.end()) {
        set.ids.push_back(g);
      }
    }
    set.ptr.push_back(static_cast<Offset>(set.ids.size()));
  }
  return set;
}

DiffusionGraphSet random_diffusion_graphs(Rng& rng,
                                          Index batch,
                                          Index seq_len,
                                          double edges_per_node) {
  DiffusionGraphSet set;
  set.edge_ptr.push_back(0);
  const Index low = (3 * seq_len + 3) / 4;
  for (Index b = 0; b < batch; ++b) {
    const Index n = low + static_cast<Index>(rng.uniform_index(seq_len - low + 1));
    set.num_nodes.push_back(n);
    const Offset pairs = n < 2 ? 0 : std::llround(edges_per_node * n / 2.0);
    for (Offset e = 0; e < pairs; ++e) {
      const Index u = static_cast<Index>(rng.uniform_index(n));
      Index v = static_cast<Index>(rng.uniform_index(n - 1));
      if (v >= u) ++v;
      set.src.push_back(u);
      set.dst.push_back(v);
    }
    set.edge_ptr.push_back(static_cast<Offset>(set.src.size()));
  }
  return set;
}

}  // namespace gw
