/* The test's input and expected output (raw little-endian tensors written by run_firmware.py),
 * compiled into flash, 64-byte aligned as the runtime requires of caller buffers. */
  .section .rodata.kiln_test_data, "a"
  .balign 64
  .global test_input, test_input_end
test_input:
  .incbin KILN_INPUT_PATH
test_input_end:
  .balign 64
  .global test_expected, test_expected_end
test_expected:
  .incbin KILN_EXPECTED_PATH
test_expected_end:
