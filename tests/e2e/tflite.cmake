# TFLite end-to-end tests (included by tests/e2e/CMakeLists.txt): every model of
# ${KILN_TESTDATA_DIR}/tflite/models with reference outputs under tflite/refs (read in place)
# is compiled with `kiln compile`, run with `kiln run` on both seeds' inputs and compared by
# tflite_case.py: integers bit exact (1 LSB for sub0/sub1/sub3, where TFLM's reference
# kernels and TF Lite differ), floats within 1e-5 relative; with per-operator references,
# every layer too (kiln compile --debug-outputs). Models TFLM could not run, or that kiln
# refuses with a clear "unsupported" message, are reported as skipped (exit 77) with the
# reason. Label: e2e-tflite.
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
