# Cross toolchain for the runtime core on Arm Cortex-M7 (double-precision FPU, hard-float
# ABI; Debian's arm-none-eabi-gcc). Matches `kiln compile --target=cortex-m7`.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(_kiln_m7 "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16")
set(CMAKE_C_FLAGS_INIT "${_kiln_m7}")
set(CMAKE_CXX_FLAGS_INIT "${_kiln_m7}")
set(CMAKE_C_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
set(CMAKE_CXX_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
