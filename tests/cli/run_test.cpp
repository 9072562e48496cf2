// `kiln run` end to end on the runtime's standard test artifact, checked against the
// hand-computed reference outputs.
#include <gtest/gtest.h>

#include <sstream>

#include "cli_fixture.h"
#include "cli_runner.h"
#include "npy.h"
#include "tensor_compare.h"

namespace kiln::clitest {
namespace {

const CliFiles& f() { return cliFiles(); }

void expectNpyNear(const std::string& path, const std::string& reference) {
  cli::HostTensor got = cli::readNpyFile(path);
  cli::HostTensor want = cli::readNpyFile(reference);
  auto mismatch = cli::compareTensors(got, want, {1e-6, 1e-6});
  EXPECT_FALSE(mismatch) << path << ": " << (mismatch ? mismatch->message : "");
}

TEST(KilnRun, WritesEveryOutputToItsNpyFile) {
  std::string out = f().dir + "/run_out.npy", total = f().dir + "/run_total.npy",
              twice = f().dir + "/run_twice.npy";
  CliResult r = runKiln({"run", f().elf, "--input=@" + f().x, "--input=1x16xf32=@" + f().y,
                         "--output=@" + out, "--output=@" + total, "--output=@" + twice});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectNpyNear(out, f().out);
  expectNpyNear(total, f().total);
  expectNpyNear(twice, f().twice);
  EXPECT_EQ(r.out, "");
}

TEST(KilnRun, ExpectedOutputsMatch) {
  CliResult r = runKiln({"run", f().elf, "--input=@" + f().x, "--input=@" + f().y,
                         "--expected_output=@" + f().out, "--expected_output=@" + f().total,
                         "--expected-output=@" + f().twice, "--tolerance=1e-5,1e-6"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("output 0 ('out') matches the expected value"), std::string::npos);
  EXPECT_NE(r.err.find("output 2 ('twice') matches the expected value"), std::string::npos);
}

TEST(KilnRun, VerdictFollowsThePrintedOutputInOneStream) {
  // `kiln run ... 2>&1 | less`: the printed tensor (stdout) comes before the verdict
  // (stderr), not cut in two by it.
  CliResult r = runKiln({"run", f().elf, "--input=@" + f().x, "--input=@" + f().y,
                         "--output=-", "--expected_output=@" + f().out},
                        /*oneStream=*/true);
  ASSERT_EQ(r.exitCode, 0) << r.out;
  const size_t tensor = r.out.find("output 0 'out': 1x16xf32\n[["), verdict =
      r.out.find("output 0 ('out') matches the expected value");
  ASSERT_NE(tensor, std::string::npos) << r.out;
  ASSERT_NE(verdict, std::string::npos) << r.out;
  EXPECT_GT(verdict, r.out.find("]]", tensor)) << r.out;
}

TEST(KilnRun, PrintsOutputsWithoutOutputFlag) {
  // x + x of sampleX (i - 6) is 2i - 12.
  CliResult r = runKiln({"run", f().elf, "--input=@" + f().x, "--input=@" + f().y,
                         "--output=-", "--output=@" + f().dir + "/ignored_total.npy"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("output 0 'out': 1x16xf32\n[["), std::string::npos) << r.out;
  // numpy: str(np.arange(16, dtype=np.float32) * 2 - 12)
  EXPECT_NE(r.out.find("output 2 'twice': 16xf32\n[-12. -10.  -8.  -6.  -4.  -2.   0.   2.   4.   "
                       "6.   8.  10.  12.  14.\n  16.  18.]"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("output 1"), std::string::npos);
}

TEST(KilnRun, InlineValuesAndOtherFunction) {
  CliResult r = runKiln({"run", f().elf, "--function=relu",
                         "--input=16xf32=-1 2 -3 4 0 0 0 0 0 0 0 0 0 0 0 -7.5"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "output 0 'y': 16xf32\n[0. 2. 0. 4. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0.]\n");
}

TEST(KilnRun, TracePrintsEveryDispatchInOrder) {
  CliResult r = runKiln({"run", f().elf, "--input=@" + f().x, "--input=@" + f().y, "--trace",
                         "--output=@" + f().dir + "/t0.npy", "--output=@" + f().dir + "/t1.npy",
                         "--output=@" + f().dir + "/t2.npy"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream lines(r.err);
  std::string line;
  std::vector<std::string> dispatchLines;
  while (std::getline(lines, line))
    if (line.starts_with("trace: dispatch")) dispatchLines.push_back(line);
  ASSERT_EQ(dispatchLines.size(), 5u) << r.err;
  for (size_t i = 0; i < dispatchLines.size(); ++i) {
    std::string index = std::to_string(i);
    EXPECT_NE(dispatchLines[i].find("dispatch    " + index + " "), std::string::npos)
        << dispatchLines[i];
    EXPECT_NE(dispatchLines[i].find(" us"), std::string::npos);
    EXPECT_NE(dispatchLines[i].find("dispatch_" + index + " <- node_" + index),
              std::string::npos)
        << dispatchLines[i];
  }
  EXPECT_NE(r.err.find("trace: 5 dispatches, "), std::string::npos) << r.err;
}

TEST(KilnRun, DoesNotLoadTheCompiler) {
  // `kiln` links only the runtime (compile runs in kiln-compile): loading LLVM and libonnx
  // alone would take ~55 MB.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "sanitizer runtimes change the resident set";
#endif
#endif
  CliResult r = runKiln({"run", f().elf, "--input=@" + f().x, "--input=@" + f().y,
                         "--expected_output=@" + f().out});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_LT(r.maxRssKb, 16 * 1024);
}

TEST(KilnRun, ThreadPoolGivesTheSameResult) {
  CliResult r = runKiln({"run", f().elf, "--threads=2", "--input=@" + f().x, "--input=@" + f().y,
                         "--expected_output=@" + f().out, "--expected_output=@" + f().total,
                         "--expected_output=@" + f().twice});
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST(KilnRun, ExternalConstantsFromFile) {
  CliResult r = runKiln({"run", f().external, "--constants=" + f().constants,
                         "--input=@" + f().x, "--input=@" + f().y, "--expected_output=@" + f().out});
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST(KilnRun, StrippedArtifactTracesWithoutNames) {
  CliResult r = runKiln({"run", f().stripped, "--trace", "--input=@" + f().x,
                         "--input=@" + f().y, "--expected_output=@" + f().out});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("trace: dispatch    4"), std::string::npos);
  EXPECT_EQ(r.err.find("node_"), std::string::npos);
}

}  // namespace
}  // namespace kiln::clitest
