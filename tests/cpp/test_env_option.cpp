// The environment-variable helpers every FLASHVISION_* override reads through (api/env_option.h).
#include "api/env_option.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "flashvision/error.h"
#include "scoped_env.h"

namespace flashvision::detail {
namespace {

using flashvision::testing::ScopedEnv;

constexpr const char* kName = "FLASHVISION_TEST_ENV_OPTION";

/// The message of the Error that `read` throws, or "" when it throws none.
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(EnvOption, UnsetAndEmptyReadAsNothing) {
  {
    ScopedEnv env(kName, "");
    EXPECT_FALSE(env_text(kName));
  }
  unsetenv(kName);
  EXPECT_FALSE(env_text(kName));
  ScopedEnv env(kName, " 7");
  ASSERT_TRUE(env_text(kName));
  EXPECT_EQ(*env_text(kName), " 7");
}

TEST(EnvOption, DecimalsAreDigitsWithinTheRange) {
  EXPECT_EQ(decimal_in("0", 0, 8), 0);
  EXPECT_EQ(decimal_in("8", 0, 8), 8);
  EXPECT_EQ(decimal_in("0128", 1, 128), 128);
  EXPECT_EQ(decimal_in("1048576", 1, 1 << 20), 1 << 20);
  for (const char* bad : {"", "9", "-1", "+3", " 3", "3 ", "3.0", "0x8", "two",
                          "99999999999999999999999"}) {
    EXPECT_FALSE(decimal_in(bad, 0, 8)) << bad;
  }
  EXPECT_FALSE(decimal_in("0", 1, 8));
}

TEST(EnvOption, ChoicesAndTheirFallback) {
  const auto read = [] {
    return env_choice(kName, {{"rows", 1}, {"tiles", 2}}, 7, "rows or tiles");
  };
  unsetenv(kName);
  EXPECT_EQ(read(), 7);
  for (const auto& [text, value] : {std::pair{"", 7}, {"rows", 1}, {"tiles", 2}}) {
    ScopedEnv env(kName, text);
    EXPECT_EQ(read(), value) << text;
  }
  ScopedEnv env(kName, "Rows");
  EXPECT_EQ(error_of(read),
            std::string("flashvision: ") + kName + " is \"Rows\", expected rows or tiles");
}

TEST(EnvOption, DecimalsAndTheirFallback) {
  const auto read = [](bool accepts_auto) {
    return env_decimal(kName, 2, 8, -1, "auto or a count 2..8", accepts_auto);
  };
  unsetenv(kName);
  EXPECT_EQ(read(false), -1);
  for (const auto& [text, value] : {std::pair{"", -1}, {"2", 2}, {"08", 8}}) {
    ScopedEnv env(kName, text);
    EXPECT_EQ(read(false), value) << text;
  }
  {
    ScopedEnv env(kName, "auto");
    EXPECT_EQ(read(true), -1);
    EXPECT_EQ(error_of([&] { read(false); }),
              std::string("flashvision: ") + kName + " is \"auto\", expected auto or a count 2..8");
  }
  for (const char* bad : {"1", "9", "Auto", " 3"}) {
    ScopedEnv env(kName, bad);
    EXPECT_EQ(error_of([&] { read(true); }), std::string("flashvision: ") + kName + " is \"" +
                                                 bad + "\", expected auto or a count 2..8")
        << bad;
  }
}

TEST(EnvOption, RejectionNamesTheVariableAndTheValue) {
  EXPECT_EQ(error_of([] { reject_env(kName, "x y", "a stagger 1..4"); }),
            std::string("flashvision: ") + kName + " is \"x y\", expected a stagger 1..4");
}

}  // namespace
}  // namespace flashvision::detail
