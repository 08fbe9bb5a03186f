#include "cellgraph/aggregate.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>

#include "cellgraph/aggregate_kernels_impl.h"
#include "core/context.h"
#include "core/error.h"

namespace gw {

namespace {

// Per-part id histograms (dense ids) cost parts x (id range) counters; above this many the parts
// are reduced (down to one, a serial count).
constexpr Offset kHistogramBudget = Offset{1} << 24;
// Ids below max(this, 2 * tokens) use a direct id -> gene table.
constexpr Offset kDenseRange = Offset{1} << 22;

// Bytes of double sums one thread keeps per chunk of genes: 5/8 of its share of the last-level
// cache (the rest holds the streamed rows and ids), at least 1 MiB.
Offset chunk_sum_budget(int threads) {
  static const long llc = [] {
    long bytes = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (bytes <= 0) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return bytes > 0 ? bytes : 8L << 20;
  }();
  return std::max<Offset>(Offset{1} << 20, static_cast<Offset>(llc) * 5 / 8 / threads);
}

void check_inputs(std::size_t embeddings,
                  std::span<const Index> gene_ids,
                  std::span<const Index> lengths,
                  Index batch,
                  Index seq_len,
                  Index hidden,
                  Offset sum_cache_bytes) {
  GW_CHECK(
      batch >= 0 && seq_len >= 0,
      "aggregate_by_gene: batch and seq_len must be >= 0, got " << batch << " and " << seq_len);
  GW_CHECK(hidden >= 1, "aggregate_by_gene: hidden must be >= 1, got " << hidden);
  GW_CHECK(sum_cache_bytes >= 0,
           "aggregate_by_gene: sum_cache_bytes must be >= 0 (0 = detect), got " << sum_cache_bytes);
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
  check_inputs(
      embeddings.size(), gene_ids, lengths, batch, seq_len, hidden, options.sum_cache_bytes);
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

  // Distinct ids and their compact gene index u: a direct id -> u table (dense ids), or the
  // sorted distinct ids and every valid token's u (sparse ids).
  std::vector<Index> compact;        // dense: id -> u (or -1)
  std::vector<Index> position_gene;  // sparse: [B, T], u of every valid token
  const Offset range = static_cast<Offset>(max_id) + 1;
  const bool dense = range <= std::max(kDenseRange, 2 * tokens);
  if (dense) {
    // Per part (a contiguous range of rows) a histogram of the ids.
    const int parts = static_cast<int>(std::clamp<Offset>(kHistogramBudget / range, 1, threads));
    std::vector<std::vector<Offset>> hist(parts);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) {
      hist[p].assign(range, 0);
      const Index b0 = static_cast<Index>(static_cast<Offset>(batch) * p / parts);
      const Index b1 = static_cast<Index>(static_cast<Offset>(batch) * (p + 1) / parts);
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
    out.counts.assign(out.gene_ids.size(), 0);
    position_gene.resize(static_cast<std::size_t>(batch) * seq_len);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (Index b = 0; b < batch; ++b) {
      const Offset row = static_cast<Offset>(b) * seq_len;
      for (Index t = first; t < lengths[b]; ++t) {
        position_gene[row + t] = static_cast<Index>(
            std::lower_bound(out.gene_ids.begin(), out.gene_ids.end(), gene_ids[row + t]) -
            out.gene_ids.begin());
      }
    }
    for (Index b = 0; b < batch; ++b) {
      const Offset row = static_cast<Offset>(b) * seq_len;
      for (Index t = first; t < lengths[b]; ++t) ++out.counts[position_gene[row + t]];
    }
  }
  const Offset genes = static_cast<Offset>(out.gene_ids.size());

  // Chunks of consecutive genes with about equal token counts, each chunk's double sums small
  // enough to stay in the thread's share of the last-level cache, and at least one chunk per
  // thread (a multiple of the thread count, so the threads finish together).
  const Offset row_sum_bytes = static_cast<Offset>(hidden) * sizeof(double);
  const Offset budget =
      options.sum_cache_bytes > 0 ? options.sum_cache_bytes : chunk_sum_budget(threads);
  const Offset max_chunk_genes = std::max<Offset>(1, budget / row_sum_bytes);
  Offset chunks = std::max<Offset>(threads, (genes + max_chunk_genes - 1) / max_chunk_genes);
  chunks = std::min(genes, (chunks + threads - 1) / threads * threads);
  std::vector<Offset> chunk_first{0};  // chunk c holds genes [chunk_first[c], chunk_first[c + 1])
  {
    Offset cumulative = 0;
    for (Offset u = 0; u < genes; ++u) {
      cumulative += out.counts[u];
      // Close the chunk after u when the boundary is nearer after u than after u + 1.
      const Offset next_half = u + 1 < genes ? out.counts[u + 1] / 2 : 0;
      const Offset closed = static_cast<Offset>(chunk_first.size());  // chunks so far + 1
      const bool quota = (cumulative + next_half) * chunks >= tokens * closed;
      if (u + 1 < genes && (quota || u + 1 - chunk_first.back() >= max_chunk_genes)) {
        chunk_first.push_back(u + 1);
      }
    }
    chunk_first.push_back(genes);
  }
  const Offset chunk_count = static_cast<Offset>(chunk_first.size()) - 1;
  Offset widest = 0;
  for (Offset c = 0; c < chunk_count; ++c) {
    widest = std::max(widest, chunk_first[c + 1] - chunk_first[c]);
  }

  // Per chunk, one pass over the ids in row-major order adding the rows of its genes' tokens to
  // their sums, which stay in cache: every row is read once in all, each chunk's rows in address
  // order, and every gene's tokens are summed in token order whatever the thread count.
  out.mean.resize(static_cast<std::size_t>(genes) * hidden);
  const T* emb = embeddings.data();
  // The sums run in the active instruction-set target's copy (aggregate_isa.cpp).
  const detail::RowSumFn<T> row_sum = detail::aggregate_kernels().row_sum<T>();
  const Index* id_table = dense ? gene_ids.data() : position_gene.data();
  const Index* lookup = dense ? compact.data() : nullptr;
  const int teams = static_cast<int>(std::min<Offset>(threads, chunk_count));
#pragma omp parallel num_threads(teams)
  {
    std::vector<double> acc(static_cast<std::size_t>(widest) * hidden);
#pragma omp for schedule(dynamic, 1)
    for (Offset c = 0; c < chunk_count; ++c) {
      const Offset u0 = chunk_first[c];
      const Offset u1 = chunk_first[c + 1];
      std::fill(acc.begin(), acc.begin() + (u1 - u0) * hidden, 0.0);
      for (Index b = 0; b < batch; ++b) {
        const Offset row = static_cast<Offset>(b) * seq_len;
        row_sum(emb + row * hidden,
                id_table + row,
                lookup,
                first,
                lengths[b],
                static_cast<Index>(u0),
                static_cast<Index>(u1),
                hidden,
                acc.data());
      }
      // A division, not a multiplication by the inverse: the same rounding as the reference.
      for (Offset u = u0; u < u1; ++u) {
        const double count = static_cast<double>(out.counts[u]);
        const double* sum = acc.data() + (u - u0) * hidden;
        T* mean = out.mean.data() + u * hidden;
        for (Index h = 0; h < hidden; ++h) mean[h] = static_cast<T>(sum[h] / count);
      }
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
