// Runs every entry function of an arbitrary (possibly mutated but validated) module on
// zero-filled buffers of the sizes the module states, after checking that its kernel
// signatures cover the test kernels' true ones (the kernels are trusted code: a signature that
// understates what a kernel touches would make the kernel, not the runtime, go out of bounds).
#ifndef KILN_RUNTIME_TESTING_MODULE_RUNNER_H_
#define KILN_RUNTIME_TESTING_MODULE_RUNNER_H_

#include "kiln/kiln.h"

namespace kiln::testing {

// True if every kernel binding of `module` claims at least the length, access and alignment
// the corresponding test kernel really uses.
bool signaturesCoverTestKernels(const kiln_module* module);

// Calls every function once with a fresh context; returns the first failing status. Modules
// needing more than 1 MB of arena or tensor memory are skipped (KILN_OK).
kiln_status_t runAllFunctions(const kiln_module* module, const kiln_executor* executor = nullptr);

}  // namespace kiln::testing

#endif  // KILN_RUNTIME_TESTING_MODULE_RUNNER_H_
