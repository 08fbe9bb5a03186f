// Reading tissue sections for `gwalign slices` and carrying annotations through plans for
// `gwalign slices --transfer` and `gwalign transfer`: the file-facing half of the spatial module
// (the algorithms live in spatial/).
#pragma once

#include <cxxopts.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "io/h5ad.h"
#include "solver/result.h"
#include "spatial/expression.h"
#include "spatial/slices.h"
#include "spatial/transfer.h"

namespace gw::cli {

// The coordinates of `file` at obsm[key] (n x 2). kNotFound "'FILE' has no obsm['KEY'] ..." when
// missing; kBadData when not n x 2.
std::vector<double> read_section_coordinates(const io::H5adReader& file, const std::string& key,
                                             int* dimension);

// X restricted to `columns` (the shared genes) as a dense float block.
spatial::ExpressionBlock read_expression_block(const io::H5adReader& file,
                                               const std::vector<Index>& columns);

// A transfer key: "NAME" (an obs column: categorical / strings -> class probabilities, numeric ->
// barycentric average) or "obsm:NAME" (a matrix, averaged column by column).
struct TransferKey {
  std::string text;
  std::string name;
  bool obsm = false;
};
// Parses "a,b,obsm:c". kInvalidArgument naming `flag` on an empty key.
std::vector<TransferKey> parse_transfer_keys(const std::string& list, const std::string& flag);
// kNotFound naming the file and the key when `key` is not in `file`.
void check_transfer_key(const io::H5adReader& file, const TransferKey& key);

// Carries `key` from `from` through the plan (direction as in options) and puts the result into
// `out` (the receiving file's writer): obs KEY_transferred (categorical, same categories) and
// KEY_transferred_confidence, or obs / obsm KEY_transferred (averages, NaN where unreached).
// Returns the number of receiving cells the plan does not reach.
Index transfer_key(const io::H5adReader& from, const TransferKey& key, const spatial::PlanView& plan,
                   const spatial::TransferOptions& options, io::H5adWriter& out);

// A result's plan as CSR (the top-k rows as they are; a dense plan's positive entries), for
// io::matrix_market_text.
io::CsrArray<double> plan_csr(const Result& result);

// An obsm matrix read as n x d double features for the expression cost or an atlas's geometry:
// kNotFound naming the file and key when missing, kBadData when not a 2-D matrix with `rows` rows
// or when it holds a non-finite value.
DenseMatrix<double> read_obsm_matrix(const io::H5adReader& file, const std::string& key, Index rows);

// The expression features of slices and map: the genes every file shares (X's columns), log1p of
// normalized counts and a joint PCA (--expression, --pca-dims, --seed), one n_s x d matrix per
// file in order; a line on stderr says what was built. kBadData naming the files when no gene is
// shared (`hint` is appended to that message); kInvalidArgument when --pca-dims < 1.
std::vector<DenseMatrix<double>> shared_gene_features(const std::vector<const io::H5adReader*>& files,
                                                      const cxxopts::ParseResult& flags, std::string_view hint);

// --features obsm:KEY of slices and map: each file's obsm[KEY] (kNotFound / kBadData as
// read_obsm_matrix; kBadData naming both files when the widths differ), rows scaled to unit
// length under --expression cosine. kInvalidArgument when the spec is not obsm:KEY or when
// --pca-dims is given too (it applies to the shared-gene PCA only).
std::vector<DenseMatrix<double>> read_feature_representation(const std::vector<const io::H5adReader*>& files,
                                                             const std::string& spec,
                                                             const cxxopts::ParseResult& flags);

}  // namespace gw::cli
