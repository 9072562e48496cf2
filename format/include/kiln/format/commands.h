/* The command stream's instruction set, generated from commands.def: opcodes, operand indices,
 * the LEB128 varint codec, a generic encoder (used by the compiler's artifact writer and the
 * test writer) and a generic decoder (used by the runtime's validator and interpreter and by
 * the disassembler). Freestanding C: <stdint.h> and <stddef.h> only. */
#ifndef KILN_FORMAT_COMMANDS_H_
#define KILN_FORMAT_COMMANDS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The X-macro expansions below open and close braces inside macros; clang-format would
 * misread them, so it is off until the encoder. */
/* clang-format off */

/* Opcodes: KILN_OP_DISPATCH = 0x01, ... */
typedef enum kiln_opcode {
  KILN_OP_INVALID = 0,
#define KILN_COMMAND_BEGIN(NAME, name, opcode, mnemonic) KILN_OP_##NAME = opcode,
#include "kiln/format/commands.def"
  KILN_OP_END
} kiln_opcode;

/* Operand positions: KILN_FILL_SPACE = 0, KILN_FILL_OFFSET = 1, ..., KILN_FILL_OPERAND_COUNT. */
#define KILN_COMMAND_BEGIN(NAME, name, opcode, mnemonic) enum {
#define KILN_OPERAND(NAME, name, OPERAND, operand, KIND) KILN_##NAME##_##OPERAND,
#define KILN_COMMAND_END(NAME, name) KILN_##NAME##_OPERAND_COUNT };
#include "kiln/format/commands.def"

#define KILN_MAX_OPERANDS 5u

/* Largest workgroup count of one DISPATCH (the runtime refuses more). */
#define KILN_MAX_WORKGROUPS 65536u

typedef enum kiln_operand_kind {
  KILN_OPERAND_END = 0,
  KILN_OPERAND_VARINT = 1,
  KILN_OPERAND_BYTE = 2,
  KILN_OPERAND_BINDINGS = 3
} kiln_operand_kind;

/* The operand kinds of `opcode`, terminated by KILN_OPERAND_END; NULL for an unknown opcode. */
static inline const uint8_t* kiln_command_operand_kinds(uint32_t opcode) {
  switch (opcode) {
#define KILN_COMMAND_BEGIN(NAME, name, opcode, mnemonic) \
  case opcode: {                                         \
    static const uint8_t kinds[] = {
#define KILN_OPERAND(NAME, name, OPERAND, operand, KIND) KILN_OPERAND_##KIND,
#define KILN_COMMAND_END(NAME, name) \
  KILN_OPERAND_END                   \
  }                                  \
  ;                                  \
  return kinds;                      \
  }
#include "kiln/format/commands.def"
    default: return NULL;
  }
}

/* Mnemonic of `opcode` ("dispatch", ...), NULL if unknown. */
static inline const char* kiln_command_mnemonic(uint32_t opcode) {
  switch (opcode) {
#define KILN_COMMAND_BEGIN(NAME, name, opcode, mnemonic) \
  case opcode: return mnemonic;
#include "kiln/format/commands.def"
    default: return NULL;
  }
}

/* Name of operand `index` of `opcode` ("space", ...), NULL if out of range. */
static inline const char* kiln_command_operand_name(uint32_t opcode, uint32_t index) {
  switch (opcode) {
#define KILN_COMMAND_BEGIN(NAME, name, opcode, mnemonic) \
  case opcode: {                                         \
    static const char* const names[] = {
#define KILN_OPERAND(NAME, name, OPERAND, operand, KIND) #operand,
#define KILN_COMMAND_END(NAME, name)            \
  NULL                                          \
  }                                             \
  ;                                             \
  for (uint32_t i = 0; names[i] != NULL; ++i)  \
    if (i == index) return names[i];            \
  return NULL;                                  \
  }
#include "kiln/format/commands.def"
    default: return NULL;
  }
}

/* clang-format on */

/* ---- unsigned LEB128 varints ------------------------------------------------------------- */
#define KILN_VARINT_MAX_BYTES 10u

/* Writes `value` at `out` (NULL: only measures); returns the byte count. */
static inline size_t kiln_varint_write(uint8_t* out, uint64_t value) {
  size_t n = 0;
  do {
    uint8_t byte = (uint8_t)(value & 0x7fu);
    value >>= 7;
    if (value != 0) byte |= 0x80u;
    if (out) out[n] = byte;
    ++n;
  } while (value != 0);
  return n;
}

/* Reads a varint from [*pos, end) and advances *pos. Returns 1 on success, 0 if the stream
 * ends inside the varint, -1 if it is malformed (longer than 10 bytes, overflowing 64 bits, or
 * overlong: a final zero byte after the first). On failure *pos is unchanged. */
static inline int kiln_varint_read(const uint8_t** pos, const uint8_t* end, uint64_t* out) {
  const uint8_t* p = *pos;
  uint64_t value = 0;
  for (unsigned i = 0; i < KILN_VARINT_MAX_BYTES; ++i) {
    if (p == end) return 0;
    uint8_t byte = *p++;
    if (i == 9 && byte > 1) return -1;
    value |= (uint64_t)(byte & 0x7fu) << (7u * i);
    if ((byte & 0x80u) == 0) {
      if (byte == 0 && i > 0) return -1;
      *pos = p;
      *out = value;
      return 1;
    }
  }
  return -1;
}

