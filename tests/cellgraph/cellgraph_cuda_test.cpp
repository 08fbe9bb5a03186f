// The cellgraph CUDA classes against the CPU versions on random inputs (ctest label "gpu"). Every
// test skips when no CUDA device is visible (always in a build without CUDA).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cellgraph/aggregate.h"
#include "cellgraph/cuda_aggregate.h"
#include "cellgraph/cuda_diffusion.h"
#include "cellgraph/cuda_edge_masks.h"
#include "cellgraph/diffusion.h"
#include "cellgraph/edge_masks.h"
#include "cellgraph/workloads.h"
#include "cellgraph_test_util.h"
#include "core/context.h"
#include "core/device_array.h"
#include "core/error.h"
#include "core/rng.h"
#include "test_util.h"

namespace gw {
namespace {

using test::expect_error;

#define GW_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
  } while (0)

// float64 on the device against float64 on the CPU: the same sums in the same order, but nvcc
// and GCC fuse different multiply-adds: a few ulp per step over 64 steps.
constexpr double kDiffusionF64Tolerance = 1e-12;
// float32: 64 steps of float rounding on values of order 1, fused differently on each side.
constexpr double kDiffusionF32Tolerance = 2e-5;
// Atomic sums in double arrive in any order: |error| <= count * 2^-53 * max |x| per gene; the
// values are in [-2, 2] and a gene has at most a few hundred tokens here.
constexpr double kAtomicsTolerance = 1e-12;

// Random multigraph types and batches with empty samples and repeated ids (as on the CPU side).
struct MaskCase {
  Index n;
  std::vector<EdgeList> types;
  PerturbationSet batch;
};

MaskCase random_mask_case(Rng& rng) {
  MaskCase c;
  c.n = 1 + static_cast<Index>(rng.uniform_index(80));
  const int types = 1 + static_cast<int>(rng.uniform_index(3));
  for (int t = 0; t < types; ++t) {
    c.types.push_back(
        test::random_edges(rng, c.n, static_cast<Offset>(rng.uniform_index(5 * c.n + 1)), false));
  }
  const Index samples = static_cast<Index>(rng.uniform_index(12));
  c.batch.ptr.push_back(0);
  for (Index b = 0; b < samples; ++b) {
    const Index count = static_cast<Index>(rng.uniform_index(6));
    for (Index i = 0; i < count; ++i)
      c.batch.ids.push_back(static_cast<Index>(rng.uniform_index(c.n)));
    c.batch.ptr.push_back(static_cast<Offset>(c.batch.ids.size()));
  }
  return c;
}

TEST(CudaEdgeMasks, RemovalListsAndMasksEqualTheCpu) {
  GW_REQUIRE_GPU();
  Rng rng(606);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    const MaskCase c = random_mask_case(rng);
    EdgeMasker cpu(c.n);
    for (std::size_t t = 0; t < c.types.size(); ++t)
      cpu.add_type(std::to_string(t), c.types[t].view());
    CudaEdgeMasker gpu(cpu);
    const std::vector<RemovedEdges> expected = cpu.removed_edges(c.batch.view());
    const std::vector<RemovedEdges> got = gpu.removed_edges(c.batch.view());
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t t = 0; t < got.size(); ++t) {
      EXPECT_EQ(got[t].positions, expected[t].positions) << t;
      EXPECT_EQ(got[t].ptr, expected[t].ptr) << t;
      EXPECT_EQ(got[t].num_edges, expected[t].num_edges) << t;
      EXPECT_EQ(gpu.keep_mask(static_cast<int>(t), c.batch.view()),
                cpu.keep_mask(static_cast<int>(t), c.batch.view()))
          << t;
    }
  }
}

TEST(CudaEdgeMasks, YeastSizedBatchThroughTheDeviceApi) {
  GW_REQUIRE_GPU();
  const std::vector<SyntheticEdgeType> types = synthetic_yeast_graph(5);
  EdgeMasker cpu(kYeastGenes);
  for (const SyntheticEdgeType& type : types) cpu.add_type(type.name, type.edges.view());
  CudaEdgeMasker gpu(cpu);
  Rng rng(12);
  for (Index batch_size : {24, 256}) {
    const PerturbationSet batch = random_perturbations(rng, kYeastGenes, batch_size, 3);
    const DeviceBatch device_batch = gpu.upload_batch(batch.view());
    gpu.removed_edges_async(device_batch);
    const std::vector<RemovedEdges> expected = cpu.removed_edges(batch.view());
    for (int t = 0; t < cpu.num_types(); ++t) {
      const DeviceRemovedEdges d = gpu.device_removed(t);
      EXPECT_EQ(d.num_samples, batch_size);
      EXPECT_EQ(d.num_edges, cpu.num_edges(t));
      EXPECT_GE(d.capacity, static_cast<Offset>(expected[t].positions.size()));
    }
    const std::vector<RemovedEdges> got = gpu.download_removed();
    for (int t = 0; t < cpu.num_types(); ++t) {
      EXPECT_EQ(got[t].positions, expected[t].positions) << t;
      EXPECT_EQ(got[t].ptr, expected[t].ptr) << t;
    }
    // Dense masks of the hub type (2) and the largest type (6) into one device buffer.
    for (int t : {2, 6}) {
      DeviceArray<std::uint8_t> keep(static_cast<std::size_t>(batch_size) * cpu.num_edges(t),
                                     gpu.stream());
      gpu.keep_mask_async(t, device_batch, keep.data());
      gpu.check();
      EXPECT_EQ(keep.download(), cpu.keep_mask(t, batch.view())) << t;
    }
  }
}

TEST(CudaEdgeMasks, InvalidDeviceBatchesAreReportedByCheck) {
  GW_REQUIRE_GPU();
  EdgeMasker cpu(5);
  const EdgeList edges{{0, 1, 2}, {1, 2, 3}, {}};
  cpu.add_type("t", edges.view());
  CudaEdgeMasker gpu(cpu);
  // Bad ids uploaded behind the validation's back: the device skips them and check() names them.
  const std::vector<Index> ids = {1, 9, -2};
  const std::vector<Offset> ptr = {0, 2, 3};
  DeviceArray<Index> d_ids(std::span<const Index>(ids), gpu.stream());
  DeviceArray<Offset> d_ptr(std::span<const Offset>(ptr), gpu.stream());
  const DeviceBatch batch{d_ids.data(), 3, d_ptr.data(), 2};
  gpu.removed_edges_async(batch);
  expect_error([&] { gpu.check(); }, ErrorCode::kBadData, "9 (sample 0), -2 (sample 1)");
  const std::vector<Offset> bad_ptr = {0, 3, 2};
  DeviceArray<Offset> d_bad_ptr(std::span<const Offset>(bad_ptr), gpu.stream());
  gpu.removed_edges_async(DeviceBatch{d_ids.data(), 3, d_bad_ptr.data(), 2});
  expect_error([&] { gpu.check(); }, ErrorCode::kInvalidArgument, "ptr decreases at sample 1");
  // The host entry points validate before anything reaches the device.
  expect_error(
      [&] {
        gpu.removed_edges(PerturbationBatch{ids, ptr});
      },
      ErrorCode::kBadData,
      "outside [0, 5)");
}

// ---------------------------------------------------------------------------------------------

template <typename T>
void expect_diffusion_matches_cpu(double tolerance, bool halve_c0) {
  Rng rng(sizeof(T) == 4 ? 41 : 42);
  const Index seq = 96;
  DiffusionGraphSet set = random_diffusion_graphs(rng, 9, seq);
  set.num_nodes[3] = 0;  // an empty graph
  for (Index channels : {1, 37, 64, 200}) {
    SCOPED_TRACE(::testing::Message() << "channels " << channels);
    std::vector<T> x(static_cast<std::size_t>(9) * seq * channels,
                     std::numeric_limits<T>::quiet_NaN());  // padding is never read
    for (Index b = 0; b < 9; ++b) {
      for (Index i = 0; i < set.num_nodes[b]; ++i) {
        for (Index c = 0; c < channels; ++c) {
          x[(static_cast<std::size_t>(b) * seq + i) * channels + c] =
              static_cast<T>(2.0 * rng.uniform() - 1.0);
        }
      }
    }
    // Graph 3 lost its nodes; drop its edges too.
    DiffusionGraphSet graphs = set;
    const Offset e0 = graphs.edge_ptr[3], e1 = graphs.edge_ptr[4];
    graphs.src.erase(graphs.src.begin() + e0, graphs.src.begin() + e1);
    graphs.dst.erase(graphs.dst.begin() + e0, graphs.dst.begin() + e1);
    for (Index b = 4; b <= 9; ++b) graphs.edge_ptr[b] -= e1 - e0;
    DiffusionOptions options;
    options.symmetrize = true;
    options.halve_c0 = halve_c0;
    const HeatDiffusion cpu(graphs.view(), seq, options);
    std::vector<T> expected(x.size()), got(x.size(), T(7));
    cpu.apply(std::span<const T>(x), channels, std::span<T>(expected));
    CudaHeatDiffusion gpu;
    gpu.prepare(graphs.view(), seq, options);
    gpu.apply(std::span<const T>(x), channels, std::span<T>(got));
    double worst = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(got[i]) - expected[i]));
    }
    EXPECT_LE(worst, tolerance);
    for (Index b = 0; b < 9; ++b) {
      for (Index i = graphs.num_nodes[b]; i < seq; ++i) {
        for (Index c = 0; c < channels; ++c) {
          ASSERT_EQ(got[(static_cast<std::size_t>(b) * seq + i) * channels + c], T(0));
        }
      }
    }
  }
}

