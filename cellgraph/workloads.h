// Synthetic inputs of the sizes the graph-cell kernels meet in training pipelines, for benchmarks
// and tests (bench/README.md, bench/RESULTS.md). Every generator is seeded (gw::Rng) and
// reproducible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cellgraph/diffusion.h"
#include "cellgraph/edge_masks.h"
#include "core/rng.h"
#include "core/types.h"
#include "graph/builder.h"

namespace gw {

struct SyntheticEdgeType {
  std::string name;
  bool directed = false;
  EdgeList edges;  // unweighted
};

// Edge counts of the nine edge types of the yeast gene graph the workload imitates (6,607 genes):
// 144,211; 44,310 (directed); 207,250 (directed, one hub of out-degree 4,908); 153,320; 18,394;
// 17,692; 1,002,806; 828,701; 79,224 (including one self loop per gene).
inline constexpr Index kYeastGenes = 6607;
inline constexpr Offset kYeastTypeEdges[9] = {
    144211, 44310, 207250, 153320, 18394, 17692, 1002806, 828701, 79224};
inline constexpr Offset kYeastHubDegree = 4908;

// Random graphs with exactly those counts over `num_genes` genes: endpoints drawn with a skewed
// (Zipf-like, exponent 0.5) popularity over a random ranking of the genes, node pairs distinct
// within a type (ordered pairs for directed types, unordered for undirected ones, each stored
// once), no self loops except the last type's one per gene, and in type 2 one hub gene with
// kYeastHubDegree out-edges (the hub takes no other edges). num_genes must exceed the hub degree.
std::vector<SyntheticEdgeType> synthetic_yeast_graph(std::uint64_t seed,
                                                     Index num_genes = kYeastGenes);

// An owning perturbation batch (see PerturbationBatch).
struct PerturbationSet {
  std::vector<Index> ids;
  std::vector<Offset> ptr;
  PerturbationBatch view() const { return {ids, ptr}; }
};

// `samples` samples of `per_sample` distinct genes each, uniform over [0, num_genes).
PerturbationSet random_perturbations(Rng& rng, Index num_genes, Index samples, Index per_sample);

// An owning batch of diffusion graphs (see DiffusionGraphs).
struct DiffusionGraphSet {
  std::vector<Index> num_nodes;
  std::vector<Offset> edge_ptr;
  std::vector<Index> src;
  std::vector<Index> dst;
  DiffusionGraphs view() const { return {num_nodes, edge_ptr, src, dst, {}}; }
};

// B random graphs for a padded length S: n_b uniform in [ceil(3S/4), S], and
// round(edges_per_node * n_b / 2) random node pairs (u != v, parallel pairs possible) given once
// each, meant to be diffused with symmetrize = true, i.e. ~edges_per_node stored edges per node.
DiffusionGraphSet random_diffusion_graphs(Rng& rng,
                                          Index batch,
                                          Index seq_len,
                                          double edges_per_node = 5.0);

}  // namespace gw
