#include "cellgraph/aggregate_reference.h"

#include <map>
#include <utility>
#include <vector>

namespace gw {

namespace {

template <typename T>
GeneAggregate<double> reference(std::span<const T> embeddings,
                                std::span<const Index> gene_ids,
                                std::span<const Index> lengths,
                                Index batch,
                                Index seq_len,
                                Index hidden,
                                bool skip_cls) {
  std::map<Index, std::pair<std::vector<double>, Offset>> sums;
  for (Index b = 0; b < batch; ++b) {
    for (Index t = skip_cls ? 1 : 0; t < lengths[b]; ++t) {
      const Offset token = static_cast<Offset>(b) * seq_len + t;
      auto& [sum, count] = sums[gene_ids[token]];
      sum.resize(hidden, 0.0);
      for (Index h = 0; h < hidden; ++h) sum[h] += embeddings[token * hidden + h];
      ++count;
    }
  }
  GeneAggregate<double> out;
  out.hidden = hidden;
  for (const auto& [id, entry] : sums) {
    out.gene_ids.push_back(id);
    out.counts.push_back(entry.second);
    for (Index h = 0; h < hidden; ++h) {
      out.mean.push_back(entry.first[h] / static_cast<double>(entry.second));
    }
  }
  return out;
}

}  // namespace

GeneAggregate<double> aggregate_by_gene_reference(std::span<const double> embeddings,
                                                  std::span<const Index> gene_ids,
                                                  std::span<const Index> lengths,
                                                  Index batch,
                                                  Index seq_len,
                                                  Index hidden,
                                                  bool skip_cls) {
  return reference(embeddings, gene_ids, lengths, batch, seq_len, hidden, skip_cls);
}

GeneAggregate<double> aggregate_by_gene_reference(std::span<const float> embeddings,
                                                  std::span<const Index> gene_ids,
                                                  std::span<const Index> lengths,
                                                  Index batch,
                                                  Index seq_len,
                                                  Index hidden,
                                                  bool skip_cls) {
  return reference(embeddings, gene_ids, lengths, batch, seq_len, hidden, skip_cls);
}

}  // namespace gw
