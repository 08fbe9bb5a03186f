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

// skip_cls applies to both backends; threads and sum_cache_bytes tune the CPU code only
// (gw::CudaAggregator reads skip_cls alone).
struct AggregateOptions {
  // Exclude position 0 of every row (a leading CLS token).
  bool skip_cls = false;
  // CPU worker threads (0 = all available).
  int threads = 0;
  // Bytes of double sums one thread keeps in cache per pass over the ids (see aggregate_by_gene's
  // Work); 0 = 5/8 of the thread's share of the last-level cache, at least 1 MiB. Any value gives
  // the same result; smaller values mean more passes.
  Offset sum_cache_bytes = 0;
};

template <typename T>
struct GeneAggregate {
  Index hidden = 0;
  std::vector<Index> gene_ids;  // U distinct ids, ascending
  std::vector<T> mean;          // U x hidden, row-major, row u for gene_ids[u]
  std::vector<Offset> counts;   // U token counts (each >= 1)

  Index num_genes() const { return static_cast<Index>(gene_ids.size()); }
};

// Mean by gene id in one read of the embeddings. Checks sizes, lengths and sum_cache_bytes
// (kInvalidArgument) and that every valid id is >= 0 (kBadData naming the row, position and id).
//
// Work: the ids are read twice to find the distinct genes and their counts; then the genes are
// split into chunks of about equal token counts whose double sums (hidden doubles per gene) fit in
// sum_cache_bytes, at least one chunk per thread, and per chunk one pass over the ids in
// row-major order adds the rows of that chunk's tokens to its sums. So every embedding row is
// read once, in address order within a pass, and the ids once per chunk; the sums are read back
// from cache, not memory. When the id range exceeds max(2^22, 2 * tokens) the distinct ids are
// found by sorting instead of a direct table (O(tokens log tokens)) and each token's gene is kept
// in a B x T table. Memory: O(id range) integers (B x T with sparse ids) plus, per thread, one
// chunk's sums, besides the output. Parallel over chunks (OpenMP, `threads`).
// Measured on a 2-core AMD EPYC VM (B x T x H = 1024 x 4096 x 128 float): 3.1-5.4x the time of
// one streaming read of the embeddings (bench/RESULTS.md, "Graph-cell kernels"), limited by the
// per-token read-modify-write of a gene's sums in the last-level cache; an exact, order-fixed
// double sum per gene rules out splitting the rows between threads. On inputs of gigabytes, TLB
// misses on 4 KiB pages are part of the cost, which an embeddings buffer backed by transparent
// huge pages (madvise(MADV_HUGEPAGE) before it is filled; PyTorch: THP_MEM_ALLOC_ENABLE=1) reduces.
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
