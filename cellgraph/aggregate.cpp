#include "cellgraph/aggregate.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstddef>

#include "cellgraph/aggregate_kernels_impl.h"
#include "core/context.h"
#include "core/error.h"

namespace gw {

namespace {

// Per-part histograms cost parts x (id range or U) counters; above this many the parts are
// reduced (down to one, a serial count).
constexpr Offset kHistogramBudget = Offset{1} << 24;
// Ids below max(this, 2 * tokens) use a direct id -> gene table.
constexpr Offset kDenseRange = Offset{1} << 22;

void check_inputs(std::size_t embeddings,
                  std::span<const Index> gene_ids,
                  std::span<const Index> lengths,
                  Index batch,
                  Index seq_len,
                  Index hidden) {
  GW_CHECK(
      batch >= 0 && seq_len >= 0,
      "aggregate_by_gene: batch and seq_len must be >= 0, got " << batch << " and " << seq_len);
  GW_CHECK(hidden >= 1, "aggregate_by_gene: hidden must be >= 1, got " << hidden);
  const std::size_t tokens = static_cast<std::size_t>(batch) * seq_len;
  GW_CHECK(embeddings == tokens * hidden,
           "aggregate_by_gene: embeddings hold " << embeddings << " values; [B, T, H] = [" << batch
                                                 << ", " << seq_len << ", " << hidden << "] needs "
                                                 << tokens * hidden);
  GW_CHECK(gene_ids.size() == tokens,
           "aggregate_by_gene: gene_ids hold " << gene_ids.size() << " values; [B, T] = [" << batch
                                               << ", " << seq_len << "] needs " << tokens);
  GW_CHECK(
      lengths.size() == static_cast<std::size_t>(batch),
      "aggregate_by_gene: lengths hold " << lengths.size() << " values for " << batch << " rows");
  for (Index b = 0; b < batch; ++b) {
    GW_CHECK(lengths[b] >= 0 && lengths[b] <= seq_len,
             "aggregate_by_gene: lengths[" << b << "] = " << lengths[b] << " is outside [0, "
                                           << seq_len << "]");
  }
}

template <typename T>
GeneAggregate<T> aggregate(std::span<const T> embeddings,
                           std::span<const Index> gene_ids,
                           std::span<const Index> lengths,
                           Index batch,
                           Index seq_len,
                           Index hidden,
                           const AggregateOptions& options) {
  check_inputs(embeddings.size(), gene_ids, lengths, batch, seq_len, hidden);
  const int threads = resolve_threads(options.threads);
  const Index first = options.skip_cls ? 1 : 0;
  GeneAggregate<T> out;
  out.hidden = hidden;

  // Pass 1 over the ids: range, token count, any negative id.
  Index min_id = INT_MAX;
  Index max_id = -1;
  Offset tokens = 0;
#pragma omp parallel for num_threads(threads) schedule(static) \
    reduction(min : min_id) reduction(max : max_id) reduction(+ : tokens)
  for (Index b = 0; b < batch; ++b) {
    const Index* ids = gene_ids.data() + static_cast<Offset>(b) * seq_len;
    for (Index t = first; t < lengths[b]; ++t) {
      min_id = std::min(min_id, ids[t]);
      max_id = std::max(max_id, ids[t]);
    }
    tokens += std::max<Index>(lengths[b] - first, 0);
  }
  if (tokens == 0) return out;
  if (min_id < 0) {
    for (Index b = 0; b < batch; ++b) {
      for (Index t = first; t < lengths[b]; ++t) {
        const Index id = gene_ids[static_cast<Offset>(b) * seq_len + t];
        GW_CHECK_CODE(id >= 0,
                      ErrorCode::kBadData,
                      "aggregate_by_gene: gene id "
                          << id << " at row " << b << ", position " << t
                          << " is negative; valid positions need ids "
                             ">= 0 (shorten lengths[b] to exclude padding)");
      }
    }
  }

  // Distinct ids and their compact gene index u, and per part (a contiguous range of rows) the
  // number of tokens of each gene.
  const Offset range = static_cast<Offset>(max_id) + 1;
  const bool dense = range <= std::max(kDenseRange, 2 * tokens);
  std::vector<Index> compact;  // dense: id -> u (or -1)
  auto part_rows = [batch](int part, int parts) {
    return std::pair<Index, Index>(
        static_cast<Index>(static_cast<Offset>(batch) * part / parts),
        static_cast<Index>(static_cast<Offset>(batch) * (part + 1) / parts));
  };
  std::vector<std::vector<Offset>> cursor;  // [part][u]: next slot of `order` for gene u
  int parts = 1;
  if (dense) {
    parts = static_cast<int>(std::clamp<Offset>(kHistogramBudget / range, 1, threads));
    std::vector<std::vector<Offset>> hist(parts);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) {
      hist[p].assign(range, 0);
      const auto [b0, b1] = part_rows(p, parts);
      for (Index b = b0; b < b1; ++b) {
        const Index* ids = gene_ids.data() + static_cast<Offset>(b) * seq_len;
        for (Index t = first; t < lengths[b]; ++t) ++hist[p][ids[t]];
      }
    }
    compact.assign(range, -1);
    for (Index id = 0; id < range; ++id) {
      Offset total = 0;
      for (int p = 0; p < parts; ++p) total += hist[p][id];
      if (total == 0) continue;
      compact[id] = static_cast<Index>(out.gene_ids.size());
      out.gene_ids.push_back(id);
      out.counts.push_back(total);
    }
    cursor.assign(parts, std::vector<Offset>(out.gene_ids.size()));
    Offset start = 0;
    for (std::size_t u = 0; u < out.gene_ids.size(); ++u) {
      for (int p = 0; p < parts; ++p) {
        cursor[p][u] = start;
        start += hist[p][out.gene_ids[u]];
      }
    }
  } else {
    std::vector<Index> all;
    all.reserve(tokens);
    for (Index b = 0; b < batch; ++b) {
      const Index* ids = gene_ids.data() + static_cast<Offset>(b) * seq_len;
      for (Index t = first; t < lengths[b]; ++t) all.push_back(ids[t]);
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    out.gene_ids = std::move(all);
    const Offset genes = static_cast<Offset>(out.gene_ids.size());
    parts = static_cast<int>(std::clamp<Offset>(kHistogramBudget / genes, 1, threads));
    cursor.assign(parts, std::vector<Offset>(genes, 0));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) {
      const auto [b0, b1] = part_rows(p, parts);
      for (Index b = b0; b < b1; ++b) {
        const Index* ids = gene_ids.data() + static_cast<Offset>(b) * seq_len;
        for (Index t = first; t < lengths[b]; ++t) {
          const auto it = std::lower_bound(out.gene_ids.begin(), out.gene_ids.end(), ids[t]);
          ++cursor[p][it - out.gene_ids.begin()];
        }
      }
    }
    out.counts.assign(genes, 0);
    Offset start = 0;
    for (Offset u = 0; u < genes; ++u) {
      for (int p = 0; p < parts; ++p) {
        const Offset count = cursor[p][u];
        cursor[p][u] = start;
        start += count;
        out.counts[u] += count;
      }
    }
  }
  const Offset genes = static_cast<Offset>(out.gene_ids.size());
  auto lookup = [&](Index id) -> Offset {
    if (dense) return compact[id];
    return std::lower_bound(out.gene_ids.begin(), out.gene_ids.end(), id) - out.gene_ids.begin();
  };

