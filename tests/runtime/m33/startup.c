/* Minimal Cortex-M33 startup for the runtime's bare-metal test on QEMU's mps2-an505: vector
 * table, FPU enable, .bss clear, main, and exit through semihosting (newlib rdimon) so that
 * main's return value becomes QEMU's exit status. */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t __bss_start__[], __bss_end__[], __stack_top[];
extern void initialise_monitor_handles(void);
int main(void);

void Reset_Handler(void) {
  /* Enable CP10/CP11 (the FPU) before the first float instruction. */
  volatile uint32_t* cpacr = (volatile uint32_t*)0xE000ED88u;
  *cpacr |= 0xFu << 20;
  __asm volatile("dsb\n isb");
  for (uint32_t* p = __bss_start__; p < __bss_end__; ++p) *p = 0;
  initialise_monitor_handles();
  exit(main());
}

static void Fault_Handler(void) { exit(99); }

__attribute__((section(".vectors"), used)) static const void* const kVectors[16] = {
    __stack_top,   Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, 0,             0,             0,             0,
    0,             0,             0,             0};
