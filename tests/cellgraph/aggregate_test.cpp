#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cellgraph/aggregate.h"
#include "cellgraph/aggregate_reference.h"
#include "cellgraph_test_util.h"
#include "core/error.h"
#include "core/rng.h"
#include "isa_test_util.h"

namespace gw {
namespace {

using test::expect_error;

// A random batch: ids drawn from a small vocabulary (so ids repeat within rows), random lengths
// including zero and full rows, NaN embeddings and invalid ids (-100) in padding positions.
struct Batch {
  Index batch, seq, hidden;
  std::vector<double> emb;
  std::vector<Index> ids;
  std::vector<Index> lengths;

  Batch(Rng& rng, Index b, Index t, Index h, Index vocabulary, Index id_stride = 1)
      : batch(b), seq(t), hidden(h) {
    emb.assign(static_cast<std::size_t>(b) * t * h, std::numeric_limits<double>::quiet_NaN());
    ids.assign(static_cast<std::size_t>(b) * t, -100);
    for (Index r = 0; r < b; ++r) {
      const std::uint64_t kind = rng.uniform_index(5);
      const Index length = kind == 0   ? 0
                           : kind == 1 ? t
                                       : static_cast<Index>(rng.uniform_index(t + 1));
      lengths.push_back(length);
      for (Index p = 0; p < length; ++p) {
        const std::size_t token = static_cast<std::size_t>(r) * t + p;
        ids[token] = static_cast<Index>(rng.uniform_index(vocabulary)) * id_stride;
        for (Index c = 0; c < h; ++c) emb[token * h + c] = 4.0 * rng.uniform() - 2.0;
      }
    }
  }
};

void expect_equal(const GeneAggregate<double>& got, const GeneAggregate<double>& ref) {
  EXPECT_EQ(got.hidden, ref.hidden);
  EXPECT_EQ(got.gene_ids, ref.gene_ids);
  EXPECT_EQ(got.counts, ref.counts);
  // Same sums in the same (token) order, same division: equal to the last bit.
  EXPECT_EQ(got.mean, ref.mean);
}

TEST(Aggregate, MatchesTheMapOracleWithRepeatsClsAndEmptyRowsOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(77);
    for (int trial = 0; trial < 30; ++trial) {
      const Index b = static_cast<Index>(rng.uniform_index(12));
      const Index t = 1 + static_cast<Index>(rng.uniform_index(40));
      const Index h = 1 + static_cast<Index>(rng.uniform_index(20));
      const Batch data(rng, b, t, h, 1 + static_cast<Index>(rng.uniform_index(30)));
      for (bool skip_cls : {false, true}) {
        SCOPED_TRACE("trial " + std::to_string(trial) + (skip_cls ? ", CLS skipped" : ""));
        AggregateOptions options;
        options.skip_cls = skip_cls;
        options.threads = 1 + trial % 2;
        const GeneAggregate<double> got = aggregate_by_gene(
            std::span<const double>(data.emb), data.ids, data.lengths, b, t, h, options);
        const GeneAggregate<double> ref = aggregate_by_gene_reference(
            std::span<const double>(data.emb), data.ids, data.lengths, b, t, h, skip_cls);
        expect_equal(got, ref);
      }
    }
  });
}

TEST(Aggregate, FloatEmbeddingsRoundTheDoubleMeanOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(8);
    const Batch data(rng, 9, 33, 12, 15);
    const std::vector<float> emb(data.emb.begin(), data.emb.end());
    const GeneAggregate<float> got =
        aggregate_by_gene(std::span<const float>(emb), data.ids, data.lengths, 9, 33, 12);
    const GeneAggregate<double> ref = aggregate_by_gene_reference(
        std::span<const float>(emb), data.ids, data.lengths, 9, 33, 12, false);
    EXPECT_EQ(got.gene_ids, ref.gene_ids);
    EXPECT_EQ(got.counts, ref.counts);
    ASSERT_EQ(got.mean.size(), ref.mean.size());
    for (std::size_t i = 0; i < got.mean.size(); ++i) {
      ASSERT_EQ(got.mean[i], static_cast<float>(ref.mean[i])) << i;
    }
  });
}

TEST(Aggregate, SparseIdsUseTheSortedPathWithTheSameResult) {
  Rng rng(99);
  // Ids up to ~2e9: beyond the direct-table range, so the distinct ids come from a sort.
  const Batch data(rng, 7, 50, 6, 40, 50000000);
  for (int threads : {1, 2}) {
    AggregateOptions options;
    options.threads = threads;
    options.skip_cls = true;
    const GeneAggregate<double> got = aggregate_by_gene(
        std::span<const double>(data.emb), data.ids, data.lengths, 7, 50, 6, options);
    expect_equal(got,
                 aggregate_by_gene_reference(
                     std::span<const double>(data.emb), data.ids, data.lengths, 7, 50, 6, true));
  }
}

