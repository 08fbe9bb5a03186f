// Runs in the CPU suite: without CUDA every CUDA entry point of cellgraph must answer
// ErrorCode::kNotCompiled (never fail to link); with CUDA but no device, kInvalidArgument.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "cellgraph/cuda_aggregate.h"
#include "cellgraph/cuda_diffusion.h"
#include "cellgraph/cuda_edge_masks.h"
#include "core/config.h"
#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/device_array.h"
#include "core/error.h"

namespace gw {
namespace {

TEST(CudaAvailability, ConstructorsThrowWithoutCudaOrDevice) {
  if (GW_HAS_CUDA && cuda_device_count() > 0) {
    GTEST_SKIP() << "a CUDA device is visible; test_cellgraph_cuda covers the classes";
  }
  const ErrorCode expected = GW_HAS_CUDA ? ErrorCode::kInvalidArgument : ErrorCode::kNotCompiled;
  const EdgeMasker masker(3);
  const std::vector<std::function<void()>> constructors = {
      [&] { CudaEdgeMasker gpu(masker); },
      [] { CudaHeatDiffusion gpu; },
      [] { CudaAggregator gpu; },
      [] { CudaStream::create(0); },
      [] { CudaStream::borrow(nullptr, 0); },
  };
  for (const auto& construct : constructors) {
    try {
      construct();
      ADD_FAILURE() << "a CUDA class was constructed without a usable device";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), expected) << e.what();
    }
  }
}

TEST(CudaAvailability, MethodNamesRoundTrip) {
  for (CudaAggregateMethod method :
       {CudaAggregateMethod::kSortByKey, CudaAggregateMethod::kAtomics}) {
    EXPECT_EQ(cuda_aggregate_method_from_string(to_string(method)), method);
  }
  EXPECT_FALSE(cuda_aggregate_method_from_string("radix").has_value());
}

TEST(CudaAvailability, EmptyStreamHandleIsRejectedByDeviceArrayAndAccessors) {
  const CudaStream empty;
  EXPECT_FALSE(empty.valid());
  try {
    (void)empty.get();
    ADD_FAILURE() << "get() on an empty CudaStream returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
  try {
    DeviceArray<float> array(4, empty);
    ADD_FAILURE() << "a DeviceArray was built on an empty CudaStream";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
}

}  // namespace
}  // namespace gw
