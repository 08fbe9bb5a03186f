// Helpers shared by the cellgraph test files.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace gw::test {

// Expects `fn` to throw gw::Error with `code` and a message containing `fragment`.
template <typename Fn>
void expect_error(Fn&& fn, ErrorCode code, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace gw::test
