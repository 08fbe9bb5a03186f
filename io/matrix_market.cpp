#include "io/matrix_market.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace gw::io {

std::string matrix_market_text(const CsrArray<double>& m, std::string_view comment) {
  validate_csr(m, "matrix to write as Matrix Market");
  std::string out = "%%MatrixMarket matrix coordinate real general\n";
  std::size_t start = 0;
  while (start < comment.size()) {
    const std::size_t end = std::min(comment.find('\n', start), comment.size());
    out.append("% ").append(comment.substr(start, end - start)).append("\n");
    start = end + 1;
  }
  out += std::to_string(m.rows) + " " + std::to_string(m.cols) + " " + std::to_string(m.nnz()) + "\n";
  out.reserve(out.size() + static_cast<std::size_t>(m.nnz()) * 36);
  char line[96];
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (Offset p = m.indptr[i]; p < m.indptr[i + 1]; ++p) {
      const int len = std::snprintf(line, sizeof(line), "%lld %d %.17g\n", static_cast<long long>(i + 1),
                                    m.indices[p] + 1, m.data[p]);
      out.append(line, static_cast<std::size_t>(len));
    }
  }
  return out;
}

CsrArray<double> read_matrix_market(const std::string& path) {
  std::ifstream in(path);
  GW_CHECK_CODE(in.good(), ErrorCode::kNotFound, "plan file '" << path << "' cannot be opened");
  std::string line;
  std::getline(in, line);
  std::string lower = line;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  GW_CHECK_CODE(lower.rfind("%%matrixmarket matrix coordinate", 0) == 0, ErrorCode::kBadData,
                "'" << path << "' is not a Matrix Market coordinate matrix (first line: '"
                    << line.substr(0, 60) << "')");
  GW_CHECK_CODE(lower.find("complex") == std::string::npos, ErrorCode::kUnsupported,
                "'" << path << "': complex Matrix Market matrices are not supported");
  GW_CHECK_CODE(lower.find("general") != std::string::npos, ErrorCode::kUnsupported,
                "'" << path << "': only 'general' Matrix Market matrices are read (a plan is not symmetric)");
  const bool pattern = lower.find("pattern") != std::string::npos;
  std::int64_t line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line[0] != '%') break;
  }
  std::int64_t rows = 0, cols = 0, nnz = 0;
  {
    std::istringstream header(line);
    GW_CHECK_CODE(static_cast<bool>(header >> rows >> cols >> nnz) && rows >= 0 && cols >= 0 && nnz >= 0,
                  ErrorCode::kBadData, "'" << path << "' line " << line_number
                                           << ": expected 'ROWS COLS NNZ', got '" << line << "'");
  }
  std::vector<std::int64_t> r(nnz);
  std::vector<Index> c(nnz);
  std::vector<double> v(nnz, 1.0);
  for (std::int64_t e = 0; e < nnz; ++e) {
    GW_CHECK_CODE(static_cast<bool>(std::getline(in, line)), ErrorCode::kBadData,
                  "'" << path << "' ends after " << e << " of " << nnz << " entries");
    ++line_number;
    std::istringstream entry(line);
    std::int64_t i = 0, j = 0;
    const bool ok = static_cast<bool>(entry >> i >> j) && (pattern || static_cast<bool>(entry >> v[e]));
    GW_CHECK_CODE(ok && i >= 1 && i <= rows && j >= 1 && j <= cols, ErrorCode::kBadData,
                  "'" << path << "' line " << line_number << ": bad entry '" << line << "' (indices are 1-based in "
                      << rows << " x " << cols << ")");
    r[e] = i - 1;
    c[e] = static_cast<Index>(j - 1);
  }
  while (std::getline(in, line)) {
    ++line_number;
    GW_CHECK_CODE(line.find_first_not_of(" \t\r") == std::string::npos, ErrorCode::kBadData,
                  "'" << path << "' line " << line_number << ": more entries than the " << nnz << " announced");
  }
  CsrArray<double> out;
  out.rows = rows;
  out.cols = cols;
  out.indptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t e = 0; e < nnz; ++e) ++out.indptr[r[e] + 1];
  for (std::int64_t i = 0; i < rows; ++i) out.indptr[i + 1] += out.indptr[i];
  out.indices.resize(nnz);
  out.data.resize(nnz);
  std::vector<Offset> fill(out.indptr.begin(), out.indptr.end() - 1);
  for (std::int64_t e = 0; e < nnz; ++e) {
    const Offset p = fill[r[e]]++;
    out.indices[p] = c[e];
    out.data[p] = v[e];
  }
  return out;
}

}  // namespace gw::io
