// The shared format headers on their own: varint codec edge cases, encoder/decoder round trip
// of every command in commands.def, the disassembler tables, and pinned hash values (the
// compiler and the runtime must agree on kiln_hash64 forever within format v1).
#include "kiln/format/commands.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kiln/format/artifact.h"

namespace {

std::vector<uint8_t> varint(uint64_t v) {
  std::vector<uint8_t> out(kiln_varint_write(nullptr, v));
  kiln_varint_write(out.data(), v);
  return out;
}

TEST(Varint, RoundTripsBoundaries) {
  for (uint64_t v :
       {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, 0xffffffffull, 0xffffffffffffffffull}) {
    std::vector<uint8_t> b = varint(v);
    const uint8_t* p = b.data();
    uint64_t got = 0;
    ASSERT_EQ(kiln_varint_read(&p, b.data() + b.size(), &got), 1) << v;
    EXPECT_EQ(got, v);
    EXPECT_EQ(p, b.data() + b.size());
  }
  EXPECT_EQ(varint(127).size(), 1u);
  EXPECT_EQ(varint(128).size(), 2u);
  EXPECT_EQ(varint(~0ull).size(), 10u);
}

TEST(Varint, RejectsTruncatedOverlongAndOverflowing) {
  uint64_t v;
  const uint8_t truncated[] = {0x80, 0x80};
  const uint8_t* p = truncated;
  EXPECT_EQ(kiln_varint_read(&p, truncated + 2, &v), 0);
  EXPECT_EQ(p, truncated);
  const uint8_t overlong[] = {0x81, 0x00};
  p = overlong;
  EXPECT_EQ(kiln_varint_read(&p, overlong + 2, &v), -1);
  const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  p = overflow;
  EXPECT_EQ(kiln_varint_read(&p, overflow + 10, &v), -1);
  const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  p = eleven;
  EXPECT_EQ(kiln_varint_read(&p, eleven + 11, &v), -1);
}

uint32_t twoBindings(const void*, uint64_t kernel) { return kernel == 3 ? 2 : UINT32_MAX; }

TEST(Commands, DispatchIsAHandfulOfBytes) {
  uint64_t ops[KILN_DISPATCH_OPERAND_COUNT] = {3, 4, 0};
  kiln_binding_ref b[2] = {{KILN_SPACE_ARENA, 1024}, {KILN_SPACE_OUTPUT(0), 0}};
  uint8_t buf[64];
  size_t n = kiln_command_encode(buf, KILN_OP_DISPATCH, ops, b, 2);
  EXPECT_EQ(n, 8u);  // opcode, kernel, workgroups, (0, 1024 = 2 bytes), (3, 0)
  const uint8_t* p = buf;
  kiln_command cmd;
  ASSERT_EQ(kiln_command_decode(&p, buf + n, &cmd, twoBindings, nullptr), KILN_DECODE_OK);
  EXPECT_EQ(cmd.opcode, uint32_t{KILN_OP_DISPATCH});
  EXPECT_EQ(cmd.operands[KILN_DISPATCH_KERNEL], 3u);
  EXPECT_EQ(cmd.operands[KILN_DISPATCH_WORKGROUPS], 4u);
  ASSERT_EQ(cmd.binding_count, 2u);
  const uint8_t* q = cmd.bindings;
  uint64_t space, offset;
  kiln_varint_read(&q, buf + n, &space);
  kiln_varint_read(&q, buf + n, &offset);
  EXPECT_EQ(space, 0u);
  EXPECT_EQ(offset, 1024u);
  // Every truncation of the command is reported as such.
  for (size_t cut = 0; cut < n; ++cut) {
    p = buf;
    EXPECT_EQ(kiln_command_decode(&p, buf + cut, &cmd, twoBindings, nullptr),
              KILN_DECODE_TRUNCATED);
  }
  ops[KILN_DISPATCH_KERNEL] = 4;
  n = kiln_command_encode(buf, KILN_OP_DISPATCH, ops, b, 0);
  p = buf;
  EXPECT_EQ(kiln_command_decode(&p, buf + n, &cmd, twoBindings, nullptr), KILN_DECODE_BAD_KERNEL);
}

TEST(Commands, FillCopyBarrierReturnRoundTrip) {
  uint8_t buf[64];
  uint64_t fill[KILN_FILL_OPERAND_COUNT] = {0, 64, 300, 0xab};
  uint64_t copy[KILN_COPY_OPERAND_COUNT] = {1, 0, 3, 8, 16};
  size_t n = kiln_command_encode(buf, KILN_OP_FILL, fill, nullptr, 0);
  n += kiln_command_encode(buf + n, KILN_OP_COPY, copy, nullptr, 0);
  n += kiln_command_encode(buf + n, KILN_OP_BARRIER, nullptr, nullptr, 0);
  n += kiln_command_encode(buf + n, KILN_OP_RETURN, nullptr, nullptr, 0);
  const uint8_t* p = buf;
  kiln_command cmd;
  ASSERT_EQ(kiln_command_decode(&p, buf + n, &cmd, twoBindings, nullptr), KILN_DECODE_OK);
  EXPECT_EQ(cmd.opcode, uint32_t{KILN_OP_FILL});
  EXPECT_EQ(cmd.operands[KILN_FILL_LENGTH], 300u);
  EXPECT_EQ(cmd.operands[KILN_FILL_VALUE], 0xabu);
  ASSERT_EQ(kiln_command_decode(&p, buf + n, &cmd, twoBindings, nullptr), KILN_DECODE_OK);
  EXPECT_EQ(cmd.opcode, uint32_t{KILN_OP_COPY});
  EXPECT_EQ(cmd.operands[KILN_COPY_DST_SPACE], 3u);
  EXPECT_EQ(cmd.operands[KILN_COPY_LENGTH], 16u);
  ASSERT_EQ(kiln_command_decode(&p, buf + n, &cmd, twoBindings, nullptr), KILN_DECODE_OK);
  EXPECT_EQ(cmd.opcode, uint32_t{KILN_OP_BARRIER});
  ASSERT_EQ(kiln_command_decode(&p, buf + n, &cmd, twoBindings, nullptr), KILN_DECODE_OK);
  EXPECT_EQ(cmd.opcode, uint32_t{KILN_OP_RETURN});
  EXPECT_EQ(p, buf + n);
}

TEST(Commands, RejectsUnknownOpcodesAndLargeBytes) {
  uint8_t zero = 0;
  const uint8_t* p = &zero;
  kiln_command cmd;
  EXPECT_EQ(kiln_command_decode(&p, &zero + 1, &cmd, twoBindings, nullptr), KILN_DECODE_BAD_OPCODE);
  uint64_t fill[KILN_FILL_OPERAND_COUNT] = {0, 0, 1, 256};
  EXPECT_EQ(kiln_command_encode(nullptr, KILN_OP_FILL, fill, nullptr, 0), 0u);
  EXPECT_EQ(kiln_command_encode(nullptr, 0x7f, fill, nullptr, 0), 0u);
}

TEST(Commands, TablesNameEveryOperand) {
  EXPECT_STREQ(kiln_command_mnemonic(KILN_OP_COPY), "copy");
  EXPECT_STREQ(kiln_command_operand_name(KILN_OP_COPY, KILN_COPY_DST_OFFSET), "dst_offset");
  EXPECT_EQ(kiln_command_operand_name(KILN_OP_BARRIER, 0), nullptr);
  EXPECT_EQ(kiln_command_mnemonic(0), nullptr);
}

TEST(Hash, PinnedValues) {
  // Pinned: changing kiln_hash64 breaks every artifact with external constants.
  EXPECT_EQ(kiln_hash64("", 0), 0x9ca066f1a4ab2eeaull);
  EXPECT_EQ(kiln_hash64("kiln constants", 14), 0x463da9041153ad5full);
}

TEST(Hash, EveryByteMatters) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  uint64_t h = kiln_hash64(data.data(), data.size());
  for (size_t i = 0; i < data.size(); i += 37) {
    data[i] ^= 1;
    EXPECT_NE(kiln_hash64(data.data(), data.size()), h) << i;
    data[i] ^= 1;
  }
  EXPECT_NE(kiln_hash64(data.data(), 999), h);
}

TEST(Layout, FeatureNames) {
  EXPECT_STREQ(kiln_cpu_feature_name(KILN_ARCH_X86_64, 4), "avx512f");
  EXPECT_STREQ(kiln_cpu_feature_name(KILN_ARCH_ARM, 2), "mve");
  EXPECT_STREQ(kiln_cpu_feature_name(KILN_ARCH_RISCV32, 5), "v");
  EXPECT_EQ(kiln_cpu_feature_name(KILN_ARCH_AARCH64, 9), nullptr);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_I64), 8u);
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_BOOL), "bool");
}

}  // namespace