  // Counting sort of token positions by gene; part p's tokens of gene u follow those of parts
  // < p, so every gene's tokens stay in row-major order.
  std::vector<Offset> order(tokens);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    std::vector<Offset>& next = cursor[p];
    const auto [b0, b1] = part_rows(p, parts);
    for (Index b = b0; b < b1; ++b) {
      const Offset row = static_cast<Offset>(b) * seq_len;
      for (Index t = first; t < lengths[b]; ++t) order[next[lookup(gene_ids[row + t])]++] = row + t;
    }
  }
  std::vector<Offset> gene_start(genes + 1, 0);
  for (Offset u = 0; u < genes; ++u) gene_start[u + 1] = gene_start[u] + out.counts[u];

  // One pass over the embeddings: each gene's rows summed in double, in token order.
  out.mean.resize(static_cast<std::size_t>(genes) * hidden);
  const T* emb = embeddings.data();
  // The segment sums run in the active instruction-set target's copy (aggregate_isa.cpp).
  const detail::SegmentMeanFn<T> segment_mean = detail::aggregate_kernels().segment_mean<T>();
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> acc(hidden);
#pragma omp for schedule(dynamic, 64)
    for (Offset u = 0; u < genes; ++u) {
      segment_mean(emb,
                   order.data(),
                   gene_start[u],
                   gene_start[u + 1],
                   hidden,
                   acc.data(),
                   out.mean.data() + u * hidden);
    }
  }
  return out;
}

}  // namespace

GeneAggregate<float> aggregate_by_gene(std::span<const float> embeddings,
                                       std::span<const Index> gene_ids,
                                       std::span<const Index> lengths,
                                       Index batch,
                                       Index seq_len,
                                       Index hidden,
                                       const AggregateOptions& options) {
  return aggregate<float>(embeddings, gene_ids, lengths, batch, seq_len, hidden, options);
}

GeneAggregate<double> aggregate_by_gene(std::span<const double> embeddings,
                                        std::span<const Index> gene_ids,
                                        std::span<const Index> lengths,
                                        Index batch,
                                        Index seq_len,
                                        Index hidden,
                                        const AggregateOptions& options) {
  return aggregate<double>(embeddings, gene_ids, lengths, batch, seq_len, hidden, options);
}

}  // namespace gw
