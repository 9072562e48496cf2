# Wraps a text file (the soft-float LLVM IR) into a C++ raw string literal for #include.
# Usage: cmake -DINPUT=in.ll -DOUTPUT=out.inc -P embed_text.cmake
file(READ "${INPUT}" content)
file(WRITE "${OUTPUT}" "R\"kiln_embedded(${content})kiln_embedded\"\n")
