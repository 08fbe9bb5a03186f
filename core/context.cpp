#include "core/context.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <ios>
#include <mutex>
#include <string>

#include "core/config.h"
#include "core/error.h"

#if GW_HAS_OPENMP
#include <omp.h>
#endif
#if GW_HAS_CUDA
#include <cuda_runtime_api.h>
#endif
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <xmmintrin.h>
#define GW_HAVE_MXCSR 1
#else
#define GW_HAVE_MXCSR 0
#endif

namespace gw {

int available_threads() {
#if GW_HAS_OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int resolve_threads(int requested) {
  GW_CHECK(requested >= 0, "thread count must be >= 0 (0 = all), got " << requested);
  return requested > 0 ? requested : available_threads();
}

std::size_t cgroup_memory_limit_bytes() {
  // cgroup v2 (the container's own root under a cgroup namespace), then v1. "max" (v2) and v1's
  // huge "unlimited" value mean no limit below the machine's.
  for (const char* file :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text == "max") continue;
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (errno == 0 && end != nullptr && *end == '\0' && value > 0) {
      return static_cast<std::size_t>(value);
    }
  }
  return 0;
}

std::size_t physical_memory_bytes() {
  // Re-read at most once a second: every gw::solve asks (its memory budget), and the file reads
  // were ~1% of a 150-node pair in `gwalign pairwise`, which solves hundreds of pairs a second. A
  // limit changed while the process runs is still seen within a second.
  static std::mutex mutex;
  static std::chrono::steady_clock::time_point read_at;
  static std::size_t cached = 0;
  static bool valid = false;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex);
  if (valid && now - read_at < std::chrono::seconds(1)) return cached;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  const std::size_t machine =
      pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
  const std::size_t cgroup = cgroup_memory_limit_bytes();
  cached = machine == 0 ? cgroup : (cgroup != 0 ? std::min(machine, cgroup) : machine);
  read_at = now;
  valid = true;
  return cached;
}

int cuda_device_count() {
#if GW_HAS_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error so later calls start clean
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

int cuda_pointer_device(const void* pointer) {
#if GW_HAS_CUDA
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, pointer);
  if (status != cudaSuccess) cudaGetLastError();  // not sticky; clear it for later calls
  GW_CHECK(status == cudaSuccess && (attributes.type == cudaMemoryTypeDevice ||
                                     attributes.type == cudaMemoryTypeManaged),
           "pointer 0x" << std::hex << reinterpret_cast<std::uintptr_t>(pointer) << std::dec
                        << " is not CUDA device memory (a host array passed as a device array?)");
  return attributes.device;
#else
  (void)pointer;
  GW_THROW(ErrorCode::kNotCompiled,
           "CUDA device pointers need a gwalign built with CUDA (-DGWALIGN_ENABLE_CUDA=ON)");
#endif
}

void require_backend(Backend backend, int device) {
  if (backend != Backend::kCuda) return;
#if GW_HAS_CUDA
  const int count = cuda_device_count();
  GW_CHECK(count > 0, "backend 'cuda' requested but no CUDA device is visible; use --backend cpu");
  GW_CHECK(device >= 0 && device < count,
           "CUDA device " << device << " does not exist (" << count << " visible)");
#else
  (void)device;
  GW_THROW(ErrorCode::kNotCompiled,
           "backend 'cuda' requested but this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use --backend cpu");
#endif
}

void set_flush_denormals(bool on) {
#if GW_HAVE_MXCSR
  constexpr unsigned kFtz = 0x8000;  // MXCSR bit 15: flush-to-zero
  constexpr unsigned kDaz = 0x0040;  // MXCSR bit 6: denormals-are-zero
  unsigned csr = _mm_getcsr();
  csr = on ? (csr | kFtz | kDaz) : (csr & ~(kFtz | kDaz));
  _mm_setcsr(csr);
#else
  (void)on;
#endif
}

void set_flush_denormals_all_threads(int threads, bool on) {
#if GW_HAS_OPENMP
#pragma omp parallel num_threads(resolve_threads(threads))
  set_flush_denormals(on);
#else
  (void)threads;
  set_flush_denormals(on);
#endif
}

ScopedThreads::ScopedThreads(int threads) : previous_(available_threads()) {
  count_ = resolve_threads(threads);
#if GW_HAS_OPENMP
  omp_set_num_threads(count_);
#endif
}

ScopedThreads::~ScopedThreads() {
#if GW_HAS_OPENMP
  omp_set_num_threads(previous_);
#endif
}

}  // namespace gw
