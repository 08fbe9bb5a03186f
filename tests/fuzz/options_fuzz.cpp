// Fuzz harness "options": gw::Options validation. Every field is set from the input (often to a
// boundary value: 0, -1, INT_MAX, NaN, +-inf); is_valid must answer without crashing or undefined
// behaviour (and name a field exactly when it says no), and for options it accepts the derived
// quantities (anchor schedule, epsilon schedule, plateau patience) must be well defined. Validation
// only, so an execution takes microseconds; the "solve" harness runs the solver on the same inputs.
#include <cstddef>
#include <cstdint>

#include "options_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gw::fuzz::FuzzInput in(data, size);
  gw::Options options;
  gw::fuzz::validate_options(in, options);
  return 0;
}
