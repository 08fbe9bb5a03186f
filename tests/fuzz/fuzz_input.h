// Reads typed values from a fuzzer's byte string, front to back. Once the bytes run out every
// read returns zero (or the first choice), so any byte string, however short, is a valid input.
// Shared by the libFuzzer harnesses and their replay tests; no dependency on libFuzzer headers so
// that the replay tests build with GCC.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

namespace gw::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  std::size_t remaining() const { return size_ - pos_; }

  // The next sizeof(T) bytes as a T (zero-padded at the end of the input).
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  T take() {
    unsigned char bytes[sizeof(T)] = {};
    const std::size_t n = std::min(sizeof(T), remaining());
    if (n > 0) std::memcpy(bytes, data_ + pos_, n);
    pos_ += n;
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }

  bool take_bool() { return (take<std::uint8_t>() & 1u) != 0; }

  // An integer in [lo, hi] (inclusive), uniform over the byte's values modulo the range.
  std::int64_t take_in(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1u;
    const std::uint64_t raw = take<std::uint32_t>();
    return lo + static_cast<std::int64_t>(span == 0 ? raw : raw % span);
  }

  // A double that is often one of the values validation must handle (0, +-1, +-inf, NaN, huge,
  // tiny, negative zero) and otherwise any bit pattern.
  double take_double() {
    static constexpr double kSpecial[] = {0.0,
                                          -0.0,
                                          1.0,
                                          -1.0,
                                          0.5,
                                          1e-12,
                                          1e300,
                                          -1e300,
                                          std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity(),
                                          std::numeric_limits<double>::quiet_NaN(),
                                          std::numeric_limits<double>::denorm_min()};
    const std::uint8_t selector = take<std::uint8_t>();
    if (selector < 2 * std::size(kSpecial)) return kSpecial[selector % std::size(kSpecial)];
    return take<double>();
  }

  // An int that is often a boundary value, otherwise any 32-bit pattern.
  int take_int() {
    static constexpr int kSpecial[] = {0, 1, -1, 2, 3, 5, 10, 100, 1000,
                                       std::numeric_limits<int>::max(),
                                       std::numeric_limits<int>::min()};
    const std::uint8_t selector = take<std::uint8_t>();
    if (selector < 2 * std::size(kSpecial)) return kSpecial[selector % std::size(kSpecial)];
    return take<int>();
  }

  // The rest of the input.
  std::span<const std::uint8_t> rest() {
    std::span<const std::uint8_t> out(data_ + pos_, remaining());
    pos_ = size_;
    return out;
  }

 private:

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace gw::fuzz
