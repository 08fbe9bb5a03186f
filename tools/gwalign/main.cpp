// gwalign: command-line front end. Dispatches to registered subcommands (see command.h) and turns
// errors into one-line messages with sysexits-style exit codes. No algorithm lives here.
#include <cxxopts.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli_util.h"
#include "interrupt.h"
#include "command.h"
#include "core/config.h"
#include "core/error.h"
#include "core/isa.h"
#include "huge_pages.h"

namespace {

void print_usage(std::ostream& out) {
  out << "gwalign " << GW_VERSION_STRING
      << ": sampled Gromov-Wasserstein alignment of point clouds and graphs\n\n"
         "Usage: gwalign <command> [options]\n\nCommands:\n";
  for (const auto& command : gw::cli::commands()) {
    out << "  " << command.name << std::string(12 - std::min<size_t>(command.name.size(), 11), ' ')
        << command.summary << "\n";
  }
  out << "\nRun 'gwalign <command> --help' for the options of one command.\n"
         "  --version   print the version and build configuration\n";
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 64;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (first == "--version" || first == "version") {
    std::string targets;
    for (gw::Isa isa : gw::compiled_isas()) {
      targets += targets.empty() ? "" : ",";
      targets += gw::to_string(isa);
    }
    std::cout << "gwalign " << GW_VERSION_STRING << " (cuda: " << (GW_HAS_CUDA ? "yes" : "no")
              << ", openmp: " << (GW_HAS_OPENMP ? "yes" : "no") << ", kernels: " << targets
              << ", native build: " << (GW_NATIVE_BUILD ? "yes" : "no") << ")\n"
              << "cpu kernels run: " << gw::isa_description() << "\n"
              << "malloc: "
              << (gw::cli::malloc_uses_huge_pages()
                      ? "transparent huge pages (GLIBC_TUNABLES glibc.malloc.hugetlb)"
                      : "4 KiB pages (GWALIGN_HUGE_PAGES=0, no kernel or glibc support, or "
                        "GLIBC_TUNABLES set otherwise)")
              << "\n";
    return 0;
  }
  for (const auto& command : gw::cli::commands()) {
    if (command.name == first) {
      std::string name = "gwalign " + first;
      argv[1] = name.data();
      return command.run(argc - 1, argv + 1);
    }
  }
  std::cerr << "gwalign: unknown command '" << first << "'; run 'gwalign --help' for the list\n";
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  gw::cli::reexec_with_huge_pages(argv);  // huge_pages.h: first, before anything allocates
  try {
    std::vector<std::string> storage = gw::cli::normalize_arguments(argc, argv);
    std::vector<char*> args;
    for (auto& arg : storage) args.push_back(arg.data());
    args.push_back(nullptr);
    return dispatch(static_cast<int>(storage.size()), args.data());
  } catch (const gw::cli::Interrupted& e) {
    std::cerr << "gwalign: interrupted (" << (e.signal == SIGINT ? "SIGINT" : "SIGTERM")
              << "); nothing was written\n";
    return 128 + e.signal;
  } catch (const gw::Error& e) {
    std::cerr << "gwalign: error: " << e.what() << "\n";
    return gw::exit_code(e.code());
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "gwalign: usage error: " << e.what() << " (see --help)\n";
    return 64;
  } catch (const std::bad_alloc&) {
    std::cerr << "gwalign: error: out of memory; try a smaller problem or --mode landmark\n";
    return 71;  // EX_OSERR
  } catch (const std::exception& e) {
    std::cerr << "gwalign: internal error: " << e.what() << "\n";
    return 70;  // EX_SOFTWARE
  }
}
