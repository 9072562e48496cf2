// Tests for CommandStream: the exact bytes of each command (hand-encoded from
// commands.def: opcode byte, then LEB128 varints / raw bytes / binding pairs).
#include "kiln/emit/command_stream.h"

#include <gtest/gtest.h>

namespace kiln::emit {
namespace {

TEST(CommandStream, EncodesEachCommand) {
  CommandStream s;
  BindingRef bindings[] = {{KILN_SPACE_INPUT(0), 0}, {KILN_SPACE_ARENA, 200}};
  s.dispatch(3, 2, bindings);
  s.fill(KILN_SPACE_OUTPUT(0), 64, 16, 0xff);
  s.copy(KILN_SPACE_CONSTANTS, 128, KILN_SPACE_ARENA, 0, 300);
  s.barrier();
  s.ret();
  std::vector<uint8_t> expected = {
      0x01, 3, 2, 2, 0, 0, 200, 1,        // dispatch k3 wg2 (in0+0) (arena+200: 0xc8 0x01)
      0x02, 3, 64, 16, 0xff,              // fill out0+64 len16 value 0xff
      0x03, 1, 0x80, 1, 0, 0, 0xac, 2,    // copy const+128 -> arena+0 len 300
      0x04,                               // barrier
      0x05};                              // return
  EXPECT_EQ(s.bytes(), expected);
  EXPECT_EQ(s.dispatchCount(), 1u);
}

}  // namespace
}  // namespace kiln::emit