TEST(CudaDiffusion, Float64EqualsTheCpu) {
  GW_REQUIRE_GPU();
  expect_diffusion_matches_cpu<double>(kDiffusionF64Tolerance, true);
  expect_diffusion_matches_cpu<double>(kDiffusionF64Tolerance, false);
}

TEST(CudaDiffusion, Float32EqualsTheCpu) {
  GW_REQUIRE_GPU();
  expect_diffusion_matches_cpu<float>(kDiffusionF32Tolerance, true);
}

TEST(CudaDiffusion, DeviceApiReusesThePreparedOperator) {
  GW_REQUIRE_GPU();
  Rng rng(3);
  const Index seq = 64, channels = 16;
  const DiffusionGraphSet set = random_diffusion_graphs(rng, 5, seq);
  DiffusionOptions options;
  options.symmetrize = true;
  const HeatDiffusion cpu(set.view(), seq, options);
  CudaHeatDiffusion gpu;
  gpu.prepare(cpu);
  EXPECT_EQ(gpu.nnz(), cpu.nnz());
  std::vector<double> x(static_cast<std::size_t>(5) * seq * channels, 0.0);
  for (double& v : x) v = rng.uniform();
  DeviceArray<double> dx(std::span<const double>(x), gpu.stream());
  DeviceArray<double> dy(x.size(), gpu.stream());
  std::vector<double> expected(x.size());
  cpu.apply(std::span<const double>(x), channels, std::span<double>(expected));
  for (int repeat = 0; repeat < 2; ++repeat) {
    gpu.apply_async(dx.data(), channels, dy.data());
    gpu.synchronize();
    const std::vector<double> got = dy.download();
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_NEAR(got[i], expected[i], kDiffusionF64Tolerance) << i;
    }
  }
  expect_error([&] { gpu.apply_async(dx.data(), channels, dx.data()); },
               ErrorCode::kInvalidArgument,
               "overlap");
}

// ---------------------------------------------------------------------------------------------

struct TokenBatch {
  Index batch, seq, hidden, vocabulary;
  std::vector<float> emb;
  std::vector<Index> ids, lengths;
  TokenBatch(Rng& rng, Index b, Index t, Index h, Index v)
      : batch(b), seq(t), hidden(h), vocabulary(v) {
    emb.resize(static_cast<std::size_t>(b) * t * h);
    for (float& e : emb) e = 4.0f * rng.uniform_float() - 2.0f;
    ids.resize(static_cast<std::size_t>(b) * t);
    for (Index& id : ids) id = static_cast<Index>(rng.uniform_index(v));
    for (Index r = 0; r < b; ++r) {
      const std::uint64_t kind = rng.uniform_index(4);
      lengths.push_back(kind == 0   ? 0
                        : kind == 1 ? t
                                    : static_cast<Index>(rng.uniform_index(t + 1)));
      // Padding holds ids the device must ignore.
      for (Index p = lengths.back(); p < t; ++p) ids[static_cast<std::size_t>(r) * t + p] = -100;
    }
  }
};

