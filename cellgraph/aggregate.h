// Per-gene aggregation of token embeddings: the mean embedding and token count of every gene id
// that occurs in a batch of tokenized cells (docs/architecture.md section 1).
//
// Layout: B rows (cells) of T tokens.
//   embeddings  [B, T, H] row-major: token (b, t) is embeddings[(b * T + t) * H .. + H)
//   gene_ids    [B, T]: the gene id of token (b, t), an integer >= 0 (vocabulary index)
//   lengths     [B]: row b's tokens are positions [0, lengths[b]), 0 <= lengths[b] <= T; with
//               skip_cls the first of them (a leading CLS token) is excluded, so the row
//               contributes positions [1, lengths[b]). Positions >= lengths[b] are padding: their
//               ids and embeddings are never read (any value is fine there, e.g. -100 or NaN).
// A zero-length row contributes nothing; the valid range is exact (no dropped last token).
// Output: the U distinct gene ids of all valid tokens, ascending, and per id the number of its
// tokens and the mean of their embeddings. Sums are accumulated in double in token order
// (row-major), then divided by the count in double and rounded to the embedding type, so the
// result is deterministic and does not depend on the thread count.
//
// The CUDA version is gw::CudaAggregator (cellgraph/cuda_aggregate.h).
#pragma once

#include <span>
#include <vector>

#include "core/types.h"

namespace gw {

struct AggregateOptions {
  // Exclude position 0 of every row (a leading CLS token).
  bool skip_cls = false;
  // CPU worker threads (0 = all available).
  int threads = 0;
};

template <typename T>
struct GeneAggregate {
  Index hidden = 0;
  std::vector<Index> gene_ids;  // U distinct ids, ascending
  std::vector<T> mean;          // U x hidden, row-major, row u for gene_ids[u]
  std::vector<Offset> counts;   // U token counts (each >= 1)

  Index num_genes() const { return static_cast<Index>(gene_ids.size()); }
};

// Segment mean by gene id in one pass over the embeddings. Checks sizes and lengths
// (kInvalidArgument) and that every valid id is >= 0 (kBadData naming the row, position and id).
//
// Work: the ids are read twice (range, then a counting sort of token positions by gene), the
// embeddings once: per gene, its tokens' rows are summed in registers and its mean written once,
// so no shared accumulator table is ever read back. When the id range exceeds
// max(2^22, 2 * tokens) the distinct ids are found by sorting instead of a direct table
// (O(tokens log tokens)). Memory: O(id range or tokens) integers besides the output.
// Parallel over genes (OpenMP, `threads`). The rows are read in gene order, i.e. at random: on
// inputs of gigabytes, TLB misses on 4 KiB pages are part of the cost, which an embeddings buffer
// backed by transparent huge pages (madvise(MADV_HUGEPAGE) before it is filled; PyTorch:
// THP_MEM_ALLOC_ENABLE=1) avoids.
GeneAggregate<float> aggregate_by_gene(std::span<const float> embeddings,
                                       std::span<const Index> gene_ids,
                                       std::span<const Index> lengths,
                                       Index batch,
                                       Index seq_len,
                                       Index hidden,
                                       const AggregateOptions& options = {});
GeneAggregate<double> aggregate_by_gene(std::span<const double> embeddings,
                                        std::span<const Index> gene_ids,
                                        std::span<const Index> lengths,
                                        Index batch,
                                        Index seq_len,
                                        Index hidden,
                                        const AggregateOptions& options = {});

}  // namespace gw