/* ---- encoder ----------------------------------------------------------------------------- */
typedef struct kiln_binding_ref {
  uint64_t space;
  uint64_t offset;
} kiln_binding_ref;

/* Encodes one command at `out` (NULL: only measures) and returns its size in bytes, or 0 if
 * the opcode is unknown or a BYTE operand exceeds 255. `operands` is indexed by the operand
 * positions (KILN_FILL_VALUE, ...); the BINDINGS operand's slot is ignored and its pairs come
 * from `bindings` (binding_count entries, in the kernel signature's order). */
static inline size_t kiln_command_encode(uint8_t* out, uint32_t opcode, const uint64_t* operands,
                                         const kiln_binding_ref* bindings, uint32_t binding_count) {
  const uint8_t* kinds = kiln_command_operand_kinds(opcode);
  if (!kinds) return 0;
  size_t n = 0;
  if (out) out[n] = (uint8_t)opcode;
  ++n;
  for (uint32_t i = 0; kinds[i] != KILN_OPERAND_END; ++i) {
    switch (kinds[i]) {
      case KILN_OPERAND_VARINT:
        n += kiln_varint_write(out ? out + n : NULL, operands[i]);
        break;
      case KILN_OPERAND_BYTE:
        if (operands[i] > 0xffu) return 0;
        if (out) out[n] = (uint8_t)operands[i];
        ++n;
        break;
      case KILN_OPERAND_BINDINGS:
        for (uint32_t b = 0; b < binding_count; ++b) {
          n += kiln_varint_write(out ? out + n : NULL, bindings[b].space);
          n += kiln_varint_write(out ? out + n : NULL, bindings[b].offset);
        }
        break;
      default:
        return 0;
    }
  }
  return n;
}

/* ---- decoder ----------------------------------------------------------------------------- */
typedef enum kiln_decode_result {
  KILN_DECODE_OK = 0,
  KILN_DECODE_TRUNCATED = 1,  /* the stream ends inside the command */
  KILN_DECODE_BAD_OPCODE = 2, /* unknown opcode byte */
  KILN_DECODE_BAD_VARINT = 3, /* overlong or overflowing varint */
  KILN_DECODE_BAD_KERNEL = 4  /* DISPATCH names a kernel the signature table lacks */
} kiln_decode_result;

typedef struct kiln_command {
  uint32_t opcode;
  uint32_t binding_count;               /* DISPATCH: pairs at `bindings` */
  uint64_t operands[KILN_MAX_OPERANDS]; /* by operand position */
  const uint8_t* bindings;              /* DISPATCH: first byte of the (space, offset) pairs */
} kiln_command;

/* Returns the binding count of `kernel`, or UINT32_MAX if there is no such kernel. */
typedef uint32_t (*kiln_binding_count_fn)(const void* user, uint64_t kernel);

/* Decodes the command at *pos (inside [*pos, end)) into *cmd and advances *pos past it. A
 * BINDINGS operand is skipped over (varints checked) using the count `binding_count` gives for
 * the command's first operand; read its pairs with kiln_varint_read from cmd->bindings. */
static inline kiln_decode_result kiln_command_decode(const uint8_t** pos, const uint8_t* end,
                                                     kiln_command* cmd,
                                                     kiln_binding_count_fn binding_count,
                                                     const void* user) {
  const uint8_t* p = *pos;
  if (p == end) return KILN_DECODE_TRUNCATED;
  cmd->opcode = *p++;
  cmd->binding_count = 0;
  cmd->bindings = NULL;
  const uint8_t* kinds = kiln_command_operand_kinds(cmd->opcode);
  if (!kinds) return KILN_DECODE_BAD_OPCODE;
  for (uint32_t i = 0; kinds[i] != KILN_OPERAND_END; ++i) {
    cmd->operands[i] = 0;
    if (kinds[i] == KILN_OPERAND_BYTE) {
      if (p == end) return KILN_DECODE_TRUNCATED;
      cmd->operands[i] = *p++;
    } else if (kinds[i] == KILN_OPERAND_VARINT) {
      int r = kiln_varint_read(&p, end, &cmd->operands[i]);
      if (r <= 0) return r == 0 ? KILN_DECODE_TRUNCATED : KILN_DECODE_BAD_VARINT;
    } else { /* BINDINGS */
      uint32_t count = binding_count(user, cmd->operands[0]);
      if (count == UINT32_MAX) return KILN_DECODE_BAD_KERNEL;
      cmd->binding_count = count;
      cmd->bindings = p;
      for (uint32_t b = 0; b < 2u * count; ++b) {
        uint64_t ignored;
        int r = kiln_varint_read(&p, end, &ignored);
        if (r <= 0) return r == 0 ? KILN_DECODE_TRUNCATED : KILN_DECODE_BAD_VARINT;
      }
    }
  }
  *pos = p;
  return KILN_DECODE_OK;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_FORMAT_COMMANDS_H_ */