TEST(CudaAggregate, SortByKeyEqualsTheCpuBitForBit) {
  GW_REQUIRE_GPU();
  Rng rng(90);
  CudaAggregator gpu;
  for (int trial = 0; trial < 10; ++trial) {
    const TokenBatch data(rng,
                          1 + static_cast<Index>(rng.uniform_index(20)),
                          1 + static_cast<Index>(rng.uniform_index(300)),
                          1 + static_cast<Index>(rng.uniform_index(150)),
                          1 + static_cast<Index>(rng.uniform_index(500)));
    for (bool skip_cls : {false, true}) {
      AggregateOptions options;
      options.skip_cls = skip_cls;
      const GeneAggregate<float> expected = aggregate_by_gene(std::span<const float>(data.emb),
                                                              data.ids,
                                                              data.lengths,
                                                              data.batch,
                                                              data.seq,
                                                              data.hidden,
                                                              options);
      const GeneAggregate<float> got = gpu.aggregate(std::span<const float>(data.emb),
                                                     data.ids,
                                                     data.lengths,
                                                     data.batch,
                                                     data.seq,
                                                     data.hidden,
                                                     data.vocabulary,
                                                     options,
                                                     CudaAggregateMethod::kSortByKey);
      EXPECT_EQ(got.gene_ids, expected.gene_ids) << trial;
      EXPECT_EQ(got.counts, expected.counts) << trial;
      EXPECT_EQ(got.mean, expected.mean) << trial;
    }
  }
}

TEST(CudaAggregate, AtomicsEqualTheCpuWithinRounding) {
  GW_REQUIRE_GPU();
  Rng rng(91);
  CudaAggregator gpu;
  for (int trial = 0; trial < 10; ++trial) {
    const TokenBatch data(rng,
                          1 + static_cast<Index>(rng.uniform_index(20)),
                          1 + static_cast<Index>(rng.uniform_index(300)),
                          128,
                          1 + static_cast<Index>(rng.uniform_index(500)));
    std::vector<double> emb(data.emb.begin(), data.emb.end());
    AggregateOptions options;
    options.skip_cls = trial % 2 == 1;
    const GeneAggregate<double> expected = aggregate_by_gene(
        std::span<const double>(emb), data.ids, data.lengths, data.batch, data.seq, 128, options);
    const GeneAggregate<double> got = gpu.aggregate(std::span<const double>(emb),
                                                    data.ids,
                                                    data.lengths,
                                                    data.batch,
                                                    data.seq,
                                                    128,
                                                    data.vocabulary,
                                                    options,
                                                    CudaAggregateMethod::kAtomics);
    EXPECT_EQ(got.gene_ids, expected.gene_ids) << trial;
    EXPECT_EQ(got.counts, expected.counts) << trial;
    ASSERT_EQ(got.mean.size(), expected.mean.size());
    for (std::size_t i = 0; i < got.mean.size(); ++i) {
      ASSERT_NEAR(got.mean[i], expected.mean[i], kAtomicsTolerance) << trial << ", " << i;
    }
  }
}

TEST(CudaAggregate, OutOfBoundIdsAreReportedByCheck) {
  GW_REQUIRE_GPU();
  const std::vector<float> emb(2 * 3 * 2, 1.0f);
  const std::vector<Index> ids = {1, 2, 50, 4, 4, 4};
  const std::vector<Index> lengths = {3, 2};
  CudaAggregator gpu;
  for (CudaAggregateMethod method :
       {CudaAggregateMethod::kSortByKey, CudaAggregateMethod::kAtomics}) {
    expect_error(
        [&] { gpu.aggregate(std::span<const float>(emb), ids, lengths, 2, 3, 2, 10, {}, method); },
        ErrorCode::kBadData,
        "gene id 50 at row 0, position 2 is outside [0, 10)");
    const std::vector<Index> long_rows = {3, 4};
    expect_error(
        [&] {
          gpu.aggregate(std::span<const float>(emb), ids, long_rows, 2, 3, 2, 100, {}, method);
        },
        ErrorCode::kInvalidArgument,
        "lengths[1] = 4");
  }
}

// DeviceArray::copy_from_device_async (what the Python layer uses to hand device results over):
// a device-to-device copy of a prefix, ordered on the destination's stream after its upload.
TEST(CudaDeviceArray, CopyFromDeviceCopiesThePrefixInStreamOrder) {
  GW_REQUIRE_GPU();
  Rng rng(41, 0);
  std::vector<double> values(1000);
  for (double& v : values) v = rng.uniform();
  const CudaStream stream = CudaStream::create(0);
  const DeviceArray<double> source(std::span<const double>(values), stream);
  DeviceArray<double> target(values.size(), stream);
  target.upload(std::vector<double>(values.size(), -1.0));
  target.copy_from_device_async(source.data(), 600);
  const std::vector<double> back = target.download();
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(back[i], i < 600 ? values[i] : -1.0) << "element " << i;
  }
  EXPECT_THROW(target.copy_from_device_async(source.data(), 1001), Error);
}

