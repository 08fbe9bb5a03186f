// `gwalign transfer FROM.h5ad TO.h5ad --plan P.mtx --keys a,b [--direction push|pull] -o OUT`:
// annotations carried through a plan (spatial/transfer.h). The plan's rows are FROM's cells and its
// columns TO's (as `gwalign slices` writes plan_<a>_<b>.mtx: rows a, columns b). push carries FROM's
// annotations onto TO's cells and writes a copy of TO; pull carries TO's onto FROM's and writes a
// copy of FROM.
#include <cxxopts.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "command.h"
#include "core/error.h"
#include "interrupt.h"
#include "io/h5ad.h"
#include "io/matrix_market.h"
#include "slices_io.h"

namespace gw::cli {
namespace {

constexpr const char* kTransferHelp = R"(
Each KEY is an obs column of the sending file or obsm:KEY. A categorical (or string) column gives
obs KEY_transferred (categorical, the argmax of the plan-weighted class probabilities) and
KEY_transferred_confidence (that probability); a numeric column or obsm matrix gives the
plan-weighted average (obs KEY_transferred or obsm KEY_transferred). Cells the plan does not reach
(a partial plan) get a missing label, confidence 0 and NaN averages.

Examples:
  gwalign transfer a.h5ad b.h5ad --plan aligned/plan_0_1.mtx --keys celltype,domain -o b_labelled.h5ad
  gwalign transfer a.h5ad b.h5ad --plan aligned/plan_0_1.mtx --keys region --direction pull -o a_out.h5ad
)";

int run_transfer(int argc, char** argv) {
  cxxopts::Options cli(argv[0], "Carry annotations from one .h5ad to another through a transport plan.");
  // clang-format off
  cli.add_options()
      ("files", "FROM.h5ad TO.h5ad", cxxopts::value<std::vector<std::string>>())
      ("plan", "the plan, Matrix Market (rows: FROM's cells, columns: TO's)", cxxopts::value<std::string>())
      ("keys", "obs columns or obsm:KEY to carry, comma-separated", cxxopts::value<std::string>())
      ("direction", "push (FROM -> TO) | pull (TO -> FROM)", cxxopts::value<std::string>()->default_value("push"))
      ("o,output", "the receiving file's copy with the transferred columns", cxxopts::value<std::string>())
      ("h,help", "print this help");
  // clang-format on
  cli.parse_positional({"files"});
  cli.positional_help("FROM.h5ad TO.h5ad --plan P.mtx --keys KEY,... -o OUT.h5ad");
  const auto flags = cli.parse(argc, argv);
  if (flags.count("help")) {
    std::cout << cli.help() << kTransferHelp;
    return 0;
  }
  GW_CHECK(flags.count("files") && flags["files"].as<std::vector<std::string>>().size() == 2,
           "give two files: gwalign transfer FROM.h5ad TO.h5ad --plan P.mtx --keys KEY -o OUT.h5ad");
  GW_CHECK(flags.count("plan"), "give the plan with --plan P.mtx (gwalign slices writes plan_<a>_<b>.mtx)");
  GW_CHECK(flags.count("keys"), "give the annotations to carry with --keys KEY,...");
  GW_CHECK(flags.count("output"), "give the output file with -o OUT.h5ad");
  const auto files = flags["files"].as<std::vector<std::string>>();
  const std::string plan_path = flags["plan"].as<std::string>();
  const std::string output = flags["output"].as<std::string>();
  spatial::TransferOptions options;
  options.direction = spatial::direction_from_string(flags["direction"].as<std::string>());
  const bool push = options.direction == spatial::Direction::kPush;
  const std::vector<TransferKey> keys = parse_transfer_keys(flags["keys"].as<std::string>(), "--keys");
  check_output_path(output, "-o", {{files[0], "FROM"}, {files[1], "TO"}, {plan_path, "--plan"}},
                    "; write the copy elsewhere");

  const io::H5adReader from(files[0]);
  const io::H5adReader to(files[1]);
  const io::H5adReader& sender = push ? from : to;
  for (const TransferKey& key : keys) check_transfer_key(sender, key);
  const io::CsrArray<double> plan = io::read_matrix_market(plan_path);
  GW_CHECK_CODE(plan.rows == from.n_obs() && plan.cols == to.n_obs(), ErrorCode::kBadData,
                "plan '" << plan_path << "' is " << plan.rows << " x " << plan.cols << " but '" << files[0]
                         << "' has " << from.n_obs() << " cells (rows) and '" << files[1] << "' "
                         << to.n_obs() << " (columns)");
  const spatial::PlanView view =
      spatial::PlanView::csr(plan.indptr, plan.indices, plan.data, static_cast<Index>(plan.rows),
                             static_cast<Index>(plan.cols));
  const InterruptScope interrupts;
  io::H5adWriter out = io::H5adWriter::copy_of(push ? files[1] : files[0], output);
  for (const TransferKey& key : keys) {
    const Index unreached = transfer_key(sender, key, view, options, out);
    std::cerr << key.text << " -> " << key.name << "_transferred (" << spatial::to_string(options.direction)
              << "): " << unreached << " cells unreached\n";
  }
  throw_if_interrupted();
  out.commit();
  std::cout << "wrote " << output << "\n";
  return 0;
}

}  // namespace

GW_CLI_COMMAND("transfer", "carry obs / obsm annotations between h5ad files through a plan", run_transfer);

}  // namespace gw::cli
