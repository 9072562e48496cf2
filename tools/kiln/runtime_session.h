// A loaded artifact ready to run, for `kiln run` and `kiln bench`: maps the file, loads the
// module through the host runtime (ELF loader, CPU features, optional external constants),
// creates a context on the inline executor or a thread pool, checks the caller's inputs
// against the function's signature and calls it. Failures are CliErrors naming the file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host_tensor.h"
#include "kiln/kiln_host.h"

namespace kiln::cli {

struct SessionOptions {
  uint32_t threads = 1;       // 1: inline executor on the calling thread
  std::string constantsPath;  // external constants file, if the artifact needs one
  // A caller's executor instead of the inline one or a pool (`kiln bench --per-workgroup`'s
  // timing executor); it must outlive the session. Needs threads == 1.
  const kiln_executor* executor = nullptr;
};

struct TensorSignature {
  std::string name;
  ElementType type;
  std::vector<int64_t> shape;
  uint64_t byteSize;
  uint32_t alignment;
};

// 64-byte aligned host memory.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t size = 0);
  void* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  size_t size_ = 0;
};

class RuntimeSession {
 public:
  RuntimeSession(const std::string& artifactPath, const SessionOptions& options);
  ~RuntimeSession();
  RuntimeSession(const RuntimeSession&) = delete;
  RuntimeSession& operator=(const RuntimeSession&) = delete;

  // The function named `name`, or the first function when no name is given.
  uint32_t findFunction(const std::optional<std::string>& name) const;
  std::string functionName(uint32_t function) const;
  std::vector<TensorSignature> inputs(uint32_t function) const;
  std::vector<TensorSignature> outputs(uint32_t function) const;

  // Checks count, element type and shape of `tensors` against the function's inputs and
  // copies them into aligned buffers; errors name the input.
  std::vector<AlignedBuffer> prepareInputs(uint32_t function,
                                           const std::vector<HostTensor>& tensors) const;
  std::vector<AlignedBuffer> allocateOutputs(uint32_t function) const;

  // Calls the function. Allocates nothing after the first call with as many inputs and
  // outputs (the buffer lists are kept), so a timed call is the runtime's time alone.
  void call(uint32_t function, const std::vector<AlignedBuffer>& inputs,
            const std::vector<AlignedBuffer>& outputs);

  // Called after every dispatch with its global index, kernel index and duration in ns, by
  // the wall clock or, with threadCpuClock, by the calling thread's CPU time (which leaves
  // out the time another process held the CPU; only meaningful with one thread).
  using TraceFn = std::function<void(uint32_t dispatch, uint32_t kernel, uint64_t ns)>;
  void setTrace(TraceFn trace, bool threadCpuClock = false);
  // "name <- node" from the artifact's DEBUG section, or "" when stripped.
  std::string dispatchLabel(uint32_t dispatch) const;

  HostTensor toHostTensor(const TensorSignature& signature, const AlignedBuffer& buffer) const;

  // The threads that run each call: the pool's (its workers and the caller), else 1.
  uint32_t threads() const { return poolThreads_; }

 private:
  std::string path_;
  kiln_host_file file_{};
  AlignedBuffer constants_;
  kiln_module* module_ = nullptr;
  kiln_thread_pool* pool_ = nullptr;
  uint32_t poolThreads_ = 1;
  kiln_context* context_ = nullptr;
  TraceFn trace_;
  std::vector<kiln_input> callInputs_;  // call()'s buffer lists, reused
  std::vector<kiln_output> callOutputs_;
};

}  // namespace kiln::cli
