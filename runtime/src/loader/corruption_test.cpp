// Corrupt artifacts: every truncation length, and byte flips over the header, the section
// table, META and the command stream of a valid artifact. Each must end in an error status,
// or (for a flip that leaves a valid artifact, e.g. in a name) in a module that runs safely.
// Never a crash, a hang or an out-of-bounds access: these tests run under ASan and UBSan.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "module_runner.h"
#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

struct Outcome {
  size_t rejected = 0;
  size_t accepted = 0;
};

// Loads `bytes`; if it validates and its signatures cover the trusted kernels, runs it.
void tryArtifact(const std::vector<uint8_t>& bytes, Outcome* outcome) {
  Loaded::Options options;
  AlignedBuffer constants(standardConstants());
  options.externalConstants = constants.data();
  options.externalConstantsSize = constants.size();
  Loaded loaded(bytes, options);
  if (loaded.status() != KILN_OK) {
    ++outcome->rejected;
    EXPECT_FALSE(loaded.error().empty()) << "a failed load must say why";
    return;
  }
  ++outcome->accepted;
  if (signaturesCoverTestKernels(loaded.module())) runAllFunctions(loaded.module());
}

class Corruption : public ::testing::TestWithParam<int> {
 protected:
  std::vector<uint8_t> artifact() const {
    switch (GetParam()) {
      case 0:
        return writeArtifact(standardSpec(Kernels::kStatic));
      case 1:
        return writeArtifact(standardSpec(Kernels::kStatic, Constants::kExternal));
      default:
        return writeArtifact(standardSpec(Kernels::kElf));
    }
  }
};

TEST_P(Corruption, EveryTruncationIsRejected) {
  std::vector<uint8_t> full = artifact();
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
    Loaded loaded(cut);
    ASSERT_NE(loaded.status(), KILN_OK) << "truncated to " << n << " bytes";
    ASSERT_FALSE(loaded.error().empty());
  }
}

TEST_P(Corruption, ByteFlipsAreRejectedOrHarmless) {
  std::vector<uint8_t> full = artifact();
  std::vector<SectionSpan> spans = sectionSpans(full);
  // Header + section table, then META and COMMANDS in full.
  std::vector<std::pair<uint64_t, uint64_t>> regions = {
      {0, sizeof(kiln_header) + spans.size() * sizeof(kiln_section)}};
  for (const SectionSpan& s : spans) {
    if (s.kind == KILN_SECTION_META || s.kind == KILN_SECTION_COMMANDS)
      regions.push_back({s.offset, s.size});
  }
  Outcome outcome;
  const uint8_t masks[] = {0x01, 0x02, 0x10, 0x80, 0xff};
  for (auto [begin, size] : regions) {
    for (uint64_t at = begin; at < begin + size; ++at) {
      for (uint8_t mask : masks) {
        std::vector<uint8_t> bytes = full;
        bytes[at] ^= mask;
        tryArtifact(bytes, &outcome);
        if (HasFatalFailure()) return;
      }
    }
  }
  // Most flips must be caught; the accepted ones change only names, sizes or counts that remain
  // consistent (and they ran safely above).
  std::printf("byte flips: %zu rejected, %zu accepted and ran safely\n", outcome.rejected,
              outcome.accepted);
  EXPECT_GT(outcome.rejected, 4 * outcome.accepted);
}

TEST_P(Corruption, SetByteToEveryValueInTheHeader) {
  std::vector<uint8_t> full = artifact();
  Outcome outcome;
  for (size_t at = 0; at < sizeof(kiln_header); ++at) {
    for (int v = 0; v < 256; ++v) {
      if (v == full[at]) continue;
      std::vector<uint8_t> bytes = full;
      bytes[at] = static_cast<uint8_t>(v);
      tryArtifact(bytes, &outcome);
    }
  }
  // Every header byte is checked (cpu_features bits beyond what this CPU has are refused, but
  // features it has are accepted: those are the only flips allowed through).
  EXPECT_LT(outcome.accepted, 64u * 8u);
}

std::string artifactName(const ::testing::TestParamInfo<int>& info) {
  static const char* const kNames[] = {"Static", "ExternalConstants", "Elf"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(Artifacts, Corruption, ::testing::Values(0, 1, 2), artifactName);

}  // namespace
}  // namespace kiln::testing
