/* The test artifact (written by kiln_make_test_artifacts at build time) and its expected
 * outputs, placed in read-only memory, 64-byte aligned as the runtime requires. */
  .section .rodata.kiln_artifact, "a"
  .balign 64
  .global kiln_artifact, kiln_artifact_end
kiln_artifact:
  .incbin KILN_ARTIFACT_PATH
kiln_artifact_end:
  .balign 4
  .global kiln_expected
kiln_expected:
  .incbin KILN_EXPECTED_PATH
