// kiln_raw_run: the smallest host application of the kiln runtime, cross-built for the
// cross-target end-to-end test (tests/e2e/run_cross.py runs it under qemu-user). It loads an
// artifact, feeds entry function 0 the raw little-endian bytes of one file per input, and writes
// each output's raw bytes to a file. No tensor formats, no compiler: just kiln_host.h.
//
//   kiln_raw_run ARTIFACT INPUT.bin... OUTPUT.bin...     (as many of each as the function has)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kiln/kiln_host.h"

namespace {

int fail(const char* what, const char* detail) {
  std::fprintf(stderr, "kiln_raw_run: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

void* alignedZeroed(size_t size) {
  size_t rounded = (size + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (p) std::memset(p, 0, rounded ? rounded : 64);
  return p;
}

// Reads exactly `size` bytes of `path` into `buffer`.
bool readExactly(const char* path, void* buffer, size_t size) {
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  bool ok = std::fread(buffer, 1, size, f) == size && std::fgetc(f) == EOF;
  std::fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("usage: kiln_raw_run ARTIFACT INPUT.bin... OUTPUT.bin...", nullptr);
  char error[512] = "";
  kiln_host_file file;
  if (kiln_host_file_map(argv[1], &file, error, sizeof error) != KILN_OK)
    return fail("cannot map the artifact", error);
  kiln_load_options options;
  kiln_host_load_options_init(&options);
  options.error = error;
  options.error_capacity = sizeof error;
  kiln_module* module = nullptr;
  if (kiln_host_module_load(file.data, file.size, &options, &module) != KILN_OK)
    return fail("cannot load the artifact", error);

  kiln_function_info function;
  kiln_module_function_info(module, 0, &function);
  if (uint32_t(argc - 2) != function.input_count + function.output_count) {
    std::snprintf(error, sizeof error, "function '%s' has %u inputs and %u outputs, %d files given",
                  function.name, function.input_count, function.output_count, argc - 2);
    return fail(error, nullptr);
  }
  std::vector<kiln_input> inputs(function.input_count);
  for (uint32_t i = 0; i < function.input_count; ++i) {
    kiln_tensor_info info;
    kiln_module_input_info(module, 0, i, &info);
    void* data = alignedZeroed(info.byte_size);
    if (!data || !readExactly(argv[2 + i], data, info.byte_size)) {
      std::snprintf(error, sizeof error, "%s must hold exactly %llu bytes (input '%s')",
                    argv[2 + i], static_cast<unsigned long long>(info.byte_size), info.name);
      return fail(error, nullptr);
    }
    inputs[i] = {data, info.byte_size};
  }
  std::vector<kiln_output> outputs(function.output_count);
  for (uint32_t i = 0; i < function.output_count; ++i) {
    kiln_tensor_info info;
    kiln_module_output_info(module, 0, i, &info);
    outputs[i] = {alignedZeroed(info.byte_size), info.byte_size};
  }

  kiln_context* context = nullptr;
  if (kiln_host_context_create(module, nullptr, &context) != KILN_OK)
    return fail("cannot create a context", nullptr);
  if (kiln_context_call(context, 0, inputs.data(), function.input_count, outputs.data(),
                        function.output_count) != KILN_OK)
    return fail("the call failed", kiln_context_error(context));

  for (uint32_t i = 0; i < function.output_count; ++i) {
    const char* path = argv[2 + function.input_count + i];
    FILE* f = std::fopen(path, "wb");
    if (!f || std::fwrite(outputs[i].data, 1, outputs[i].size, f) != outputs[i].size ||
        std::fclose(f) != 0)
      return fail("cannot write", path);
  }
  kiln_host_context_free(context);
  kiln_host_module_free(module);
  kiln_host_file_unmap(&file);
  return 0;
}
