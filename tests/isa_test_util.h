// Runs a test body once per instruction-set target this CPU supports (core/isa.h), with that
// target active, so every dispatched kernel is checked against its oracle on every target.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/isa.h"

namespace gw::test {

template <typename Body>
void for_each_isa(Body&& body) {
  for (Isa isa : supported_isas()) {
    ScopedIsa scoped(isa);
    SCOPED_TRACE(std::string("target ") + to_string(isa));
    body(isa);
  }
}

}  // namespace gw::test
