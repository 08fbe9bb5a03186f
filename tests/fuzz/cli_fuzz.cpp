// Fuzz harness "cli": the CLI's argument parsing, as `gwalign align` runs it before reading any
// file. The input is split at NUL bytes into arguments; they go through the one-letter flag
// rewriting of main() (normalize_arguments), cxxopts with the solver flags (add_solver_options)
// and the mapping onto gw::Options (solver_options_from_flags). Every rejection must be a gw::Error
// or a cxxopts exception (main() turns both into exit status 64); options that come out must pass
// Options::is_valid.
#include <cxxopts.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "solver_flags.h"
#include "command.h"
#include "core/error.h"

namespace {

constexpr std::size_t kMaxArguments = 64;

// The option set of `gwalign align`'s solver flags, built once: constructing its ~90 options costs
// far more than one parse, and a parse leaves the set unchanged (cxxopts keeps the parse's state in
// the ParseResult), so every execution sees the same parser the CLI builds.
cxxopts::Options& align_options() {
  static cxxopts::Options* const cli = [] {
    auto* options = new cxxopts::Options("gwalign align", "fuzz");
    options->add_options()("source", "", cxxopts::value<std::string>())(
        "target", "", cxxopts::value<std::string>())("o,output", "", cxxopts::value<std::string>());
    gw::cli::add_solver_options(*options);
    options->parse_positional({"source", "target"});
    return options;
  }();
  return *cli;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> raw = {"gwalign align"};
  std::string current;
  for (std::size_t i = 0; i < size && raw.size() < kMaxArguments; ++i) {
    if (data[i] == 0) {
      raw.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && raw.size() < kMaxArguments) raw.push_back(current);
  std::vector<const char*> argv;
  for (const auto& arg : raw) argv.push_back(arg.c_str());

  const std::vector<std::string> normalized =
      gw::cli::normalize_arguments(static_cast<int>(argv.size()), argv.data());
  if (normalized.size() < raw.size() || normalized.front() != raw.front()) std::abort();
  std::vector<char*> args;
  std::vector<std::string> storage = normalized;
  for (auto& arg : storage) args.push_back(arg.data());
  args.push_back(nullptr);

  try {
    const cxxopts::ParseResult flags =
        align_options().parse(static_cast<int>(storage.size()), args.data());
    const gw::Options options = gw::cli::solver_options_from_flags(flags);
    if (!options.is_valid()) std::abort();
  } catch (const gw::Error&) {
  } catch (const cxxopts::exceptions::exception&) {
  }
  return 0;
}
