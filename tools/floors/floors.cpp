// gw::floors (floors.h). The multiply-add pass itself is compiled once per instruction-set target
// (fma_peak_isa.cpp); the memory passes are plain loops: their speed is the memory system's.
#include "tools/floors/floors.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/context.h"
#include "core/isa.h"
#include "tools/floors/fma_peak_kernels_impl.h"

namespace gw::floors {
namespace {

int resolve(int threads) { return threads > 0 ? threads : available_threads(); }

template <typename T>
double read_slices(const T* data, std::size_t count, int threads) {
  threads = resolve(threads);
  double total = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const int team = omp_get_num_threads();
    const int t = omp_get_thread_num();
    const std::size_t begin = count * t / team;
    const std::size_t end = count * (t + 1) / team;
    constexpr std::size_t kLanes = 16;
    T lanes[kLanes] = {};
    std::size_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      for (std::size_t l = 0; l < kLanes; ++l) lanes[l] += data[i + l];
    }
    double sum = 0.0;
    for (T lane : lanes) sum += lane;
    for (; i < end; ++i) sum += data[i];
    total += sum;
  }
  return total;
}

// A buffer whose pages are first touched by the threads that later stream them.
std::unique_ptr<double[]> touched_buffer(std::size_t count, int threads) {
  std::unique_ptr<double[]> buffer(new double[count]);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t i = 0; i < count; ++i) buffer[i] = 1.0;
  return buffer;
}

template <typename Pass>
double best_rate(double work, int passes, Pass pass) {
  double best = 0.0;
  for (int p = 0; p < std::max(passes, 1); ++p) {
    const double start = omp_get_wtime();
    pass(p);
    const double seconds = omp_get_wtime() - start;
    if (seconds > 0.0) best = std::max(best, work / seconds);
  }
  return best;
}

}  // namespace

double read_pass(const float* data, std::size_t count, int threads) {
  return read_slices(data, count, threads);
}

double read_pass(const double* data, std::size_t count, int threads) {
  return read_slices(data, count, threads);
}

void write_pass(void* data, std::size_t bytes, unsigned char value, int threads) {
  threads = resolve(threads);
  auto* out = static_cast<unsigned char*>(data);
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads();
    const int t = omp_get_thread_num();
    const std::size_t begin = bytes * t / team;
    std::memset(out + begin, value, bytes * (t + 1) / team - begin);
  }
}

double read_bandwidth(std::size_t bytes, int threads, int passes) {
  threads = resolve(threads);
  const std::size_t count = std::max<std::size_t>(bytes / sizeof(double), 1024);
  const auto buffer = touched_buffer(count, threads);
  volatile double sink = 0.0;
  return best_rate(static_cast<double>(count * sizeof(double)), passes, [&](int) {
    sink = sink + read_pass(buffer.get(), count, threads);
  });
}

double write_bandwidth(std::size_t bytes, int threads, int passes) {
  threads = resolve(threads);
  const std::size_t count = std::max<std::size_t>(bytes / sizeof(double), 1024);
  const auto buffer = touched_buffer(count, threads);
  return best_rate(static_cast<double>(count * sizeof(double)), passes, [&](int pass) {
    write_pass(buffer.get(), count * sizeof(double), static_cast<unsigned char>(pass), threads);
  });
}

double fma_peak_pass_f32(int threads) {
  return GW_ISA_TABLE_FOR(best_isa(), kFmaPeakKernels).f32(resolve(threads));
}

double fma_peak_pass_f64(int threads) {
  return GW_ISA_TABLE_FOR(best_isa(), kFmaPeakKernels).f64(resolve(threads));
}

double fma_peak_f32(int threads, int passes) {
  double best = 0.0;
  for (int p = 0; p < std::max(passes, 1); ++p) best = std::max(best, fma_peak_pass_f32(threads));
  return best;
}

double fma_peak_f64(int threads, int passes) {
  double best = 0.0;
  for (int p = 0; p < std::max(passes, 1); ++p) best = std::max(best, fma_peak_pass_f64(threads));
  return best;
}

}  // namespace gw::floors