// An array on a borrowed stream may outlive the stream's owner (a Python result made with
// `stream=` outlives the caller's stream object): destroying it then is safe, and the work
// enqueued before the stream went away has finished. The first GPU run crashed here (the
// destructor synchronized the destroyed stream).
TEST(CudaDeviceArray, ArrayOnABorrowedStreamOutlivesTheStreamsOwner) {
  GW_REQUIRE_GPU();
  Rng rng(42, 0);
  std::vector<float> values(1 << 20);
  for (float& v : values) v = static_cast<float>(rng.uniform());
  std::optional<CudaStream> owner = CudaStream::create(0);
  const CudaStream borrowed = CudaStream::borrow(owner->get(), 0);
  ASSERT_FALSE(borrowed.owned());
  auto array = std::make_unique<DeviceArray<float>>(std::span<const float>(values), borrowed);
  EXPECT_EQ(array->download(), values);
  auto copy = std::make_unique<DeviceArray<float>>(values.size(), borrowed);
  copy->copy_from_device_async(array->data(), values.size());  // still queued, maybe
  owner.reset();  // the owner destroys its stream first (queued work still completes)
  copy.reset();
  array.reset();
  // The device is still usable: a fresh array round-trips.
  const CudaStream fresh = CudaStream::create(0);
  const DeviceArray<float> again(std::span<const float>(values), fresh);
  EXPECT_EQ(again.download(), values);
}

// The Python layer caches these objects per (device, stream) and keeps them past the torch / CuPy
// stream they borrow; before wait_before_release, their destructors synchronized the destroyed
// stream and crashed inside the driver at interpreter exit (an H100, 2026-11-26).
TEST(CudaCellgraph, ClassesOnABorrowedStreamOutliveTheStreamsOwner) {
  GW_REQUIRE_GPU();
  Rng rng(77);
  std::optional<CudaStream> owner = CudaStream::create(0);
  const CudaStream borrowed = CudaStream::borrow(owner->get(), 0);

  const MaskCase c = random_mask_case(rng);
  EdgeMasker cpu_masker(c.n);
  for (std::size_t t = 0; t < c.types.size(); ++t)
    cpu_masker.add_type(std::to_string(t), c.types[t].view());
  auto masker = std::make_unique<CudaEdgeMasker>(cpu_masker, borrowed);
  EXPECT_EQ(masker->keep_mask(0, c.batch.view()), cpu_masker.keep_mask(0, c.batch.view()));

  const Index seq = 32, channels = 8;
  const DiffusionGraphSet set = random_diffusion_graphs(rng, 3, seq);
  DiffusionOptions options;
  options.symmetrize = true;
  const HeatDiffusion cpu_diffusion(set.view(), seq, options);
  auto diffusion = std::make_unique<CudaHeatDiffusion>(borrowed);
  diffusion->prepare(cpu_diffusion);
  std::vector<double> x(static_cast<std::size_t>(3) * seq * channels);
  for (double& v : x) v = rng.uniform();
  std::vector<double> expected(x.size()), got(x.size());
  cpu_diffusion.apply(std::span<const double>(x), channels, std::span<double>(expected));
  diffusion->apply(std::span<const double>(x), channels, std::span<double>(got));
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], kDiffusionF64Tolerance);

  const TokenBatch data(rng, 4, 50, 16, 40);
  auto aggregator = std::make_unique<CudaAggregator>(borrowed);
  const GeneAggregate<float> want = aggregate_by_gene(
      std::span<const float>(data.emb), data.ids, data.lengths, 4, 50, 16, AggregateOptions{});
  const GeneAggregate<float> have = aggregator->aggregate(std::span<const float>(data.emb),
                                                          data.ids,
                                                          data.lengths,
                                                          4,
                                                          50,
                                                          16,
                                                          40,
                                                          AggregateOptions{},
                                                          CudaAggregateMethod::kSortByKey);
  EXPECT_EQ(have.mean, want.mean);

  owner.reset();  // the stream is destroyed before the objects that borrowed it
  masker.reset();
  diffusion.reset();
  aggregator.reset();
  // The device is still usable.
  CudaEdgeMasker fresh(cpu_masker);
  EXPECT_EQ(fresh.keep_mask(0, c.batch.view()), cpu_masker.keep_mask(0, c.batch.view()));
}

}  // namespace
}  // namespace gw