TEST(Aggregate, ManyGeneChunksWithSkewedCountsMatchTheOracleForEveryThreadCount) {
  // sum_cache_bytes of 64 KiB holds 32 genes' sums of 256 doubles: ~4,500 genes make ~140
  // chunks (the default budget's chunking is what the other tests run), and the squared draw skews
  // the counts (low ids ~10x as frequent as high ones), so the chunks' gene ranges differ in
  // width. Dense and sparse ids, float and double.
  Rng rng(5);
  const Index b = 120;
  const Index t = 300;
  const Index h = 256;
  for (Index id_stride : {1, 70000}) {
    Batch data(rng, b, t, h, 1, id_stride);
    for (Index r = 0; r < b; ++r) {
      for (Index p = 0; p < data.lengths[r]; ++p) {
        const double x = rng.uniform();
        data.ids[static_cast<std::size_t>(r) * t + p] =
            static_cast<Index>(6000 * x * x) * id_stride;
        for (Index c = 0; c < h; ++c) {
          data.emb[(static_cast<std::size_t>(r) * t + p) * h + c] = 4.0 * rng.uniform() - 2.0;
        }
      }
    }
    const GeneAggregate<double> ref = aggregate_by_gene_reference(
        std::span<const double>(data.emb), data.ids, data.lengths, b, t, h, false);
    ASSERT_GT(ref.num_genes(), 4000);
    const std::vector<float> emb_f(data.emb.begin(), data.emb.end());
    const GeneAggregate<double> ref_f = aggregate_by_gene_reference(
        std::span<const float>(emb_f), data.ids, data.lengths, b, t, h, false);
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE("id stride " + std::to_string(id_stride) + ", " + std::to_string(threads) +
                   " threads");
      AggregateOptions options;
      options.threads = threads;
      options.sum_cache_bytes = 64 << 10;
      expect_equal(aggregate_by_gene(
                       std::span<const double>(data.emb), data.ids, data.lengths, b, t, h, options),
                   ref);
      const GeneAggregate<float> got_f = aggregate_by_gene(
          std::span<const float>(emb_f), data.ids, data.lengths, b, t, h, options);
      ASSERT_EQ(got_f.mean.size(), ref_f.mean.size());
      for (std::size_t i = 0; i < got_f.mean.size(); ++i) {
        ASSERT_EQ(got_f.mean[i], static_cast<float>(ref_f.mean[i])) << i;
      }
    }
  }
}

TEST(Aggregate, HandCheckedSmallBatch) {
  // Row 0: [CLS=9, 3, 5, 3], row 1: length 0, row 2: [CLS=9, 5] + padding.
  const std::vector<double> emb = {0, 0, 1,  2,  3,  4,  5,  6,  //
                                   0, 0, 0,  0,  0,  0,  0,  0,  //
                                   7, 7, 10, 20, -1, -1, -1, -1};
  const std::vector<Index> ids = {9, 3, 5, 3, 1, 1, 1, 1, 9, 5, -7, -7};
  const std::vector<Index> lengths = {4, 0, 2};
  AggregateOptions options;
  options.skip_cls = true;
  const GeneAggregate<double> got =
      aggregate_by_gene(std::span<const double>(emb), ids, lengths, 3, 4, 2, options);
  EXPECT_EQ(got.gene_ids, (std::vector<Index>{3, 5}));
  EXPECT_EQ(got.counts, (std::vector<Offset>{2, 2}));
  EXPECT_EQ(got.mean, (std::vector<double>{3, 4, 6.5, 12}));
  options.skip_cls = false;
  const GeneAggregate<double> with_cls =
      aggregate_by_gene(std::span<const double>(emb), ids, lengths, 3, 4, 2, options);
  EXPECT_EQ(with_cls.gene_ids, (std::vector<Index>{3, 5, 9}));
  EXPECT_EQ(with_cls.counts, (std::vector<Offset>{2, 2, 2}));
  EXPECT_EQ(with_cls.mean, (std::vector<double>{3, 4, 6.5, 12, 3.5, 3.5}));
}

TEST(Aggregate, NoValidTokensGivesAnEmptyResult) {
  const std::vector<float> emb(2 * 3 * 4, 1.0f);
  const std::vector<Index> ids(6, 2);
  const std::vector<Index> lengths = {0, 1};
  AggregateOptions options;
  options.skip_cls = true;
  const GeneAggregate<float> got =
      aggregate_by_gene(std::span<const float>(emb), ids, lengths, 2, 3, 4, options);
  EXPECT_EQ(got.num_genes(), 0);
  EXPECT_TRUE(got.mean.empty());
  EXPECT_EQ(got.hidden, 4);
}

TEST(Aggregate, RejectsBadInputsNamingThem) {
  const std::vector<double> emb(2 * 3 * 2, 0.0);
  const std::vector<Index> ids = {1, 2, -5, 4, -1, -1};
  const std::vector<Index> lengths = {3, 1};
  auto call = [&](std::span<const Index> l, std::size_t emb_size = 12) {
    aggregate_by_gene(std::span<const double>(emb.data(), emb_size), ids, l, 2, 3, 2);
  };
  expect_error(
      [&] { call(lengths); }, ErrorCode::kBadData, "gene id -5 at row 0, position 2 is negative");
  const std::vector<Index> ok = {2, 1};
  call(ok);  // the -5 is now padding
  const std::vector<Index> too_long = {4, 1};
  expect_error([&] { call(too_long); }, ErrorCode::kInvalidArgument, "lengths[0] = 4");
  const std::vector<Index> one = {2};
  expect_error([&] { call(one); }, ErrorCode::kInvalidArgument, "lengths hold 1 values for 2 rows");
  expect_error([&] { call(ok, 11); }, ErrorCode::kInvalidArgument, "needs 12");
}

}  // namespace
}  // namespace gw
