// Writes the CLI tests' artifacts and .npy files (see cli_fixture.h).
#include "cli_fixture.h"

#include <cstring>

#include "cli_runner.h"
#include "npy.h"
#include "test_artifacts.h"

namespace kiln::clitest {
namespace {

cli::HostTensor floats(std::vector<int64_t> shape, const float* values, size_t count) {
  cli::HostTensor t;
  t.type = cli::ElementType::F32;
  t.shape = std::move(shape);
  t.data.resize(count * 4);
  std::memcpy(t.data.data(), values, count * 4);
  return t;
}

CliFiles writeFiles() {
  using namespace kiln::testing;
  CliFiles f;
  f.dir = makeTempDir("kiln-cli-files-");
  f.elf = f.dir + "/model.kiln";
  f.stripped = f.dir + "/stripped.kiln";
  f.external = f.dir + "/external.kiln";
  f.constants = f.dir + "/external.constants";
  cli::writeFileBytes(f.elf, writeArtifact(standardSpec(Kernels::kElf)));
  cli::writeFileBytes(f.stripped,
                      writeArtifact(standardSpec(Kernels::kElf, Constants::kEmbedded, false)));
  cli::writeFileBytes(f.external, writeArtifact(standardSpec(Kernels::kElf, Constants::kExternal)));
  cli::writeFileBytes(f.constants, standardConstants());

  Vec16 x = sampleX();
  Vec16 y = sampleY();
  MainResult r = referenceMain(x, y);
  f.x = f.dir + "/x.npy";
  f.y = f.dir + "/y.npy";
  f.out = f.dir + "/out_ref.npy";
  f.total = f.dir + "/total_ref.npy";
  f.twice = f.dir + "/twice_ref.npy";
  cli::writeNpyFile(f.x, floats({1, 16}, x.data(), 16));
  cli::writeNpyFile(f.y, floats({1, 16}, y.data(), 16));
  cli::writeNpyFile(f.out, floats({1, 16}, r.out.data(), 16));
  cli::writeNpyFile(f.total, floats({1}, &r.total, 1));
  cli::writeNpyFile(f.twice, floats({16}, r.twice.data(), 16));
  return f;
}

}  // namespace

const CliFiles& cliFiles() {
  static const CliFiles files = writeFiles();
  return files;
}

}  // namespace kiln::clitest
