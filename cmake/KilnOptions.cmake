# Project-wide compiler settings: warnings, linker, sanitizers, and the helper that
# gives the freestanding runtime core its flags.

if(NOT KILN_RUNTIME_ONLY)
  # lld links several times faster than GNU ld against the shared libLLVM.
  add_link_options(-fuse-ld=lld)
endif()

add_compile_options(-Wall -Wextra -Wno-unused-parameter)

# Rebuilds of unchanged sources (another build directory, a fresh clone) come from ccache
# when it is installed; scripts/bootstrap installs it. Off with -DKILN_CCACHE=OFF.
option(KILN_CCACHE "Use ccache as the compiler launcher when it is installed" ON)
find_program(KILN_CCACHE_PROGRAM ccache)
if(KILN_CCACHE AND KILN_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # base_dir makes cache entries independent of the source and build directory paths.
  set(_kiln_ccache_env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" "CCACHE_NOHASHDIR=true")
  set(CMAKE_C_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env ${_kiln_ccache_env} ${KILN_CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env ${_kiln_ccache_env} ${KILN_CCACHE_PROGRAM})
endif()

if(KILN_SANITIZE AND NOT KILN_RUNTIME_ONLY)
  string(REPLACE ";" "," _kiln_san "${KILN_SANITIZE}")
  add_compile_options(-fsanitize=${_kiln_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_kiln_san})
endif()

# Flags for code that must stay freestanding: the runtime core and the kernels' view of
# the format headers. No exceptions, RTTI, thread-safe statics or global constructors.
function(kiln_freestanding target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti -fno-threadsafe-statics>
    -ffreestanding -fno-builtin -ffunction-sections -fdata-sections)
  set_target_properties(${target} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF)
endfunction()

# Flags for the hosted compiler side.
function(kiln_compiler_target target)
  set_target_properties(${target} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                             CXX_EXTENSIONS OFF)
endfunction()

# Third-party models and reference outputs; tests read them in place, never copy them.
set(KILN_TESTDATA_DIR "${PROJECT_SOURCE_DIR}/../shared/testdata" CACHE PATH
    "Folder of shared test data (onnx-backend, tflite)")
