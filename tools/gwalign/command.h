// Subcommand registry of the gwalign CLI.
//
// Each subcommand lives in its own file and registers itself at static-initialization time:
//   int run_info(int argc, char** argv);
//   GW_CLI_COMMAND("info", "list what an HDF5/h5ad file holds", run_info);
// Benchmarks register under `gwalign bench <name>` with GW_CLI_BENCH. The command's argv[0] is
// the full command name ("gwalign info", "gwalign bench knn") so cxxopts help reads naturally.
// Commands return a process exit status; gw::Error and cxxopts exceptions escaping them are turned
// into one-line messages and sysexits codes by main().
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gw::cli {

using CommandFn = int (*)(int argc, char** argv);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFn run;
};

bool register_command(const Command& command);
bool register_bench(const Command& command);

// Registered commands, sorted by name.
std::vector<Command> commands();
std::vector<Command> benches();

// cxxopts 3.1 only accepts long options of two or more characters, but our flags follow the
// reference tools' spelling (--n, --k, --d, --M). A one-character option is declared as a short
// option, and "--x" / "--x=value" are rewritten to "-x" / "-x value" before parsing. argv[0] is
// kept as is. Pure function of its input (fuzzed by tests/fuzz/cli_args.cpp).
std::vector<std::string> normalize_arguments(int argc, const char* const* argv);

}  // namespace gw::cli

#define GW_CLI_CONCAT_INNER(a, b) a##b
#define GW_CLI_CONCAT(a, b) GW_CLI_CONCAT_INNER(a, b)
#define GW_CLI_COMMAND(name, summary, fn)                                 \
  static const bool GW_CLI_CONCAT(gw_cli_command_registered_, __LINE__) = \
      ::gw::cli::register_command({name, summary, fn})
#define GW_CLI_BENCH(name, summary, fn)                                 \
  static const bool GW_CLI_CONCAT(gw_cli_bench_registered_, __LINE__) = \
      ::gw::cli::register_bench({name, summary, fn})
