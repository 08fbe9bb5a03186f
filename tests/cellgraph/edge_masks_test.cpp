#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cellgraph/edge_masks.h"
#include "cellgraph/edge_masks_reference.h"
#include "cellgraph/workloads.h"
#include "cellgraph_test_util.h"
#include "core/error.h"
#include "core/rng.h"
#include "graph/builder.h"
#include "test_util.h"

namespace gw {
namespace {

using test::expect_error;

// The hand-checked gene graph: 5 genes, an undirected type (stored once per pair, with a self
// loop) and a directed type (with a self loop and both directions of 0 <-> 2).
struct SmallGraph {
  EdgeList undirected{{0, 1, 2, 3, 4}, {1, 2, 3, 4, 4}, {}};
  EdgeList directed{{0, 2, 1, 3, 4, 2}, {2, 0, 1, 1, 0, 3}, {}};
  // Samples: {1}, {} (empty), {4, 4} (a repeated id), {0, 3}.
  std::vector<Index> ids{1, 4, 4, 0, 3};
  std::vector<Offset> ptr{0, 1, 1, 3, 5};
  PerturbationBatch batch() const { return {ids, ptr}; }
};

TEST(EdgeMasks, HandCheckedSmallGraph) {
  const SmallGraph g;
  EdgeMasker masker(5);
  ASSERT_EQ(masker.add_type("ppi", g.undirected.view()), 0);
  ASSERT_EQ(masker.add_type("regulation", g.directed.view()), 1);
  EXPECT_EQ(masker.num_types(), 2);
  EXPECT_EQ(masker.total_edges(), 11);
  EXPECT_EQ(masker.max_incident(1), 3);  // gene 0: edges 0, 1, 4; gene 2: edges 0, 1, 5

  // Undirected: s0 {1} drops (0,1) (1,2); s2 {4} drops (3,4) and the loop (4,4); s3 {0,3} drops
  // (0,1) (2,3) (3,4).
  const std::vector<std::uint8_t> keep0 = {0, 0, 1, 1, 1,  //
                                           1, 1, 1, 1, 1,  //
                                           1, 1, 1, 0, 0,  //
                                           0, 1, 0, 0, 1};
  // Directed (direction ignored): s0 {1} drops 1->1 and 3->1; s2 {4} drops 4->0; s3 {0,3} drops
  // 0->2, 2->0, 3->1, 4->0, 2->3 and keeps only the loop 1->1.
  const std::vector<std::uint8_t> keep1 = {1, 1, 0, 0, 1, 1,  //
                                           1, 1, 1, 1, 1, 1,  //
                                           1, 1, 1, 1, 0, 1,  //
                                           0, 0, 1, 0, 0, 0};
  EXPECT_EQ(masker.keep_mask(0, g.batch()), keep0);
  EXPECT_EQ(masker.keep_mask(1, g.batch()), keep1);

  const std::vector<RemovedEdges> removed = masker.removed_edges(g.batch());
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].positions, (std::vector<Offset>{0, 1, 13, 14, 15, 17, 18}));
  EXPECT_EQ(removed[0].ptr, (std::vector<Offset>{0, 2, 2, 4, 7}));
  EXPECT_EQ(removed[0].num_edges, 5);
  EXPECT_EQ(removed[1].positions, (std::vector<Offset>{2, 3, 16, 18, 19, 21, 22, 23}));
  EXPECT_EQ(removed[1].ptr, (std::vector<Offset>{0, 2, 2, 3, 8}));
  EXPECT_EQ(removed[1].num_edges, 6);
  // The single-type call gives the same list.
  const RemovedEdges single = masker.removed_edges(1, g.batch());
  EXPECT_EQ(single.positions, removed[1].positions);
  EXPECT_EQ(single.ptr, removed[1].ptr);

  // Filtered edge list of the directed type: batch node ids b * 5 + gene.
  const BatchEdgeList kept = masker.filter_edges(1, removed[1]);
  EXPECT_EQ(kept.ptr, (std::vector<Offset>{0, 4, 10, 15, 16}));
  EXPECT_EQ(std::vector<Index>(kept.src.begin(), kept.src.begin() + 4),
            (std::vector<Index>{0, 2, 4, 2}));
  EXPECT_EQ(std::vector<Index>(kept.dst.begin(), kept.dst.begin() + 4),
            (std::vector<Index>{2, 0, 0, 3}));
  EXPECT_EQ(std::vector<Offset>(kept.edge_ids.begin(), kept.edge_ids.begin() + 4),
            (std::vector<Offset>{0, 1, 4, 5}));
  EXPECT_EQ(kept.src.back(), 15 + 1);  // sample 3 keeps only the loop 1 -> 1
  EXPECT_EQ(kept.dst.back(), 15 + 1);
  EXPECT_EQ(kept.edge_ids.back(), 2);
}

