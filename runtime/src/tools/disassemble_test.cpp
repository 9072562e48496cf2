// The disassembler prints the standard artifact's schedule, one command per line, with
// mnemonics and operand names from commands.def.
#include "kiln/disassemble.h"

#include <gtest/gtest.h>

#include "runtime_fixture.h"

namespace kiln::testing {
namespace {

TEST(Disassemble, StandardArtifact) {
  Loaded loaded(writeArtifact(standardSpec(Kernels::kStatic)));
  ASSERT_EQ(loaded.status(), KILN_OK);
  std::string text = disassembleModule(loaded.module());
  EXPECT_EQ(text,
            "function main (2 inputs, 3 outputs, 5 dispatches, 59 bytes)\n"
            "  0000  dispatch kernel=0 workgroups=4 bindings=[in0+0 in1+0 arena+0]\n"
            "  0009  dispatch kernel=0 workgroups=4 bindings=[in0+0 in0+0 arena+128]\n"
            "  0019  barrier\n"
            "  0020  dispatch kernel=1 workgroups=2 bindings=[arena+0 const+0 const+64 arena+64]\n"
            "  0031  barrier\n"
            "  0032  dispatch kernel=2 workgroups=3 bindings=[arena+64]\n"
            "  0037  barrier\n"
            "  0038  copy src_space=arena src_offset=64 dst_space=out0 dst_offset=0 length=64\n"
            "  0044  dispatch kernel=3 workgroups=1 bindings=[arena+64 out1+0]\n"
            "  0051  copy src_space=arena src_offset=128 dst_space=out2 dst_offset=0 length=64\n"
            "  0058  return\n"
            "function relu (1 inputs, 1 outputs, 1 dispatches, 13 bytes)\n"
            "  0000  copy src_space=in0 src_offset=0 dst_space=out0 dst_offset=0 length=64\n"
            "  0006  barrier\n"
            "  0007  dispatch kernel=2 workgroups=1 bindings=[out0+0]\n"
            "  0012  return\n");
}

TEST(Disassemble, StopsAtAnUndecodableCommand) {
  const uint8_t stream[] = {KILN_OP_BARRIER, 0x42};
  std::string text = disassemble(stream, sizeof stream, [](uint64_t) { return 0u; });
  EXPECT_EQ(text, "  0000  barrier\n  0001  error: unknown opcode\n");
}

}  // namespace
}  // namespace kiln::testing
