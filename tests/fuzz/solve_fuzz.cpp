// Fuzz harness "solve": the options harness's input (options_harness.h) run through gw::solve on a
// tiny problem whenever the options are valid: every field combination the validator accepts must
// give a Result or a gw::Error, never a crash or undefined behaviour. Executions take milliseconds
// (the solver runs), which is why validation alone is its own, fast harness ("options").
#include <cstddef>
#include <cstdint>

#include "options_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gw::fuzz::FuzzInput in(data, size);
  gw::Options options;
  if (!gw::fuzz::validate_options(in, options)) return 0;
  (void)in.take<std::uint8_t>();  // the gate byte of the shared format
  gw::fuzz::solve_tiny(in, options);
  return 0;
}