TEST(EdgeMasks, CsrTypesUseCsrPositions) {
  const SmallGraph g;
  const CsrGraph csr = build_csr(5, g.directed.view());
  EdgeMasker masker(5);
  masker.add_type("regulation", csr.view());
  const EdgeList csr_edges = to_edge_list(csr);
  const RemovedEdges expected = removed_edges_reference(5, csr_edges.view(), g.batch());
  const RemovedEdges got = masker.removed_edges(0, g.batch());
  EXPECT_EQ(got.positions, expected.positions);
  EXPECT_EQ(got.ptr, expected.ptr);
  EXPECT_EQ(masker.keep_mask(0, g.batch()), keep_mask_reference(5, csr_edges.view(), g.batch()));
}

// Random multigraphs (self loops, parallel edges) and batches with empty samples and repeated ids.
TEST(EdgeMasks, RandomBatchesMatchTheOracleInBothForms) {
  Rng rng(20261121);
  for (int trial = 0; trial < 100; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform_index(60));
    const int types = 1 + static_cast<int>(rng.uniform_index(3));
    std::vector<EdgeList> edge_lists;
    EdgeMasker masker(n, EdgeMaskOptions{1 + static_cast<int>(rng.uniform_index(2))});
    for (int t = 0; t < types; ++t) {
      const Offset m = static_cast<Offset>(rng.uniform_index(4 * n + 1));
      edge_lists.push_back(test::random_edges(rng, n, m, /*weighted=*/false));
      masker.add_type(std::to_string(t), edge_lists.back().view());
    }
    const Index samples = static_cast<Index>(rng.uniform_index(9));
    PerturbationSet batch;
    batch.ptr.push_back(0);
    for (Index b = 0; b < samples; ++b) {
      // Up to 12 ids so that both the pairwise merge and the sort path run.
      const Index count = static_cast<Index>(rng.uniform_index(rng.uniform_index(2) ? 4 : 13));
      for (Index i = 0; i < count; ++i)
        batch.ids.push_back(static_cast<Index>(rng.uniform_index(n)));
      batch.ptr.push_back(static_cast<Offset>(batch.ids.size()));
    }
    const std::vector<RemovedEdges> removed = masker.removed_edges(batch.view());
    for (int t = 0; t < types; ++t) {
      SCOPED_TRACE(::testing::Message() << "trial " << trial << ", type " << t);
      const EdgeListView edges = edge_lists[t].view();
      const std::vector<std::uint8_t> keep_ref = keep_mask_reference(n, edges, batch.view());
      const RemovedEdges removed_ref = removed_edges_reference(n, edges, batch.view());
      const std::vector<std::uint8_t> keep = masker.keep_mask(t, batch.view());
      EXPECT_EQ(keep, keep_ref);
      EXPECT_EQ(removed[t].positions, removed_ref.positions);
      EXPECT_EQ(removed[t].ptr, removed_ref.ptr);
      EXPECT_EQ(removed[t].num_edges, edges.src.size());
      // The two forms agree: the removal list is exactly the zeros of the mask.
      std::vector<std::uint8_t> from_list(keep.size(), 1);
      for (Offset p : removed[t].positions) from_list[p] = 0;
      EXPECT_EQ(from_list, keep);
      // Filtering by the list, by the mask and by the oracle give one edge list.
      const BatchEdgeList by_list = masker.filter_edges(t, removed[t]);
      const BatchEdgeList by_mask = masker.filter_edges(t, keep, samples);
      const BatchEdgeList by_ref = filter_edges_reference(n, edges, keep_ref, samples);
      for (const BatchEdgeList* got : {&by_list, &by_mask}) {
        EXPECT_EQ(got->src, by_ref.src);
        EXPECT_EQ(got->dst, by_ref.dst);
        EXPECT_EQ(got->edge_ids, by_ref.edge_ids);
        EXPECT_EQ(got->ptr, by_ref.ptr);
      }
    }
  }
}

TEST(EdgeMasks, FewerSamplesThanThreadsStillFillEveryByte) {
  Rng rng(7);
  const EdgeList edges = test::random_edges(rng, 300, 200000, false);
  EdgeMasker masker(300, EdgeMaskOptions{2});
  masker.add_type("big", edges.view());
  const std::vector<Index> ids = {5};
  const std::vector<Offset> ptr = {0, 1};
  const PerturbationBatch batch{ids, ptr};
  std::vector<std::uint8_t> keep(200000, 7);
  masker.keep_mask(0, batch, keep);
  EXPECT_EQ(keep, keep_mask_reference(300, edges.view(), batch));
}

TEST(EdgeMasks, EmptyBatchAndEmptyType) {
  EdgeMasker masker(4);
  masker.add_type("none", EdgeListView{});
  const std::vector<Index> ids;
  const std::vector<Offset> ptr = {0};
  const PerturbationBatch empty{ids, ptr};
  const std::vector<RemovedEdges> removed = masker.removed_edges(empty);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_TRUE(removed[0].positions.empty());
  EXPECT_EQ(removed[0].ptr, (std::vector<Offset>{0}));
  EXPECT_TRUE(masker.keep_mask(0, empty).empty());
  const std::vector<Index> ids2 = {1, 2};
  const std::vector<Offset> ptr2 = {0, 2, 2};
  const RemovedEdges r = masker.removed_edges(0, PerturbationBatch{ids2, ptr2});
  EXPECT_EQ(r.ptr, (std::vector<Offset>{0, 0, 0}));
  EXPECT_EQ(masker.filter_edges(0, r).ptr, (std::vector<Offset>{0, 0, 0}));
}

