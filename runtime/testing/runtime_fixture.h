// Test helpers over the C API: load an artifact (static kernel library registered, ELF loader
// on), keep the error message, create contexts, run the standard "main" function.
#ifndef KILN_RUNTIME_TESTING_RUNTIME_FIXTURE_H_
#define KILN_RUNTIME_TESTING_RUNTIME_FIXTURE_H_

#include <string>
#include <vector>

#include "artifact_writer.h"
#include "kiln/kiln.h"
#include "kiln/kiln_host.h"
#include "test_artifacts.h"
#include "test_kernels.h"

namespace kiln::testing {

// A loaded module; status() and error() tell why a load failed.
class Loaded {
 public:
  struct Options {
    bool elfLoader = true;
    const void* externalConstants = nullptr;
    size_t externalConstantsSize = 0;
    std::vector<const kiln_kernel_library*> libraries = {kiln_test_kernels_static()};
  };

  explicit Loaded(const std::vector<uint8_t>& bytes) : Loaded(bytes, Options()) {}
  Loaded(const std::vector<uint8_t>& bytes, const Options& options)
      : artifact_(bytes), memory_(kiln_module_memory_size()), libraries_(options.libraries) {
    kiln_load_options o;
    if (options.elfLoader) {
      kiln_host_load_options_init(&o);
    } else {
      kiln_load_options_init(&o);
    }
    o.kernel_libraries = libraries_.data();
    o.kernel_library_count = static_cast<uint32_t>(libraries_.size());
    o.external_constants = options.externalConstants;
    o.external_constants_size = options.externalConstantsSize;
    o.error = error_;
    o.error_capacity = sizeof error_;
    status_ = kiln_module_load(artifact_.data(), artifact_.size(), &o, memory_.data(),
                               memory_.size(), &module_);
  }
  ~Loaded() { kiln_module_unload(module_); }
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;

  kiln_status_t status() const { return status_; }
  std::string error() const { return error_; }
  kiln_module* module() const { return module_; }

 private:
  AlignedBuffer artifact_;
  AlignedBuffer memory_;
  std::vector<const kiln_kernel_library*> libraries_;
  kiln_module* module_ = nullptr;
  kiln_status_t status_;
  char error_[256] = {};
};

// A context in its own aligned memory.
class Context {
 public:
  explicit Context(const kiln_module* module, const kiln_executor* executor = nullptr)
      : memory_(kiln_context_memory_size(module)) {
    status_ = kiln_context_init(module, executor, memory_.data(), memory_.size(), &context_);
  }
  kiln_context* get() const { return context_; }
  kiln_status_t status() const { return status_; }

 private:
  AlignedBuffer memory_;
  kiln_context* context_ = nullptr;
  kiln_status_t status_;
};

// Runs the standard "main" on (x, y); returns the status and fills *result.
inline kiln_status_t runMain(kiln_context* context, const Vec16& x, const Vec16& y,
                             MainResult* result) {
  alignas(64) Vec16 xin = x, yin = y;
  alignas(64) Vec16 out{}, twice{};
  alignas(64) float total = 0;
  kiln_input inputs[] = {{xin.data(), sizeof xin}, {yin.data(), sizeof yin}};
  kiln_output outputs[] = {
      {out.data(), sizeof out}, {&total, sizeof total}, {twice.data(), sizeof twice}};
  kiln_status_t st = kiln_context_call_named(context, "main", inputs, 2, outputs, 3);
  result->out = out;
  result->total = total;
  result->twice = twice;
  return st;
}

}  // namespace kiln::testing

#endif  // KILN_RUNTIME_TESTING_RUNTIME_FIXTURE_H_
