/* What the example firmware needs from a board: a free-running instruction counter for the
 * speed figure (raw units; main.c calibrates them to instructions with a loop of known length)
 * and the stack pointer. board_arm.c (SysTick under `qemu -icount shift=0`) and board_riscv.c
 * (minstret) implement it. */
#ifndef KILN_MCU_BOARD_H_
#define KILN_MCU_BOARD_H_

#include <stdint.h>

/* Starts the counter (interrupts, if it needs them, begin here: call it after the stack
 * measurements). */
void board_counter_start(void);
/* Monotonic count since board_counter_start, in the counter's own units. */
uint64_t board_counter_read(void);
/* Runs exactly `iterations` iterations of a 2-instruction loop (4 extra instructions). */
void board_spin(uint32_t iterations);

static inline uintptr_t board_stack_pointer(void) {
  uintptr_t sp;
#if defined(__arm__)
  __asm volatile("mov %0, sp" : "=r"(sp));
#elif defined(__riscv)
  __asm volatile("mv %0, sp" : "=r"(sp));
#else
#error "unsupported architecture"
#endif
  return sp;
}

#endif /* KILN_MCU_BOARD_H_ */
