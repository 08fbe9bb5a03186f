// Seeded pseudo-random numbers with a fixed, documented algorithm.
//
// Reproducibility contract: for a given (seed, stream) the sequence of next_u64(), uniform_index()
// and shuffle() results is identical on every platform, compiler and standard library, forever
// (we never use std::*_distribution, whose algorithms are implementation-defined). uniform() and
// uniform_float() are exact functions of next_u64(). normal() uses std::log/std::sqrt/std::cos,
// which are correctly rounded on glibc for these inputs in practice but are not guaranteed so by
// IEEE 754; treat normal() as reproducible per platform.
//
// Algorithm: xoshiro256** 1.0 (Blackman & Vigna, 2018), state seeded by SplitMix64 from
// mix(seed) ^ mix(stream). Period 2^256 - 1. Independent streams for parallel work: give each task
// its own `stream` id (e.g. the row block index), never share one Rng across threads.
//
// Thread-safety: an Rng is a value type with no shared state; one instance per thread.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>

namespace gw {

class Rng {
 public:
  using result_type = std::uint64_t;

  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0);

  // An Rng with the given raw xoshiro256** state (not all zero), for checkpoints and for testing
  // against the algorithm's published reference outputs.
  static Rng from_state(const std::array<std::uint64_t, 4>& state);
  const std::array<std::uint64_t, 4>& state() const { return state_; }

  // Next 64 random bits.
  std::uint64_t next_u64();
  std::uint64_t operator()() { return next_u64(); }
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  // Uniform double in [0, 1) with 53 random bits: (next_u64() >> 11) * 2^-53.
  double uniform();
  // Uniform float in [0, 1) with 24 random bits: (next_u64() >> 40) * 2^-24.
  float uniform_float();
  // Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject). n must be > 0.
  std::uint64_t uniform_index(std::uint64_t n);
  // Standard normal by the Box-Muller transform of two uniform() draws (one value per call).
  double normal();

  // Fisher-Yates shuffle driven by uniform_index (std::shuffle's algorithm is unspecified).
  template <typename T>
  void shuffle(std::span<T> values) {
    for (std::size_t i = values.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(uniform_index(i));
      using std::swap;
      swap(values[i - 1], values[j]);
    }
  }

 private:
  Rng() = default;
  std::array<std::uint64_t, 4> state_{};
};

// SplitMix64 finalizer (Steele, Lea & Flood, 2014): a bijective 64-bit mix. Useful for deriving
// per-task seeds: mix64(seed ^ mix64(task)).
std::uint64_t mix64(std::uint64_t x);

}  // namespace gw
