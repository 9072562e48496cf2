// See module_runner.h.
#include "module_runner.h"

#include <vector>

#include "artifact_writer.h"
#include "test_kernels.h"

namespace kiln::testing {

namespace {
// Larger (mutated) arenas or tensors are validated but not run.
constexpr uint64_t kMaxBytes = 1u << 20;
}  // namespace

bool signaturesCoverTestKernels(const kiln_module* module) {
  std::vector<std::vector<BindingSpec>> truth = testKernelSignatures();
  kiln_module_info info;
  kiln_module_info_get(module, &info);
  if (info.kernel_count != truth.size()) return false;
  for (uint32_t k = 0; k < truth.size(); ++k) {
    uint32_t count = 0;
    if (kiln_module_kernel_binding_count(module, k, &count) != KILN_OK ||
        count != truth[k].size()) {
      return false;
    }
    for (uint32_t b = 0; b < count; ++b) {
      kiln_binding_info info;
      kiln_module_kernel_binding(module, k, b, &info);
      const BindingSpec& t = truth[k][b];
      if (info.length < t.length || (info.access & t.access) != t.access ||
          info.alignment < t.alignment) {
        return false;
      }
    }
  }
  return true;
}

kiln_status_t runAllFunctions(const kiln_module* module, const kiln_executor* executor) {
  if (kiln_context_memory_size(module) > kMaxBytes) return KILN_OK;  // not worth the memory
  AlignedBuffer memory(kiln_context_memory_size(module));
  kiln_context* context = nullptr;
  if (kiln_status_t st =
          kiln_context_init(module, executor, memory.data(), memory.size(), &context))
    return st;
  for (uint32_t f = 0; f < kiln_module_function_count(module); ++f) {
    kiln_function_info fn;
    kiln_module_function_info(module, f, &fn);
    std::vector<AlignedBuffer> buffers;
    std::vector<kiln_input> inputs;
    std::vector<kiln_output> outputs;
    buffers.reserve(fn.input_count + fn.output_count);
    for (uint32_t i = 0; i < fn.input_count; ++i) {
      kiln_tensor_info t;
      kiln_module_input_info(module, f, i, &t);
      if (t.byte_size > kMaxBytes) return KILN_OK;
      buffers.emplace_back(t.byte_size);
      inputs.push_back({buffers.back().data(), buffers.back().size()});
    }
    for (uint32_t o = 0; o < fn.output_count; ++o) {
      kiln_tensor_info t;
      kiln_module_output_info(module, f, o, &t);
      if (t.byte_size > kMaxBytes) return KILN_OK;
      buffers.emplace_back(t.byte_size);
      outputs.push_back({buffers.back().data(), buffers.back().size()});
    }
    kiln_status_t st = kiln_context_call(context, f, inputs.data(), fn.input_count, outputs.data(),
                                         fn.output_count);
    if (st != KILN_OK) return st;
  }
  return KILN_OK;
}

}  // namespace kiln::testing
