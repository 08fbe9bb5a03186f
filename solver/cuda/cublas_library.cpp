// cuBLAS resolved at run time (cublas_library.h says why). Compiled into every build; without CUDA
// it is empty, as nothing calls it.
#include "solver/cuda/cublas_library.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "core/error.h"

#define GW_CUBLAS_STRINGIFY2(x) #x
#define GW_CUBLAS_STRINGIFY(x) GW_CUBLAS_STRINGIFY2(x)

namespace gw::detail {

namespace {

constexpr const char* kSoname = "libcublas.so." GW_CUBLAS_STRINGIFY(CUBLAS_VER_MAJOR);

// The directory (with its trailing slash) of the shared object that defines cudaGetDeviceCount,
// or "" when the CUDA runtime is linked statically into the calling binary.
std::string cudart_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  const std::string_view file(info.dli_fname);
  if (file.find("libcudart") == std::string_view::npos) return {};
  const auto slash = file.rfind('/');
  return slash == std::string_view::npos ? std::string{} : std::string(file.substr(0, slash + 1));
}

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (out == nullptr && missing.empty()) missing = name;
  return out != nullptr;
}

}  // namespace

std::vector<std::string> cublas_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("GWALIGN_CUBLAS"); env != nullptr && *env != '\0') {
    out.emplace_back(env);
  }
  if (const std::string dir = cudart_directory(); !dir.empty()) out.push_back(dir + kSoname);
  out.emplace_back(kSoname);
  return out;
}

CublasLibrary load_cublas(const std::vector<std::string>& candidates) {
  std::ostringstream tried;
  for (const std::string& candidate : candidates) {
    // RTLD_LOCAL: cuBLAS's symbols stay out of the global namespace; they are reached through the
    // table only.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried << (tried.tellp() > 0 ? "; " : "") << candidate << ": " << (why ? why : "not found");
      continue;
    }
    CublasLibrary lib;
    std::string missing;
    resolve(handle, "cublasCreate_v2", lib.create, missing);
    resolve(handle, "cublasDestroy_v2", lib.destroy, missing);
    resolve(handle, "cublasSetStream_v2", lib.set_stream, missing);
    resolve(handle, "cublasSetMathMode", lib.set_math_mode, missing);
    resolve(handle, "cublasGetStatusString", lib.status_string, missing);
    resolve(handle, "cublasSgemm_v2", lib.sgemm, missing);
    resolve(handle, "cublasDgemm_v2", lib.dgemm, missing);
    if (!missing.empty()) {
      dlclose(handle);
      tried << (tried.tellp() > 0 ? "; " : "") << candidate << ": does not export " << missing;
      continue;
    }
    lib.path = candidate;
    return lib;
  }
  GW_THROW(ErrorCode::kNotCompiled,
           "the cuda backend needs cuBLAS " << CUBLAS_VER_MAJOR << ".x and none loaded ("
                                            << tried.str()
                                            << "); install the CUDA toolkit's cuBLAS (" << kSoname
                                            << ") or set GWALIGN_CUBLAS to its path");
}

const CublasLibrary& cublas_library() {
  // A failed load is not cached as a success: the static is only initialized when load_cublas
  // returns, so the next call tries again and throws the same message.
  static const CublasLibrary library = load_cublas(cublas_candidates());
  return library;
}

}  // namespace gw::detail
#endif
