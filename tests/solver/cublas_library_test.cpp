// cuBLAS loaded at run time (solver/cuda/cublas_library.h): the search order, the one-line error
// when no candidate loads, and the toolkit's library loading on a machine without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "solver/cuda/cublas_library.h"

namespace gw {
namespace {

#if GW_HAS_CUDA

TEST(CublasLibrary, NoCandidateLoadingIsANotCompiledErrorNamingEachAndTheFix) {
  try {
    (void)detail::load_cublas({"/nonexistent/dir/libcublas.so.99", "libgwalign-no-such-lib.so"});
    FAIL() << "load_cublas accepted candidates that do not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotCompiled);
    const std::string message = e.what();
    EXPECT_NE(message.find("/nonexistent/dir/libcublas.so.99"), std::string::npos) << message;
    EXPECT_NE(message.find("libgwalign-no-such-lib.so"), std::string::npos) << message;
    EXPECT_NE(message.find("GWALIGN_CUBLAS"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(CublasLibrary, ALibraryWithoutTheEntryPointsIsRefusedAndTheNextCandidateTried) {
  // libm opens but exports no cuBLAS function: refused with the first missing name.
  try {
    (void)detail::load_cublas({"libm.so.6"});
    FAIL() << "load_cublas accepted libm";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libm.so.6: does not export cublasCreate_v2"),
              std::string::npos)
        << e.what();
  }
  // Then the toolkit's library, found by the default search, is taken after it.
  std::vector<std::string> candidates = {"libm.so.6"};
  for (const auto& c : detail::cublas_candidates()) candidates.push_back(c);
  const detail::CublasLibrary lib = detail::load_cublas(candidates);
  EXPECT_NE(lib.path, "libm.so.6");
}

TEST(CublasLibrary, ToolkitLibraryLoadsWithoutADeviceAndExportsEveryEntryPoint) {
  const detail::CublasLibrary& lib = detail::cublas_library();
  EXPECT_NE(lib.path.find("libcublas.so."), std::string::npos) << lib.path;
  EXPECT_NE(lib.create, nullptr);
  EXPECT_NE(lib.destroy, nullptr);
  EXPECT_NE(lib.set_stream, nullptr);
  EXPECT_NE(lib.set_math_mode, nullptr);
  EXPECT_NE(lib.sgemm, nullptr);
  EXPECT_NE(lib.dgemm, nullptr);
  ASSERT_NE(lib.status_string, nullptr);
  // A call that needs no device: the library answers with its own text.
  EXPECT_NE(std::string(lib.status_string(CUBLAS_STATUS_NOT_INITIALIZED)), "");
}

TEST(CublasLibrary, TheEnvironmentVariableIsTheFirstCandidate) {
  ::setenv("GWALIGN_CUBLAS", "/opt/somewhere/libcublas.so.13", 1);
  const std::vector<std::string> candidates = detail::cublas_candidates();
  ::unsetenv("GWALIGN_CUBLAS");
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(candidates.front(), "/opt/somewhere/libcublas.so.13");
  // Without it, the last candidate is the bare soname for the loader's search path.
  const std::vector<std::string> plain = detail::cublas_candidates();
  EXPECT_EQ(plain.back().rfind("libcublas.so.", 0), 0u) << plain.back();
}

#else

TEST(CublasLibrary, NotPartOfABuildWithoutCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace gw
