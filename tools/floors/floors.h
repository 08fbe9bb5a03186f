// The floors that benchmarks divide by: one streaming read, one fill, the multiply-add peak. The
// one implementation behind `gwalign bench` (tools/gwalign/bench_*.cpp) and the Google Benchmark
// binaries (bench/*_bench.cpp), so a ratio to the floor means the same in both.
//
// Passes split their buffer into contiguous slices over `threads` OpenMP threads (threads <= 0:
// all available). The read sums 16 independent float / double lanes per thread (one dependent add
// chain would measure the add latency, about half the bandwidth, instead of the memory system).
// The FMA peak runs at the best instruction-set target this CPU supports (core/isa.h), whatever
// GWALIGN_ISA forces: a floor is what the machine can do, whichever target a kernel runs.
//
// Not thread-safe to call from several threads at once (each call uses a whole OpenMP team).
// Part of gwalign_testing's side of the build: never installed.
#pragma once

#include <cstddef>

namespace gw::floors {

// One summing read of data[0, count); returns the sum (so the read is not optimized away).
double read_pass(const float* data, std::size_t count, int threads);
double read_pass(const double* data, std::size_t count, int threads);

// One fill of `bytes` bytes at `data` with `value`.
void write_pass(void* data, std::size_t bytes, unsigned char value, int threads);

// Bytes per second of the best of `passes` reads / fills of a `bytes`-sized buffer allocated and
// first touched by the same threads (so its pages sit where they are streamed).
double read_bandwidth(std::size_t bytes, int threads, int passes = 5);
double write_bandwidth(std::size_t bytes, int threads, int passes = 5);

// One pass of the multiply-add peak: `threads` threads each run 16 independent chains of
// 64-byte-vector multiply-adds; returns flop/s (2 per multiply-add per lane).
double fma_peak_pass_f32(int threads);
double fma_peak_pass_f64(int threads);

// The best of `passes` such passes.
double fma_peak_f32(int threads, int passes = 3);
double fma_peak_f64(int threads, int passes = 3);

template <typename T>
double fma_peak(int threads, int passes = 3) {
  return sizeof(T) == 4 ? fma_peak_f32(threads, passes) : fma_peak_f64(threads, passes);
}

}  // namespace gw::floors