TEST(EdgeMasks, RejectsOutOfRangeIdsAndNamesThem) {
  const SmallGraph g;
  EdgeMasker masker(5);
  masker.add_type("ppi", g.undirected.view());
  const std::vector<Index> ids = {7, 1, 2, -1, 5};
  const std::vector<Offset> ptr = {0, 2, 3, 5};
  const PerturbationBatch batch{ids, ptr};
  for (const auto& fn : std::vector<std::function<void()>>{[&] { masker.removed_edges(batch); },
                                                           [&] { masker.removed_edges(0, batch); },
                                                           [&] { masker.keep_mask(0, batch); }}) {
    expect_error(fn,
                 ErrorCode::kBadData,
                 "3 gene ids outside [0, 5): 7 (sample 0), -1 (sample 2), 5 (sample 2)");
  }
}

TEST(EdgeMasks, RejectsInconsistentPtr) {
  EdgeMasker masker(5);
  masker.add_type("ppi", SmallGraph{}.undirected.view());
  const std::vector<Index> ids = {1, 2, 3};
  auto call = [&](std::vector<Offset> ptr) { masker.removed_edges(PerturbationBatch{ids, ptr}); };
  expect_error([&] { call({}); }, ErrorCode::kInvalidArgument, "ptr is empty");
  expect_error([&] { call({1, 3}); }, ErrorCode::kInvalidArgument, "ptr[0] = 1");
  expect_error(
      [&] {
        call({0, 2, 1, 3});
      },
      ErrorCode::kInvalidArgument,
      "ptr decreases at sample 1");
  expect_error(
      [&] {
        call({0, 2});
      },
      ErrorCode::kInvalidArgument,
      "ptr ends at 2 but there are 3 ids");
}

TEST(EdgeMasks, RejectsMisuse) {
  const SmallGraph g;
  EdgeMasker masker(5);
  masker.add_type("ppi", g.undirected.view());
  std::vector<std::uint8_t> small(3);
  expect_error([&] { masker.keep_mask(0, g.batch(), small); },
               ErrorCode::kInvalidArgument,
               "it needs B * E = 4 * 5");
  expect_error([&] { masker.keep_mask(2, g.batch()); },
               ErrorCode::kInvalidArgument,
               "edge type 2 outside [0, 1)");
  const EdgeList bad{{0, 9}, {1, 1}, {}};
  expect_error([&] { masker.add_type("bad", bad.view()); }, ErrorCode::kBadData, "edge 1 (9 -> 1)");
  RemovedEdges wrong = masker.removed_edges(0, g.batch());
  wrong.num_edges = 6;
  expect_error(
      [&] { masker.filter_edges(0, wrong); }, ErrorCode::kInvalidArgument, "for a type of 6 edges");
  RemovedEdges unsorted = masker.removed_edges(0, g.batch());
  std::swap(unsorted.positions[0], unsorted.positions[1]);
  expect_error(
      [&] { masker.filter_edges(0, unsorted); }, ErrorCode::kInvalidArgument, "not ascending");
  const CsrGraph other = build_csr(6, EdgeListView{});
  expect_error([&] { masker.add_type("other", other.view()); },
               ErrorCode::kInvalidArgument,
               "has 6 nodes but the gene graph has 5");
}

TEST(EdgeMasks, SyntheticYeastGraphHasTheRealSizes) {
  const std::vector<SyntheticEdgeType> types = synthetic_yeast_graph(3);
  ASSERT_EQ(types.size(), 9u);
  EdgeMasker masker(kYeastGenes);
  for (int t = 0; t < 9; ++t) {
    EXPECT_EQ(types[t].edges.size(), kYeastTypeEdges[t]) << t;
    masker.add_type(types[t].name, types[t].edges.view());
  }
  EXPECT_EQ(masker.max_incident(2), kYeastHubDegree);
  Offset loops = 0;
  for (Offset e = 0; e < types[8].edges.size(); ++e)
    loops += types[8].edges.src[e] == types[8].edges.dst[e];
  EXPECT_EQ(loops, kYeastGenes);
  // A batch of triples on the real-size graph against the oracle, all types.
  Rng rng(11);
  const PerturbationSet batch = random_perturbations(rng, kYeastGenes, 24, 3);
  const std::vector<RemovedEdges> removed = masker.removed_edges(batch.view());
  for (int t = 0; t < 9; ++t) {
    const RemovedEdges ref =
        removed_edges_reference(kYeastGenes, types[t].edges.view(), batch.view());
    EXPECT_EQ(removed[t].positions, ref.positions) << t;
    EXPECT_EQ(removed[t].ptr, ref.ptr) << t;
  }
}

}  // namespace
}  // namespace gw
