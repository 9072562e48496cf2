# TFLite end-to-end tests (included by tests/e2e/CMakeLists.txt): every model of
# ${KILN_TESTDATA_DIR}/tflite/models with reference outputs under tflite/refs (read in place)
# is compiled with `kiln compile`, run with `kiln run` on both seeds' inputs and compared by
# tflite_case.py: integers bit exact (1 LSB for sub0/sub1/sub3, where TFLM's reference
# kernels and TF Lite differ), floats within 1e-5 relative; with per-operator references,
# every layer too (kiln compile --debug-outputs). Models TFLM could not run, or that kiln
# refuses with a clear "unsupported" message, are reported as skipped (exit 77) with the
# reason. Label: e2e-tflite.
# Command-line checks on models outside the shared data (tflite_cli_case.py): JSON models
# built by flatc with kiln's schema subset (a float TRANSPOSE_CONV against hand-computed
# values, the layout remaps, elementwise ops, int8 paths, an unsupported operator), a truncated
# real model and 20 byte-mutated ones (compiled or refused with one line, never a crash).
set(_tflite_cli ${KILN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tflite_cli_case.py --kiln $<TARGET_FILE:kiln>
    --flatc ${KILN_FLATC} --schema ${PROJECT_SOURCE_DIR}/compiler/import/tflite/schema/tflite_subset.fbs)
set(_tflite_cli_work ${CMAKE_BINARY_DIR}/e2e-tflite/cli)
add_test(NAME e2e.tflite.cli.transpose_conv_float
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/transpose_conv_float
                 --json ${CMAKE_CURRENT_SOURCE_DIR}/tflite_models/transpose_conv_float.json
                 "--input=1x2x2x1xf32=1 2 3 4"
                 "--expected=1x4x4x1xf32=1 1 3 2 1 1 3 2 4 4 10 6 3 3 7 4")
# CONV -> PAD, CONCATENATION (axis -1), MEAN over H (needs NHWC) and over H, W (stays
# channels first), TRANSPOSE (composed with the layout): the layout remaps of
# docs/tflite-import.md against values computed by hand (NHWC, plain Python).
add_test(NAME e2e.tflite.cli.layouts_float
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/layouts_float
                 --json ${CMAKE_CURRENT_SOURCE_DIR}/tflite_models/layouts_float.json
                 "--input=1x2x2x2xf32=1 2 3 4 5 6 7 8"
                 "--expected=1x3x6xf32=2 2.6666667 0 2 2.6666667 0 3.3333333 4 0 3.3333333 4 0 0 0 0 0 0 0"
                 "--expected=1x6xf32=1.7777778 2.2222222 0 1.7777778 2.2222222 0"
                 "--expected=1x3x3x3xf32=0 0 0 1 3 0 5 7 0 0 0 0 2 4 0 6 8 0 0 0 0 0 0 0 0 0 0")
# Float elementwise paths after a channels-first conv: MUL by a [C] constant (broadcast into
# NCHW), SUB mixing NCHW and NHWC operands, MAX_POOL with fused RELU6, LOGISTIC, HARD_SWISH,
# LEAKY_RELU, TANH, STRIDED_SLICE with shrink_axis_mask, SOFTMAX with beta 0.5 (hand values).
add_test(NAME e2e.tflite.cli.elementwise_float
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/elementwise_float
                 --json ${CMAKE_CURRENT_SOURCE_DIR}/tflite_models/elementwise_float.json
                 "--input=1x2x2x2xf32=1 2 3 4 5 6 7 8"
                 "--expected=1x1x1x2xf32=6 0"
                 "--expected=1x2x2x2xf32=1 -2 3 -4 5 -6 7 -8"
                 "--expected=1x2x2xf32=0.99979657 0.00020342698 0.99998987 1.0129991e-05"
                 "--expected=1x2x2x2xf32=0.66666667 0 3 0 5 0 7 0"
                 "--expected=1x2x2x2xf32=0.73105858 0.01798621 0.95257413 0.00033535013 0.99330715 6.1441746e-06 0.99908895 1.1253516e-07"
                 "--expected=1x2x2x2xf32=0.76159416 -0.9993293 0.99505475 -0.99999977 0.9999092 -1 0.99999834 -1")
# int8 paths no test-data model uses: MAX_POOL, RELU (a requantize with the clamp at the zero
# point), CONCATENATION onto another scale (inputs requantized), MUL (scales chosen so the
# multipliers are exact powers of two: values by hand).
add_test(NAME e2e.tflite.cli.quantized_int8
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/quantized_int8
                 --json ${CMAKE_CURRENT_SOURCE_DIR}/tflite_models/quantized_int8.json
                 "--input=1x2x2x2xi8=-5 0 3 10 12 -128 127 1"
                 "--expected=1x1x1x2xi8=127 10"
                 "--expected=1x2x2x2xi8=1 1 3 10 12 1 127 1"
                 "--expected=1x2x2x4xi8=-12 -2 0 0 4 18 4 18 22 -128 22 0 127 0 127 0"
                 "--expected=1x2x2x2xi8=33 -2 1 78 118 127 127 -3")
# int8 MEAN over H and W (no test-data model uses it): equal parameters give TFLM's
# truncating integer mean (137/4 -> 34, -117/4 -> -29); scale 0.5 -> 1.0 with zero point
# 1 -> 0 rescales the real means 16.625 and -15.125 (-> 17, -15).
add_test(NAME e2e.tflite.cli.mean_int8
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/mean_int8
                 --json ${CMAKE_CURRENT_SOURCE_DIR}/tflite_models/mean_int8.json
                 "--input=1x2x2x2xi8=-5 0 3 10 12 -128 127 1"
                 "--expected=1x1x1x2xi8=34 -29"
                 "--expected=1x1x1x2xi8=17 -15")
# PADV2 with a scalar pad value, SQUEEZE, RELU_N1_TO_1 (float).
add_test(NAME e2e.tflite.cli.padv2_squeeze_float
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/padv2_squeeze_float
                 --json ${CMAKE_CURRENT_SOURCE_DIR}/tflite_models/padv2_squeeze_float.json
                 "--input=1x2x2x1xf32=-2 0.5 3 -0.25" "--expected=3x2xf32=-1 0.5 1 -0.25 1 1")
add_test(NAME e2e.tflite.cli.unsupported_operator
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/unsupported_lstm
                 --json ${CMAKE_CURRENT_SOURCE_DIR}/tflite_models/unsupported_lstm.json
                 "--expect-error=unsupported TFLite operator 'LSTM' (builtin code 16) at operator #0")
set(_tflite_kws ${KILN_TESTDATA_DIR}/tflite/models/mlperf-tiny/keyword_spotting__kws_ref_model.tflite)
add_test(NAME e2e.tflite.cli.truncated_model
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/truncated --truncate ${_tflite_kws}
                 "--expect-error=corrupt or truncated TFLite model: the flatbuffer failed verification")
add_test(NAME e2e.tflite.cli.mutated_models
         COMMAND ${_tflite_cli} --work ${_tflite_cli_work}/mutated --mutate ${_tflite_kws}
                 --count 20)
set_tests_properties(e2e.tflite.cli.transpose_conv_float e2e.tflite.cli.layouts_float
                     e2e.tflite.cli.elementwise_float e2e.tflite.cli.quantized_int8
                     e2e.tflite.cli.mean_int8 e2e.tflite.cli.padv2_squeeze_float
                     e2e.tflite.cli.unsupported_operator
                     e2e.tflite.cli.truncated_model e2e.tflite.cli.mutated_models
                     PROPERTIES LABELS "e2e;e2e-tflite" TIMEOUT 300)

set(_tflite_root ${KILN_TESTDATA_DIR}/tflite)
file(GLOB _tflite_models LIST_DIRECTORIES false ${_tflite_root}/models/*/*.tflite)
if(NOT _tflite_models)
  message(WARNING "tests/e2e: no TFLite models under ${_tflite_root}/models (KILN_TESTDATA_DIR)")
  return()
endif()
list(SORT _tflite_models)
foreach(model_path ${_tflite_models})
  get_filename_component(_name ${model_path} NAME_WLE)
  get_filename_component(_group_dir ${model_path} DIRECTORY)
  get_filename_component(_group ${_group_dir} NAME)
  if(NOT EXISTS ${_tflite_root}/refs/${_name})
    continue()
  endif()
  set(_lsb 0)
  if(_name MATCHES "^sub[013]$")
    set(_lsb 1)
  endif()
  foreach(seed 1 2)
    set(_test e2e.tflite.${_group}.${_name}.seed${seed})
    add_test(NAME ${_test}
             COMMAND ${KILN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tflite_case.py
                     --kiln $<TARGET_FILE:kiln>
                     --work ${CMAKE_BINARY_DIR}/e2e-tflite/${_name}/seed${seed}
                     --model ${model_path} --refs ${_tflite_root}/refs/${_name}/seed${seed}
                     --lsb ${_lsb})
    set_tests_properties(${_test} PROPERTIES LABELS "e2e;e2e-tflite" SKIP_RETURN_CODE 77
                                             TIMEOUT 600)
  endforeach()
endforeach()

# The int8 convolutional models on AVX-VNNI without AVX-512 (the int8 kernels' 8-lane,
# 16-register variant; the host tests above take AVX512-VNNI where the CPU has it), every
# output and operator bit exact; skipped on a CPU without AVX-VNNI.
foreach(_name visual_wake_words__vww_96_int8 keyword_spotting__kws_ref_model
              image_classification__pretrainedResnet_quant streaming_wakeword__str_ww_ref_model)
  set(_model ${_tflite_root}/models/mlperf-tiny/${_name}.tflite)
  if(NOT EXISTS ${_model} OR NOT EXISTS ${_tflite_root}/refs/${_name}/seed1)
    continue()
  endif()
  set(_test e2e.tflite.avxvnni.${_name})
  add_test(NAME ${_test}
           COMMAND ${KILN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/tflite_case.py
                   --kiln $<TARGET_FILE:kiln> --work ${CMAKE_BINARY_DIR}/e2e-tflite-avxvnni/${_name}
                   --model ${_model} --refs ${_tflite_root}/refs/${_name}/seed1
                   --compile-flag=--target=x86_64-v3 --compile-flag=--target-features=+avxvnni)
  set_tests_properties(${_test} PROPERTIES LABELS "e2e;e2e-tflite" SKIP_RETURN_CODE 77
                                           TIMEOUT 600)
endforeach()
