// Read-only questions about a loaded module: its target, sizes, entry functions and their
// inputs/outputs (names, dtypes, shapes), and the optional DEBUG names of dispatches.
#include "loader/module.h"

namespace {

void tensorInfo(const kiln_module* m, const kiln_tensor& t, kiln_tensor_info* out) {
  out->name = kiln::stringAt(m->strings, t.name);
  out->dtype = t.dtype;
  out->rank = t.rank;
  out->dims = t.dims;
  out->byte_size = t.byte_size;
  out->alignment = t.alignment;
}

}  // namespace

extern "C" void kiln_module_info_get(const kiln_module* m, kiln_module_info* out) {
  if (!m || !out) return;
  *out = kiln_module_info{};
  out->format_major = m->header->format_major;
  out->format_minor = m->header->format_minor;
  out->arch = m->header->arch;
  out->abi = m->header->abi;
  out->cpu_features = m->header->cpu_features;
  out->arena_size = m->meta->arena_size;
  out->stack_bound = m->meta->stack_bound;
  out->kernel_count = m->meta->kernel_count;
  out->function_count = m->meta->function_count;
  out->dispatch_count = m->dispatchCount;
  out->max_stage_dispatches = m->maxStageDispatches;
  out->kernels_static = m->kernelsStatic;
  out->constants_external = m->constantsExternal;
  out->constants_size = m->constantsSize;
  out->kernel_library =
      m->kernelsStatic ? reinterpret_cast<const char*>(m->kernelSection) : nullptr;
}

extern "C" uint32_t kiln_module_function_count(const kiln_module* m) {
  return m ? m->meta->function_count : 0;
}

extern "C" kiln_status_t kiln_module_function_info(const kiln_module* m, uint32_t function,
                                                   kiln_function_info* out) {
  if (!m || !out || function >= m->meta->function_count) return KILN_ERROR_INVALID_ARGUMENT;
  const kiln_function& fn = m->functions[function];
  out->name = kiln::stringAt(m->strings, fn.name);
  out->input_count = fn.input_count;
  out->output_count = fn.output_count;
  out->first_dispatch = fn.first_dispatch;
  out->dispatch_count = fn.dispatch_count;
  return KILN_OK;
}

extern "C" kiln_status_t kiln_module_find_function(const kiln_module* m, const char* name,
                                                   uint32_t* out_function) {
  if (!m || !name || !out_function) return KILN_ERROR_INVALID_ARGUMENT;
  for (uint32_t f = 0; f < m->meta->function_count; ++f) {
    if (kiln::sameString(kiln::stringAt(m->strings, m->functions[f].name), name)) {
      *out_function = f;
      return KILN_OK;
    }
  }
  return KILN_ERROR_NOT_FOUND;
}

extern "C" kiln_status_t kiln_module_input_info(const kiln_module* m, uint32_t function,
                                                uint32_t input, kiln_tensor_info* out) {
  if (!m || !out || function >= m->meta->function_count) return KILN_ERROR_INVALID_ARGUMENT;
  const kiln_function& fn = m->functions[function];
  if (input >= fn.input_count) return KILN_ERROR_INVALID_ARGUMENT;
  tensorInfo(m, m->tensors[fn.first_tensor + input], out);
  return KILN_OK;
}

extern "C" kiln_status_t kiln_module_output_info(const kiln_module* m, uint32_t function,
                                                 uint32_t output, kiln_tensor_info* out) {
  if (!m || !out || function >= m->meta->function_count) return KILN_ERROR_INVALID_ARGUMENT;
  const kiln_function& fn = m->functions[function];
  if (output >= fn.output_count) return KILN_ERROR_INVALID_ARGUMENT;
  tensorInfo(m, m->tensors[fn.first_tensor + fn.input_count + output], out);
  return KILN_OK;
}

extern "C" kiln_status_t kiln_module_dispatch_debug(const kiln_module* m, uint32_t index,
                                                    const char** out_name, const char** out_node) {
  if (!m) return KILN_ERROR_INVALID_ARGUMENT;
  if (!m->debugEntries || index >= m->debugEntryCount) return KILN_ERROR_NOT_FOUND;
  const kiln_debug_entry& e = m->debugEntries[index];
  if (out_name) *out_name = kiln::stringAt(m->debugStrings, e.dispatch_name);
  if (out_node) *out_node = kiln::stringAt(m->debugStrings, e.node_name);
  return KILN_OK;
}

extern "C" kiln_status_t kiln_module_kernel_binding_count(const kiln_module* m, uint32_t kernel,
                                                          uint32_t* out_count) {
  if (!m || !out_count || kernel >= m->meta->kernel_count) return KILN_ERROR_INVALID_ARGUMENT;
  *out_count = m->signatures[kernel].binding_count;
  return KILN_OK;
}

extern "C" kiln_status_t kiln_module_kernel_binding(const kiln_module* m, uint32_t kernel,
                                                    uint32_t binding, kiln_binding_info* out) {
  if (!m || !out || kernel >= m->meta->kernel_count ||
      binding >= m->signatures[kernel].binding_count) {
    return KILN_ERROR_INVALID_ARGUMENT;
  }
  const kiln_binding_signature& b = m->bindingSigs[m->signatures[kernel].first_binding + binding];
  out->length = b.length;
  out->access = b.access;
  out->alignment = b.alignment;
  return KILN_OK;
}
