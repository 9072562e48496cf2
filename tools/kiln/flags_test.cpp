// Tests for subcommand flag parsing.
#include "flags.h"

#include <gtest/gtest.h>

#include "cli_error.h"

namespace kiln::cli {
namespace {

const FlagSpec kFlags[] = {
    {"input", FlagKind::Repeated, "TENSOR", "an input"},
    {"expected-output", FlagKind::Repeated, "TENSOR", "expected"},
    {"threads", FlagKind::Value, "N", "threads"},
    {"output", FlagKind::Value, "FILE", "output", 'o'},
    {"trace", FlagKind::Bool, "", "trace"},
};

ParsedArgs parse(std::vector<std::string> args) { return parseArgs("run", kFlags, args); }

std::string errorOf(std::vector<std::string> args) {
  try {
    parse(args);
  } catch (const CliError& e) {
    return e.what();
  }
  return "";
}

TEST(Flags, ParsesAllForms) {
  ParsedArgs a = parse({"m.kiln", "--input=2xf32=1 2", "--input", "@x.npy", "--threads=2",
                        "-o", "out", "--trace", "--expected_output=@r.npy"});
  EXPECT_EQ(a.positionals, (std::vector<std::string>{"m.kiln"}));
  EXPECT_EQ(a.values("input"), (std::vector<std::string>{"2xf32=1 2", "@x.npy"}));
  EXPECT_EQ(a.integer("threads", 1, 1, 64), 2);
  EXPECT_EQ(a.value("output"), "out");
  EXPECT_TRUE(a.flag("trace"));
  EXPECT_EQ(a.values("expected-output"), (std::vector<std::string>{"@r.npy"}));
  ParsedArgs b = parse({"-oout2", "--trace=false", "--", "--input"});
  EXPECT_EQ(b.value("output"), "out2");
  EXPECT_FALSE(b.flag("trace"));
  EXPECT_EQ(b.positionals, (std::vector<std::string>{"--input"}));
}

TEST(Flags, Errors) {
  EXPECT_EQ(errorOf({"--bogus=1"}), "unknown flag '--bogus' for 'kiln run' (see 'kiln help run')");
  EXPECT_EQ(errorOf({"-x"}), "unknown flag '-x' for 'kiln run' (see 'kiln help run')");
  EXPECT_EQ(errorOf({"--input"}), "flag '--input' needs a value (--input=TENSOR)");
  EXPECT_EQ(errorOf({"--threads", "--trace"}), "flag '--threads' needs a value (--threads=N)");
  EXPECT_EQ(errorOf({"--threads=1", "--threads=2"}), "flag '--threads' given more than once");
  EXPECT_EQ(errorOf({"--trace=maybe"}),
            "flag '--trace' takes no value (or true/false), got 'maybe'");
}

TEST(Flags, NumbersAreChecked) {
  try {
    parse({"--threads=two"}).integer("threads", 1, 1, 64);
    FAIL();
  } catch (const CliError& e) {
    EXPECT_STREQ(e.what(), "--threads expects an integer, got 'two'");
  }
  try {
    parse({"--threads=0"}).integer("threads", 1, 1, 64);
    FAIL();
  } catch (const CliError& e) {
    EXPECT_STREQ(e.what(), "--threads=0 is out of range [1, 64]");
  }
}

}  // namespace
}  // namespace kiln::cli
