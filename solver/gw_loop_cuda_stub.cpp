// The CUDA loop's entry point in a build without CUDA (see gw_loop_cuda.cpp for the real one).
#include "core/error.h"
#include "solver/solver_impl.h"

namespace gw::detail {

void run_cuda_loop(PreparedProblem&, const Options&, std::vector<double>&, Result&) {
  GW_THROW(ErrorCode::kNotCompiled,
           "backend 'cuda' requested but this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use --backend cpu");
}

}  // namespace gw::detail
