// Sparse matrices as Matrix Market text (NIST's "coordinate real general" format, what
// scipy.io.mmread / mmwrite, R's Matrix::readMM and most tools read): `gwalign slices` writes its
// plans this way and `gwalign transfer` reads them back.
//
//   %%MatrixMarket matrix coordinate real general
//   % comment lines
//   ROWS COLS NNZ
//   i j value        (1-based, one entry per line)
#pragma once

#include <string>
#include <string_view>

#include "io/hdf5.h"

namespace gw::io {

// The text of `matrix` (entries in row order, values with 17 significant digits so they read back
// exactly), with `comment` lines (each prefixed with "% "). Validates the CSR first
// (kInvalidArgument).
std::string matrix_market_text(const CsrArray<double>& matrix, std::string_view comment = "");

// Reads a coordinate real / integer / pattern matrix, general (symmetric is kUnsupported) as CSR
// (rows in order, columns in file order within a row; duplicates kept). kNotFound when the file
// does not exist, kBadData naming the file and line on anything malformed (a bad header, an index
// out of range, fewer or more entries than announced).
CsrArray<double> read_matrix_market(const std::string& path);

}  // namespace gw::io
