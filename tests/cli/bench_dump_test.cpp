// `kiln bench`, `kiln compare`, `kiln dump`, `kiln help` and `kiln --version` on the standard
// test artifact.
#include <gtest/gtest.h>

#include <cstring>

#include "artifact_writer.h"
#include "cli_fixture.h"
#include "cli_runner.h"
#include "npy.h"
#include "test_artifacts.h"

namespace kiln::clitest {
namespace {

const CliFiles& f() { return cliFiles(); }

TEST(KilnBench, JsonHasTheStatistics) {
  CliResult r = runKiln({"bench", f().elf, "--input=@" + f().x, "--input=@" + f().y,
                         "--iterations=50", "--warmup=2", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* key : {"\"p50_us\":", "\"p99_us\":", "\"min_us\":", "\"max_us\":",
                          "\"mean_us\":", "\"p90_us\":", "\"jitter\":"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
  EXPECT_NE(r.out.find("\"iterations\":50,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"warmup_iterations\":2,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.front(), '{');
}

TEST(KilnBench, TextReportWithThreads) {
  CliResult r = runKiln({"bench", f().elf, "--input=@" + f().x, "--input=@" + f().y,
                         "--threads=2", "--seconds=0.05"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("function 'main', 2 threads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p50 "), std::string::npos);
  EXPECT_NE(r.out.find("jitter (p99/p50): "), std::string::npos);
}

TEST(KilnCompare, TwoArtifactsOfOneModelSideBySide) {
  // The artifact with and without its DEBUG section: the same kernels, the same outputs.
  CliResult r = runKiln({"compare", f().elf, f().stripped, "--input=@" + f().x,
                         "--input=@" + f().y, "--seconds=0.05", "--block-ms=5", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* key : {"\"a_p50_us\":", "\"b_p50_us\":", "\"ratio_p25\":", "\"ratio_p50\":",
                          "\"ratio_p75\":", "\"a_calls\":", "\"b_calls\":"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
  EXPECT_NE(r.out.find("\"outputs_agree\":true"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"pairs\":0,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"pairs\":1,"), std::string::npos) << "at least two pairs: " << r.out;

  r = runKiln({"compare", f().elf, f().stripped, "--input=@" + f().x, "--input=@" + f().y,
               "--threads=2", "--seconds=0.05", "--block-ms=5"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* text : {"function 'main', 2 threads, ", " pairs of 5 ms blocks\n",
                           "  A " , "  B ", "B / A by pairs of blocks: median ",
                           "outputs agree (rtol 0.001, atol 1e-05)"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " in " << r.out;
}

// --threads-b: B at another thread count, so that one artifact's speed-up is measured in
// neighbouring blocks. The outputs still agree (the pool gives the same bits), and the flag
// takes the same range as --threads.
TEST(KilnCompare, BAtAnotherThreadCount) {
  CliResult r = runKiln({"compare", f().elf, f().elf, "--input=@" + f().x, "--input=@" + f().y,
                         "--threads=1", "--threads-b=2", "--seconds=0.05", "--block-ms=5"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* text : {"function 'main', A at 1 thread, B at 2 threads, ",
                           "B / A by pairs of blocks: median ",
                           "  A / B (B's speed-up at 2 threads over A's at 1): ",
                           "outputs agree (rtol 0.001, atol 1e-05)"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " in " << r.out;
  r = runKiln({"compare", f().elf, f().elf, "--input=@" + f().x, "--input=@" + f().y,
               "--threads-b=3", "--seconds=0.02", "--block-ms=5", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"threads\":1,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"threads_b\":3,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"outputs_agree\":true"), std::string::npos) << r.out;
  // Same counts: the one-line header of old, no speed-up line.
  r = runKiln({"compare", f().elf, f().elf, "--input=@" + f().x, "--input=@" + f().y,
               "--threads=2", "--threads-b=2", "--seconds=0.02", "--block-ms=5"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("function 'main', 2 threads, "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("speed-up"), std::string::npos) << r.out;
  for (const char* bad : {"--threads-b=0", "--threads-b=257"}) {
    CliResult e = runKiln({"compare", f().elf, f().elf, "--input=@" + f().x,
                           "--input=@" + f().y, bad});
    EXPECT_EQ(e.exitCode, 1) << bad;
    EXPECT_NE(e.err.find(std::string(bad) + " is out of range [1, 256]"), std::string::npos)
        << e.err;
  }
}

TEST(KilnCompare, SaysWhichOutputDiffers) {
  // The standard artifact with a bias of 100 instead of its own: `out` (the scaled, biased
  // sum after Relu) and `total` differ, `twice` does not. Reported, not an error.
  testing::ArtifactSpec spec = testing::standardSpec(testing::Kernels::kElf);
  const float bias = 100.0f;
  std::memcpy(spec.constants.data() + 64, &bias, 4);
  const std::string biased = f().dir + "/biased.kiln";
  cli::writeFileBytes(biased, testing::writeArtifact(spec));
  CliResult r = runKiln({"compare", f().elf, biased, "--input=@" + f().x, "--input=@" + f().y,
                         "--seconds=0.02", "--block-ms=5", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"outputs_agree\":false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"outputs_differ\":\"output 0 ('out'): "), std::string::npos) << r.out;
  r = runKiln({"compare", f().elf, biased, "--input=@" + f().x, "--input=@" + f().y,
               "--seconds=0.02", "--block-ms=5"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("  outputs differ: output 0 ('out'): "), std::string::npos) << r.out;
}

TEST(KilnDump, TextShowsSectionsFunctionsAndStages) {
  CliResult r = runKiln({"dump", f().elf});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* text :
       {"kiln artifact, format 1.0", "target: x86_64, abi lp64", "arena: 192 bytes",
        "stack bound: 256 bytes", "  META ", "  COMMANDS ", "  CONSTANTS ", "  KERNELS ",
        "  DEBUG ", "function 'main': 2 inputs, 3 outputs, 5 dispatches",
        "input  0 'x': 1x16xf32", "output 1 'total': 1xf32", "    stage 0:\n      dispatch #0",
        "dispatch #2  kernel 1  workgroups 2  dispatch_2  <- node_2",
        "binding 2: constants  +64", "    stage 3:\n      copy      arena +64 -> output 0 +0, 64 bytes",
        "function 'relu'"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

TEST(KilnDump, JsonListsDispatchesInScheduleOrder) {
  CliResult r = runKiln({"dump", f().elf, "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"arena_bytes\":192"), std::string::npos);
  EXPECT_NE(r.out.find("\"sections\":[{\"name\":\"META\""), std::string::npos);
  EXPECT_NE(r.out.find("\"functions\":[{\"name\":\"main\""), std::string::npos);
  // Stages of main's five dispatches: 0, 0, 1, 2, 3; relu's one: 1.
  size_t pos = r.out.find("\"dispatches\":[");
  ASSERT_NE(pos, std::string::npos);
  int expectedStage[] = {0, 0, 1, 2, 3, 1};
  int expectedKernel[] = {0, 0, 1, 2, 3, 2};
  for (int i = 0; i < 6; ++i) {
    std::string entry = "{\"index\":" + std::to_string(i) + ",";
    size_t at = r.out.find(entry, pos);
    ASSERT_NE(at, std::string::npos) << entry;
    size_t end = r.out.find("\"bindings\"", at);
    std::string head = r.out.substr(at, end - at);
    EXPECT_NE(head.find("\"kernel\":" + std::to_string(expectedKernel[i]) + ","),
              std::string::npos) << head;
    EXPECT_NE(head.find("\"stage\":" + std::to_string(expectedStage[i]) + ","),
              std::string::npos) << head;
    pos = at;
  }
}

TEST(KilnDump, StrippedAndExternal) {
  CliResult stripped = runKiln({"dump", f().stripped});
  ASSERT_EQ(stripped.exitCode, 0) << stripped.err;
  EXPECT_EQ(stripped.out.find("DEBUG"), std::string::npos);
  CliResult external = runKiln({"dump", f().external});
  ASSERT_EQ(external.exitCode, 0) << external.err;
  EXPECT_NE(external.out.find("(external: 128 bytes in a separate file)"), std::string::npos)
      << external.out;
}

TEST(KilnHelp, VersionAndHelp) {
  CliResult version = runKiln({"--version"});
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_TRUE(version.out.starts_with("kiln ")) << version.out;
  EXPECT_NE(version.out.find("artifact format 1.1"), std::string::npos);
  CliResult help = runKiln({"help"});
  EXPECT_EQ(help.exitCode, 0);
  for (const char* c : {"  compile ", "  run ", "  bench ", "  dump ", "  help "})
    EXPECT_NE(help.out.find(c), std::string::npos) << c;
  CliResult run = runKiln({"help", "run"});
  EXPECT_EQ(run.exitCode, 0);
  EXPECT_TRUE(run.out.starts_with("usage: kiln run ARTIFACT")) << run.out;
  EXPECT_NE(run.out.find("--expected-output=TENSOR"), std::string::npos);
  CliResult flag = runKiln({"dump", "--help"});
  EXPECT_EQ(flag.exitCode, 0);
  EXPECT_TRUE(flag.out.starts_with("usage: kiln dump ARTIFACT")) << flag.out;
}

}  // namespace
}  // namespace kiln::clitest
