// Execution context: how many CPU threads, whether a backend and device are usable, and the
// floating-point environment of worker threads. (The thread count, backend and device of a solve
// are fields of gw::Options.)
//
// Thread-safety: the free functions query process-wide state and are safe to call from any thread.
// ScopedThreads changes the OpenMP thread count of the calling thread's parallel regions and
// restores it on destruction; do not share one instance across threads.
#pragma once

#include <cstddef>

#include "core/types.h"

namespace gw {

// Number of threads OpenMP would use for a parallel region right now (1 without OpenMP).
int available_threads();

// `requested` if positive, else available_threads(). Throws kInvalidArgument if negative.
int resolve_threads(int requested);

// Number of visible CUDA devices; 0 in a build without CUDA or on a machine without a GPU.
int cuda_device_count();

// The ordinal of the CUDA device that holds `pointer` (device or managed memory allocated by any
// library on this process's CUDA context: torch, CuPy, Numba, gwalign). Throws kInvalidArgument
// when the pointer is host memory or unknown to CUDA, kNotCompiled in a build without CUDA.
int cuda_pointer_device(const void* pointer);

// The memory this process can have, in bytes: the machine's physical memory (sysconf), or the
// memory limit of its cgroup when that is lower (a container started with a memory limit, a batch
// job's allocation), so that budgets derived from it fail with a clear error rather than an
// out-of-memory kill; 0 when neither is known. Read again when the last read is over a second old
// (a few small file reads); thread-safe.
std::size_t physical_memory_bytes();

// The memory limit of this process's cgroup (v2 memory.max, else v1 memory.limit_in_bytes, as
// seen at /sys/fs/cgroup), 0 when none is set or readable.
std::size_t cgroup_memory_limit_bytes();

// Throws ErrorCode::kNotCompiled when `backend` is kCuda in a build without CUDA, and
// ErrorCode::kInvalidArgument when no device with ordinal `device` is visible.
void require_backend(Backend backend, int device = 0);

// Sets flush-to-zero and denormals-are-zero on the calling thread (x86 MXCSR; no-op elsewhere).
// Float32 log-sum-exp over tiny plan entries runs ~2x slower with denormals.
void set_flush_denormals(bool on);

// Sets FTZ/DAZ on every thread of an OpenMP team of `threads` threads (GCC's libgomp reuses its
// pool, so later parallel regions of at most that size inherit the setting).
void set_flush_denormals_all_threads(int threads, bool on = true);

// Sets the OpenMP thread count for parallel regions started by this thread, restoring the previous
// value on destruction. ScopedThreads(0) uses all available threads.
class ScopedThreads {
 public:
  explicit ScopedThreads(int threads);
  ~ScopedThreads();
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

  int count() const { return count_; }

 private:
  int previous_;
  int count_;
};

}  // namespace gw
