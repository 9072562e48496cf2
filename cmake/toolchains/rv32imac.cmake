# Cross toolchain for the runtime core on 32-bit RISC-V rv32imac (ilp32; Debian's
# riscv64-unknown-elf-gcc with picolibc). Matches `kiln compile --target=rv32imac`.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(_kiln_rv "-march=rv32imac -mabi=ilp32")
set(CMAKE_C_FLAGS_INIT "${_kiln_rv}")
set(CMAKE_CXX_FLAGS_INIT "${_kiln_rv}")
set(CMAKE_C_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
set(CMAKE_CXX_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")
