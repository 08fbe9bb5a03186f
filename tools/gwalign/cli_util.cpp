// What the gwalign subcommands share about their files (cli_util.h).
#include "cli_util.h"

#include <filesystem>

#include "io/atomic_text_file.h"
#include "io/h5ad.h"

namespace gw::cli {

using io::same_file;

std::string spec_file(const std::string& default_file, const std::string& spec) {
  if (spec.empty() || spec.rfind("obs:", 0) == 0) return default_file;
  // Only the file matters here: a malformed spec fails later, where its flag is named.
  try {
    return io::resolve_matrix_spec(default_file, spec).file;
  } catch (const Error&) {
    return default_file;
  }
}

void check_output_path(const std::string& path,
                       std::string_view flag,
                       const std::vector<InputFile>& inputs,
                       std::string_view hint) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The same status as an existing directory ("it is a directory", 73) for "d/", which io::Writer
  // would report as a usage error: one kind of bad output path, one exit status.
  GW_CHECK(!path.empty(), flag << " is empty; give a file name such as out.h5");
  GW_CHECK_CODE(fs::path(path).has_filename() && !fs::is_directory(fs::status(path, ec)),
                ErrorCode::kCannotCreate,
                "cannot create '" << path << "' (" << flag
                                  << "): it is a directory; give a file name such as out.h5");
  for (const InputFile& input : inputs) {
    GW_CHECK(!same_file(path, input.path),
             flag << " '" << path << "' is an input file (" << input.named_by << " '" << input.path
                  << "'); choose another output" << hint);
  }
}

}  // namespace gw::cli
