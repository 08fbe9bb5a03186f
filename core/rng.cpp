#include "core/rng.h"

#include <cmath>
#include <numbers>

#include "core/error.h"

namespace gw {

namespace {
constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// 128-bit product for Lemire's method; __extension__ keeps -Wpedantic quiet about the GCC type.
__extension__ typedef unsigned __int128 U128;

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  // SplitMix64 generator over a start value that depends on both seed and stream; its outputs
  // fill the xoshiro state (never all zero: SplitMix64 is a bijection of distinct counters).
  std::uint64_t counter = mix64(seed + kGolden) ^ mix64(~stream);
  for (auto& word : state_) {
    counter += kGolden;
    word = mix64(counter);
  }
}

Rng Rng::from_state(const std::array<std::uint64_t, 4>& state) {
  GW_CHECK(state[0] | state[1] | state[2] | state[3], "xoshiro256** state must not be all zero");
  Rng rng;
  rng.state_ = state;
  return rng;
}

std::uint64_t Rng::next_u64() {
  // xoshiro256** 1.0.
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

float Rng::uniform_float() { return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f; }

std::uint64_t Rng::uniform_index(std::uint64_t n) {
  GW_CHECK(n > 0, "uniform_index needs n > 0");
  // Lemire, "Fast random integer generation in an interval" (2019): take the high word of x * n
  // and reject the few low words that would bias the result.
  U128 product = static_cast<U128>(next_u64()) * n;
  std::uint64_t low = static_cast<std::uint64_t>(product);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      product = static_cast<U128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

double Rng::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace gw
