// Every user error of the `kiln` command line: one line `kiln: error: <message>` on stderr,
// nothing else, and exit status 1. Each case checks the exact message.
#include <gtest/gtest.h>

#include "cli_fixture.h"
#include "cli_runner.h"
#include "npy.h"

namespace kiln::clitest {
namespace {

const CliFiles& f() { return cliFiles(); }

// Runs kiln and expects exactly one error line with `message`.
void expectError(const std::vector<std::string>& args, const std::string& message) {
  CliResult r = runKiln(args);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(r.err, "kiln: error: " + message + "\n");
}

std::string writeNpyWithHeader(const std::string& name, const std::string& dict, size_t bytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> file = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                               static_cast<uint8_t>(header.size()), 0};
  file.insert(file.end(), header.begin(), header.end());
  file.resize(file.size() + bytes, 0);
  std::string path = f().dir + "/" + name;
  cli::writeFileBytes(path, file);
  return path;
}

TEST(CliErrors, UnknownCommandAndFlags) {
  expectError({"frobnicate"}, "unknown command 'frobnicate' (see 'kiln help')");
  expectError({"--frobnicate"}, "unknown flag '--frobnicate' (see 'kiln help')");
  expectError({"run", f().elf, "--bogus=1"},
              "unknown flag '--bogus' for 'kiln run' (see 'kiln help run')");
  expectError({"dump", f().elf, "-x"}, "unknown flag '-x' for 'kiln dump' (see 'kiln help dump')");
  expectError({"help", "frobnicate"}, "unknown command 'frobnicate' (see 'kiln help')");
}

TEST(CliErrors, MissingValuesAndArguments) {
  expectError({"run", f().elf, "--input"}, "flag '--input' needs a value (--input=TENSOR)");
  expectError({"run", f().elf, "--threads", "--trace"},
              "flag '--threads' needs a value (--threads=N)");
  expectError({"bench", f().elf, "--iterations="},
              "flag '--iterations' needs a value (--iterations=N)");
  expectError({"dump"}, "'kiln dump' needs a file argument (usage: kiln dump ARTIFACT [--json] "
                        "[--kernels-elf=FILE])");
  expectError({"dump", f().elf, f().elf},
              "unexpected argument '" + f().elf +
                  "' for 'kiln dump' (usage: kiln dump ARTIFACT [--json] "
                  "[--kernels-elf=FILE])");
  expectError({"run", f().elf, "--threads=1", "--threads=2"},
              "flag '--threads' given more than once");
}

TEST(CliErrors, BadNumbers) {
  expectError({"run", f().elf, "--threads=0", "--input=@" + f().x, "--input=@" + f().y},
              "--threads=0 is out of range [1, 256]");
  expectError({"bench", f().elf, "--iterations=many"}, "--iterations expects an integer, got 'many'");
  expectError({"bench", f().elf, "--seconds=-1"}, "--seconds expects a positive number, got '-1'");
  expectError({"compare", f().elf, f().elf, "--block-ms=0"},
              "--block-ms expects a positive number, got '0'");
  expectError({"compare", f().elf},
              "'kiln compare' needs 2 arguments (usage: kiln compare A.kiln B.kiln --input=TENSOR... "
              "[--threads=N] [--threads-b=M] [--seconds=S] [--block-ms=M] [--per-dispatch] "
              "[--tolerance=RTOL[,ATOL]] [--json])");
  expectError({"compare", f().elf, f().elf, "--threads-b=0"},
              "--threads-b=0 is out of range [1, 256]");
  expectError({"bench", f().elf, "--seconds=1", "--iterations=5"},
              "give either --iterations or --seconds, not both");
  expectError({"run", f().elf, "--tolerance=abc", "--input=@" + f().x, "--input=@" + f().y},
              "invalid --tolerance 'abc': expected RTOL[,ATOL], e.g. 1e-3,1e-5");
}

TEST(CliErrors, NonexistentFiles) {
  expectError({"run", "/nonexistent/model.kiln", "--input=1xf32=1"},
              "cannot open '/nonexistent/model.kiln': No such file or directory");
  expectError({"dump", "/nonexistent/model.kiln"},
              "cannot open '/nonexistent/model.kiln': No such file or directory");
  expectError({"bench", "/nonexistent/model.kiln"},
              "cannot open '/nonexistent/model.kiln': No such file or directory");
  expectError({"compare", f().elf, "/nonexistent/model.kiln"},
              "cannot open '/nonexistent/model.kiln': No such file or directory");
  expectError({"run", f().elf, "--input=@/nonexistent/x.npy"},
              "cannot open '/nonexistent/x.npy': No such file or directory");
  expectError({"run", f().external, "--constants=/nonexistent/c.bin", "--input=@" + f().x},
              "cannot open '/nonexistent/c.bin': No such file or directory");
}

TEST(CliErrors, NotAnArtifact) {
  expectError({"dump", f().x}, "'" + f().x + "' is not a kiln artifact (no KILN magic)");
  CliResult r = runKiln({"run", f().x, "--input=@" + f().x});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(r.err.starts_with("kiln: error: cannot load '" + f().x + "': ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(CliErrors, TruncatedArtifact) {
  std::vector<uint8_t> bytes = cli::readFileBytes(f().elf);
  bytes.resize(bytes.size() / 2);
  std::string path = f().dir + "/truncated.kiln";
  cli::writeFileBytes(path, bytes);
  CliResult r = runKiln({"run", path, "--input=@" + f().x, "--input=@" + f().y});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(r.err.starts_with("kiln: error: cannot load '" + path + "': ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  CliResult dump = runKiln({"dump", path});
  EXPECT_EQ(dump.exitCode, 1);
  EXPECT_EQ(dump.err, "kiln: error: '" + path + "': malformed artifact: header says " +
                          std::to_string(bytes.size() * 2) + " bytes, the file has " +
                          std::to_string(bytes.size()) + "\n");
}

TEST(CliErrors, InputsNotMatchingTheSignature) {
  expectError({"run", f().elf, "--input=16xf32=1", "--input=@" + f().y},
              "input 0 ('x') of 'main' must be 1x16xf32, got 16xf32");
  expectError({"run", f().elf, "--input=@" + f().x, "--input=1x16xi32=1"},
              "input 1 ('y') of 'main' must be 1x16xf32, got 1x16xi32");
  expectError({"run", f().elf, "--input=@" + f().x},
              "function 'main' takes 2 inputs (x: 1x16xf32, y: 1x16xf32), got 1 --input");
  expectError({"bench", f().elf, "--input=@" + f().x, "--input=@" + f().y, "--input=@" + f().y},
              "function 'main' takes 2 inputs (x: 1x16xf32, y: 1x16xf32), got 3 --input");
  // kiln compare names the artifact whose function does not take the inputs.
  expectError({"compare", f().elf, f().stripped, "--input=@" + f().x},
              "'" + f().elf + "': function 'main' takes 2 inputs (x: 1x16xf32, y: 1x16xf32), "
              "got 1 --input");
  expectError({"run", f().elf, "--function=nope", "--input=@" + f().x},
              "'" + f().elf + "' has no function 'nope' (it has: main, relu)");
}

TEST(CliErrors, MalformedTensors) {
  expectError({"run", f().elf, "--input=1x16xf99=1"},
              "cannot parse tensor '1x16xf99=1': expected SHAPExTYPE=VALUES (e.g. 2x2xf32=1 2 3 "
              "4), @FILE.npy or SHAPExTYPE=@FILE");
  expectError({"run", f().elf, "--input=2xf32=1 2 3"}, "tensor '2xf32' needs 2 values, got 3");
  expectError({"run", f().elf, "--input=1x2x8xf32=@" + f().x, "--input=@" + f().y},
              "input 0 ('x') of 'main' must be 1x16xf32, got 1x2x8xf32");
  expectError({"run", f().elf, "--input=1x4xf32=@" + f().x},
              "'" + f().x + "' holds 1x16xf32 (16 elements), not 1x4xf32 (4 elements)");
}

TEST(CliErrors, UnsupportedNpyFiles) {
  std::string fortran = writeNpyWithHeader(
      "fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 16), }", 64);
  expectError({"run", f().elf, "--input=@" + fortran},
              "'" + fortran + "': Fortran-order arrays are not supported; save "
              "np.ascontiguousarray(arr)");
  std::string big = writeNpyWithHeader(
      "big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 16), }", 64);
  expectError({"run", f().elf, "--input=@" + big},
              "'" + big + "': big-endian dtype '>f4' is not supported; convert it with "
              "arr.astype(arr.dtype.newbyteorder('<'))");
  std::string c64 = writeNpyWithHeader(
      "c64.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 16), }", 128);
  expectError({"run", f().elf, "--input=@" + c64},
              "'" + c64 + "': unsupported dtype '<c8'; supported: float32, float16, float64, "
              "int8, uint8, int16, int32, int64, bool");
  // f64 is supported, but the function takes f32: a type mismatch, named.
  std::string f64 = writeNpyWithHeader(
      "f64.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 16), }", 128);
  std::string y = writeNpyWithHeader(
      "y.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 16), }", 64);
  CliResult r = runKiln({"run", f().elf, "--input=@" + f64, "--input=@" + y});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("f64"), std::string::npos) << r.err;
}

TEST(CliErrors, OutputsAndExpectedOutputs) {
  std::vector<std::string> base = {"run", f().elf, "--input=@" + f().x, "--input=@" + f().y};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expectError(with({"--output=-", "--output=-", "--output=-", "--output=-"}),
              "got 4 --output for 3 outputs of 'main'");
  expectError(with({"--output=out.npy"}), "--output='out.npy': expected @FILE.npy or - (print)");
  expectError(with({"--output=@/nonexistent/dir/out.npy"}),
              "cannot write '/nonexistent/dir/out.npy': No such file or directory");
  // A wrong reference: exit 1 and a line naming the output and the worst element.
  CliResult r = runKiln(with({"--output=@" + f().dir + "/o.npy", "--expected_output=@" + f().twice}));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln: error: output 0 ('out') does not match the expected value: got "
                   "1x16xf32, expected 16xf32\n");
  CliResult values = runKiln(with({"--output=@" + f().dir + "/o.npy",
                                   "--expected_output=1x16xf32=0"}));
  EXPECT_EQ(values.exitCode, 1);
  EXPECT_NE(values.err.find("kiln: error: output 0 ('out') does not match the expected value: "),
            std::string::npos);
  EXPECT_NE(values.err.find("elements differ (wanted within rtol=0.001 atol=1e-05); worst at [0, "),
            std::string::npos)
      << values.err;
}

// An artifact compiled for a processor with AVX-VNNI (int8 dot products) is refused by name on
// one without it, before any kernel runs.
TEST(CliErrors, ArtifactNeedsVnni) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avxvnni")) GTEST_SKIP() << "this processor has AVX-VNNI";
  std::string model = std::string(KILN_SOURCE_DIR) + "/examples/digits/model.onnx";
  std::string out = f().dir + "/vnni.kiln";
  CliResult compiled = runKiln({"compile", model, "-o", out, "--target=x86_64-v3",
                                "--target-features=+avxvnni"});
  ASSERT_EQ(compiled.exitCode, 0) << compiled.err;
  std::string image = std::string(KILN_SOURCE_DIR) + "/examples/digits/digit_0.npy";
  expectError({"run", out, "--input=@" + image},
              "cannot load '" + out + "': artifact needs CPU features this processor lacks: avxvnni");
#else
  GTEST_SKIP() << "x86-64 only";
#endif
}

TEST(CliErrors, ExternalConstantsMissing) {
  CliResult r = runKiln({"run", f().external, "--input=@" + f().x, "--input=@" + f().y});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "kiln: error: cannot load '" + f().external +
                       "': artifact needs its external constants (128 bytes) but none were "
                       "given\n");
}

TEST(CliErrors, Compile) {
  std::string model = std::string(KILN_SOURCE_DIR) + "/examples/digits/model.onnx";
  std::string out = f().dir + "/c.kiln";
  expectError({"compile", model}, "'kiln compile' needs an output file: -o OUT.kiln");
  expectError({"compile", "/nonexistent/m.onnx", "-o", out},
              "cannot open '/nonexistent/m.onnx': No such file or directory");
  expectError(
      {"compile", model, "-o", out, "--target=pdp11"},
      "unknown --target 'pdp11'; valid targets: host, x86_64, x86_64-v3, x86_64-v4, "
      "aarch64, aarch64-dotprod, riscv64, cortex-m4, cortex-m33, cortex-m7, cortex-m55, rv32imac, "
      "rv32imafc");
  expectError({"compile", model, "-o", out, "--input-shape=image"},
              "--input-shape=image: missing ':' between name and dims (expected NAME:DIMS, e.g. "
              "--input-shape=input:1x3x224x224)");
  expectError({"compile", model, "-o", out, "--input-shape=bogus:1x2"},
              "--input-shape=bogus:1x2: " + model + " has no input named 'bogus' (its inputs: "
              "'image')");
  expectError({"compile", f().x, "-o", out},
              f().x + ": not a valid ONNX model: the protobuf data is malformed or truncated");
  expectError({"compile", model, "-o", "/nonexistent/dir/m.kiln"},
              "cannot write '/nonexistent/dir/m.kiln': No such file or directory");
  expectError({"compile", model, "-o", out, "--external-constants=" + out},
              "--external-constants must name a different file than -o");
  expectError({"compile", model, "-o"}, "flag '-o' needs a value (-o=OUT.kiln)");
  expectError({"compile", model, "-o", out, "--target-triple=sparc-foo"},
              "unsupported --target-triple 'sparc-foo': kiln generates code for x86_64, aarch64, "
              "riscv64, riscv32 and arm/thumb");
  expectError({"compile", model, "-o", model}, "the output would overwrite the model '" + model + "'");
  expectError({"compile", model, "-o", out, "--fusion=all"},
              "unknown --fusion 'all' (expected elementwise or none)");
  expectError({"compile", model, "-o", out, "--optimize=fast"},
              "unknown --optimize 'fast' (expected speed or size)");
  expectError({"compile", model, "-o", out, "--threads=0"}, "--threads=0 is out of range [1, 256]");
}

}  // namespace
}  // namespace kiln::clitest
