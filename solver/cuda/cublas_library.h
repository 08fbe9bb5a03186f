// cuBLAS, loaded when the CUDA loop first needs it (internal to the solver module).
//
// Why not link it: libcublas pulls in libcublasLt, about half a gigabyte of code that the dynamic
// loader maps and relocates at the start of every process linked with it, CPU runs included (a
// CUDA-enabled gwalign started at ~218 MB resident before its first allocation; a CPU-only build
// at ~13 MB). The loop uses seven cuBLAS functions, so they are resolved with dlopen / dlsym the
// first time a CUDA solve builds its handle, and a CPU run never maps the library.
//
// Where it is looked for, in order: the file named by the environment variable GWALIGN_CUBLAS (a
// path or a soname, for installs that keep cuBLAS elsewhere); libcublas.so.<major> in the
// directory of the loaded libcudart (a CUDA toolkit keeps the two side by side); the same soname
// on the dynamic loader's search path. <major> is the cuBLAS major version of the headers this
// build was compiled against (its ABI).
//
// Thread-safety: cublas_library() loads once per process (a function-local static) and the table
// is read-only afterwards; the library is never unloaded.
#pragma once

#include "core/config.h"

#if GW_HAS_CUDA
#include <cublas_v2.h>

#include <string>
#include <vector>

namespace gw::detail {

struct CublasLibrary {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
  decltype(&::cublasDgemm_v2) dgemm = nullptr;
  std::string path;  // the candidate that loaded
};

// The candidates above, in order (GWALIGN_CUBLAS first when set).
std::vector<std::string> cublas_candidates();

// Loads the first candidate that opens and exports every entry point. Throws
// gw::Error(kNotCompiled) naming each candidate and why it failed, and the fix (install cuBLAS or
// set GWALIGN_CUBLAS), when none does.
CublasLibrary load_cublas(const std::vector<std::string>& candidates);

// load_cublas(cublas_candidates()), once per process; a failure is thrown again on every call.
const CublasLibrary& cublas_library();

}  // namespace gw::detail
#endif
