// Per-sample edge masks of a multi-edge-type gene graph from sets of perturbed genes
// (docs/architecture.md section 1).
//
// A gene graph has n genes and T edge types; type t is a list of E_t edges src[e] -> dst[e]
// (directed or undirected, self loops allowed, parallel edges allowed; an undirected graph stored
// with both directions has two edge positions per pair). A batch of B samples names the perturbed
// genes of each sample. Edge e of type t is dropped in sample b iff src[e] or dst[e] is perturbed
// in b (direction is ignored). Two output forms, per type:
//   dense keep-mask   uint8 [B * E_t], 0/1: sample b owns [b * E_t, (b + 1) * E_t) and
//                     keep[b * E_t + e] = 0 iff edge e is dropped in sample b;
//   removal list      the dropped global positions p = b * E_t + e, ascending, with a ptr
//                     (B + 1): sample b's positions are positions[ptr[b] .. ptr[b+1]).
// The removal list is the recommended form: a sample of 1-3 genes drops ~0.1% of the edges, so it
// is ~1000x smaller than the mask and costs O(removed) instead of O(B * E) to produce.
//
// Perturbation batches are a flat id array + ptr, as PyTorch Geometric batches them: sample b
// perturbs ids[ptr[b] .. ptr[b+1]). Empty samples and repeated ids are fine. ptr must have B + 1
// entries, start at 0, never decrease and end at ids.size() (ErrorCode::kInvalidArgument
// otherwise); an id outside [0, n) is ErrorCode::kBadData, and the message lists every bad id
// with its sample.
//
// The CUDA version of the same operations is gw::CudaEdgeMasker (cellgraph/cuda_edge_masks.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/types.h"
#include "graph/builder.h"
#include "graph/csr_graph.h"
#include "graph/incidence.h"

namespace gw {

// B perturbation samples over genes [0, n): sample b perturbs ids[ptr[b] .. ptr[b+1]).
// Non-owning; the caller keeps the arrays alive.
struct PerturbationBatch {
  std::span<const Index> ids;
  std::span<const Offset> ptr;  // B + 1 entries

  Index num_samples() const { return ptr.empty() ? 0 : static_cast<Index>(ptr.size() - 1); }
};

// Throws as described at the top of this file unless `batch` is a valid batch over `num_nodes`
// genes. `what` names the batch in messages ("perturbations of perts.h5"). O(B + ids).
void validate_perturbations(const PerturbationBatch& batch,
                            Index num_nodes,
                            std::string_view what = "perturbation batch");

// The removal list of one edge type (see the top of this file).
struct RemovedEdges {
  std::vector<Offset> positions;  // b * num_edges + e, ascending
  std::vector<Offset> ptr;        // B + 1
  Offset num_edges = 0;           // E_t: position p is edge p % E_t of sample p / E_t

  Index num_samples() const { return ptr.empty() ? 0 : static_cast<Index>(ptr.size() - 1); }
};

// The kept edges of the B concatenated copies of one edge type, for consumers that filter edges
// instead of masking them. Copy b's genes are numbered b * n + g ("batch node ids", as offset
// batching numbers them), so the arrays describe one block-diagonal graph of B * n nodes.
struct BatchEdgeList {
  std::vector<Index> src;        // batch node id of the source, b * n + src[e]
  std::vector<Index> dst;        // batch node id of the target, b * n + dst[e]
  std::vector<Offset> edge_ids;  // e: the edge's position in the type's edge list
  std::vector<Offset> ptr;       // B + 1: sample b's edges are entries [ptr[b], ptr[b+1])

  Offset size() const { return static_cast<Offset>(src.size()); }
};

struct EdgeMaskOptions {
  // CPU worker threads (0 = all available, see gw::available_threads()).
  int threads = 0;
};

// The gene graph with its node -> incident-edge index per type, built once, then queried per
// batch. Build with add_type (one call per edge type), then call the const methods.
//
// Thread-safety: add_type must not run concurrently with anything else on the same object; the
// const methods may be called from several threads at once (each runs its own OpenMP team).
// Memory: per type the edges (2 E int32) and the incidence (n + 1 + up to 2 E int64).
class EdgeMasker {
 public:
  explicit EdgeMasker(Index num_nodes, const EdgeMaskOptions& options = {});

  // Adds an edge type given as an edge list (edge e = position e) or as a CSR graph (edge e = CSR
  // position e) over the same num_nodes genes, copying it. Returns the type's index. Throws
  // kBadData naming the edge for an endpoint outside [0, num_nodes), kInvalidArgument for a CSR
  // graph with another node count or lists of different lengths. O(n + E).
  int add_type(std::string name, const EdgeListView& edges);
  int add_type(std::string name, const CsrGraphView& graph);

  Index num_nodes() const { return num_nodes_; }
  int num_types() const { return static_cast<int>(types_.size()); }
  const std::string& name(int type) const;
  Offset num_edges(int type) const;
  EdgeListView edges(int type) const;
  const Incidence& incidence(int type) const;
  // Largest number of edges touching one gene in this type (the hub degree).
  Offset max_incident(int type) const;
  // Total number of edges over all types.
  Offset total_edges() const;

  // Removal lists of every type (index = type) / of one type. Validates the batch first.
  // Per sample and type: the union of the sorted incidence lists of the sample's distinct genes
  // (branch-free pairwise merges, shortest list first; a sort beyond 8 distinct genes), so the
  // cost is O(k * sum of their degrees), independent of E. Parallel over (type, sample) once a
  // batch has 2^20 incident entries or more (smaller batches take < ~4 ms on one thread, less
  // than a thread team's barriers cost on a busy machine).
  std::vector<RemovedEdges> removed_edges(const PerturbationBatch& batch) const;
  RemovedEdges removed_edges(int type, const PerturbationBatch& batch) const;

  // Dense keep-masks. `keep` must hold B * E_t bytes; every byte is written. Validates the batch
  // first. O(B * E_t) (a fill, then the removals cleared).
  void keep_mask(int type, const PerturbationBatch& batch, std::span<std::uint8_t> keep) const;
  std::vector<std::uint8_t> keep_mask(int type, const PerturbationBatch& batch) const;

  // The kept edges of the batch, from a removal list of this type or from a dense mask of
  // `num_samples` samples. Throws kInvalidArgument when the list / mask does not belong to this
  // type (wrong E_t, wrong length, positions not ascending or outside a sample) and when
  // B * n exceeds the Index range. O(B * E_t).
  BatchEdgeList filter_edges(int type, const RemovedEdges& removed) const;
  BatchEdgeList filter_edges(int type, std::span<const std::uint8_t> keep, Index num_samples) const;

 private:
  struct Type {
    std::string name;
    std::vector<Index> src;
    std::vector<Index> dst;
    Incidence incidence;
    Offset max_incident = 0;
  };
  const Type& type_at(int type) const;
  int threads() const;

  Index num_nodes_;
  EdgeMaskOptions options_;
  std::vector<Type> types_;
};

}  // namespace gw
