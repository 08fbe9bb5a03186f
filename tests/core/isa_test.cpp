// Run-time target selection (core/isa.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/config.h"
#include "core/error.h"
#include "core/isa.h"

namespace gw {
namespace {

// Restores the environment variable, the cap and the active target after each test.
class IsaSelection : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* value = std::getenv(kIsaEnvironmentVariable);
    had_value_ = value != nullptr;
    if (had_value_) saved_ = value;
    previous_ = active_isa();
  }
  void TearDown() override {
    if (had_value_) {
      setenv(kIsaEnvironmentVariable, saved_.c_str(), 1);
    } else {
      unsetenv(kIsaEnvironmentVariable);
    }
    detail::cap_cpu_isa_for_testing(std::nullopt);
    detail::reset_active_isa_for_testing();
    set_active_isa(previous_);
  }
  bool had_value_ = false;
  std::string saved_;
  Isa previous_ = Isa::kBaseline;
};

std::string message_of(void (*fn)()) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(IsaSelection, NamesRoundTrip) {
  for (Isa isa : {Isa::kBaseline, Isa::kAvx2, Isa::kAvx512}) {
    EXPECT_EQ(isa_from_string(to_string(isa)), isa);
  }
  EXPECT_FALSE(isa_from_string("native").has_value());
  EXPECT_FALSE(isa_from_string("AVX2").has_value());
}

TEST_F(IsaSelection, BaselineIsAlwaysSupportedAndBestIsTheHighestSupported) {
  ASSERT_TRUE(isa_supported(Isa::kBaseline));
  const auto isas = supported_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::kBaseline);
  EXPECT_EQ(best_isa(), isas.back());
  for (Isa isa : isas) EXPECT_TRUE(isa_supported(isa));
#if !GW_ISA_MULTI_TARGET
  EXPECT_EQ(isas.size(), 1u);
#endif
}

TEST_F(IsaSelection, DefaultIsTheBestSupportedTarget) {
  unsetenv(kIsaEnvironmentVariable);
  detail::reset_active_isa_for_testing();
  EXPECT_EQ(active_isa(), best_isa());
}

TEST_F(IsaSelection, EnvironmentVariableForcesALowerTarget) {
  setenv(kIsaEnvironmentVariable, "baseline", 1);
  detail::reset_active_isa_for_testing();
  EXPECT_EQ(active_isa(), Isa::kBaseline);
  EXPECT_NE(isa_description().find("forced by GWALIGN_ISA"), std::string::npos)
      << isa_description();
}

TEST_F(IsaSelection, NeverPicksATargetTheCpuLacks) {
  // As if the CPU stopped at AVX2 (or at the baseline): the default choice stays within it.
  detail::cap_cpu_isa_for_testing(Isa::kBaseline);
  unsetenv(kIsaEnvironmentVariable);
  detail::reset_active_isa_for_testing();
  EXPECT_EQ(active_isa(), Isa::kBaseline);
  EXPECT_FALSE(isa_supported(Isa::kAvx2));
  EXPECT_FALSE(isa_supported(Isa::kAvx512));
  EXPECT_THROW(set_active_isa(Isa::kAvx512), Error);
  EXPECT_EQ(active_isa(), Isa::kBaseline);
}

TEST_F(IsaSelection, ForcedTargetTheCpuLacksIsAnErrorNamingTheVariable) {
  detail::cap_cpu_isa_for_testing(Isa::kBaseline);
  setenv(kIsaEnvironmentVariable, "avx512", 1);
  detail::reset_active_isa_for_testing();
  const std::string message = message_of([] { active_isa(); });
  EXPECT_NE(message.find("GWALIGN_ISA=avx512"), std::string::npos) << message;
  EXPECT_NE(message.find("does not support"), std::string::npos) << message;
  EXPECT_NE(message.find("baseline"), std::string::npos) << message;  // what is supported
  // Still an error on the next call: a kernel never runs with an unsupported target.
  EXPECT_THROW(active_isa(), Error);
}

TEST_F(IsaSelection, UnknownTargetNameIsAnErrorNamingTheVariable) {
  setenv(kIsaEnvironmentVariable, "avx1024", 1);
  detail::reset_active_isa_for_testing();
  const std::string message = message_of([] { active_isa(); });
  EXPECT_NE(message.find("GWALIGN_ISA=avx1024"), std::string::npos) << message;
  EXPECT_NE(message.find("is not a target"), std::string::npos) << message;
}

TEST_F(IsaSelection, ScopedIsaRestoresThePreviousTarget) {
  set_active_isa(best_isa());
  {
    ScopedIsa scoped(Isa::kBaseline);
    EXPECT_EQ(active_isa(), Isa::kBaseline);
  }
  EXPECT_EQ(active_isa(), best_isa());
}

}  // namespace
}  // namespace gw
