/* Cortex-M boards (QEMU mps2-an505, mps2-an386): vector table, reset handler (FPU on when the
 * build uses it, .data copied from flash, .bss cleared, semihosting handles opened, exit with
 * main's status), and SysTick as the instruction counter: with `qemu -icount shift=0` one
 * guest instruction is one nanosecond of virtual time, so the processor-clocked SysTick ticks
 * once every (1e9 / clock) instructions; main.c calibrates the ratio. */
#include <stdint.h>
#include <stdlib.h>

#include "board.h"

extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[], __stack_top[];
extern void initialise_monitor_handles(void);
int main(void);

#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)
#define SYST_MAX 0xFFFFFFu

static volatile uint32_t systick_wraps;

void Reset_Handler(void) {
#if defined(__ARM_FP)
  /* CP10/CP11 (the FPU) on before the first float instruction. */
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;
  __asm volatile("dsb\n isb");
#endif
  uint32_t* src = __data_load__;
  for (uint32_t* p = __data_start__; p < __data_end__; ++p) *p = *src++;
  for (uint32_t* p = __bss_start__; p < __bss_end__; ++p) *p = 0;
  initialise_monitor_handles();
  exit(main());
}

static void Fault_Handler(void) { exit(99); }

static void SysTick_Handler(void) { systick_wraps = systick_wraps + 1; }

__attribute__((section(".vectors"), used)) static const void* const kVectors[16] = {
    __stack_top,   Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, 0,             0,             0,             0,             Fault_Handler,
    0,             0,             Fault_Handler, SysTick_Handler};

void board_counter_start(void) {
  SYST_CSR = 0;
  SYST_RVR = SYST_MAX;
  SYST_CVR = 0;
  systick_wraps = 0;
  SYST_CSR = 7u; /* enable, interrupt on wrap, processor clock */
  while (SYST_CVR == 0) {
  } /* the first tick loads the reload value */
}

uint64_t board_counter_read(void) {
  /* Read wraps around the current value so a wrap in between is not lost. */
  for (;;) {
    uint32_t before = systick_wraps;
    uint32_t value = SYST_CVR;
    if (systick_wraps != before) continue;
    /* The wrap interrupt fires as the value reaches 0, the last tick of a period. */
    if (value == 0 && before > 0) return (uint64_t)before * (SYST_MAX + 1u) - 1u;
    return (uint64_t)before * (SYST_MAX + 1u) + (SYST_MAX - value);
  }
}

void board_spin(uint32_t iterations) {
  __asm volatile(
      "1: subs %0, %0, #1\n"
      "   bne 1b\n"
      : "+r"(iterations)
      :
      : "cc");
}
