/* RISC-V 32 (QEMU virt, picolibc's semihosting crt0 does the startup): the instruction
 * counter is minstret, which QEMU derives from the instruction count under -icount. */
#include <stdint.h>

#include "board.h"

/* csrr needs the Zicsr extension, which -march=rv32imac does not name (picolibc's multilib
 * selection wants the plain string): enable it for these instructions only. */
#define CSRR(reg, out) \
  __asm volatile(".option push\n.option arch, +zicsr\ncsrr %0, " reg "\n.option pop" : "=r"(out))

static uint64_t read_minstret(void) {
  uint32_t hi, lo, hi2;
  do {
    CSRR("minstreth", hi);
    CSRR("minstret", lo);
    CSRR("minstreth", hi2);
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
}

static uint64_t counter_base;

void board_counter_start(void) { counter_base = read_minstret(); }

uint64_t board_counter_read(void) { return read_minstret() - counter_base; }

void board_spin(uint32_t iterations) {
  __asm volatile(
      "1: addi %0, %0, -1\n"
      "   bnez %0, 1b\n"
      : "+r"(iterations));
}
