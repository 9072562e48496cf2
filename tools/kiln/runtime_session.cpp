// RuntimeSession: the CLI's use of the host runtime (see runtime_session.h).
#include "runtime_session.h"

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "cli_error.h"
#include "npy.h"

namespace kiln::cli {
namespace {

ElementType elementTypeOf(uint32_t dtype) {
  switch (dtype) {
    case KILN_DTYPE_F32: return ElementType::F32;
    case KILN_DTYPE_F16: return ElementType::F16;
    case KILN_DTYPE_I8: return ElementType::I8;
    case KILN_DTYPE_U8: return ElementType::U8;
    case KILN_DTYPE_I16: return ElementType::I16;
    case KILN_DTYPE_I32: return ElementType::I32;
    case KILN_DTYPE_I64: return ElementType::I64;
    case KILN_DTYPE_BOOL: return ElementType::Bool;
    case KILN_DTYPE_F64: return ElementType::F64;
  }
  throw CliError("artifact tensor has unknown dtype " + std::to_string(dtype));
}

TensorSignature signatureOf(const kiln_tensor_info& info) {
  TensorSignature s;
  s.name = info.name ? info.name : "";
  s.type = elementTypeOf(info.dtype);
  s.shape.assign(info.dims, info.dims + info.rank);
  s.byteSize = info.byte_size;
  s.alignment = info.alignment;
  return s;
}

// The signatures of a function's inputs or outputs (`count` of them, read by `info`:
// kiln_module_input_info or kiln_module_output_info).
std::vector<TensorSignature> signaturesOf(
    const kiln_module* module, uint32_t function, uint32_t count,
    kiln_status_t (*info)(const kiln_module*, uint32_t, uint32_t, kiln_tensor_info*)) {
  std::vector<TensorSignature> result;
  for (uint32_t i = 0; i < count; ++i) {
    kiln_tensor_info t;
    info(module, function, i, &t);
    result.push_back(signatureOf(t));
  }
  return result;
}

uint64_t threadCpuClockNs(void*) {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

void traceThunk(void* user, uint32_t dispatch, uint32_t kernel, uint64_t start, uint64_t end) {
  auto* session = static_cast<RuntimeSession::TraceFn*>(user);
  (*session)(dispatch, kernel, end - start);
}

}  // namespace

AlignedBuffer::AlignedBuffer(size_t size) : size_(size) {
  size_t rounded = (size + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw CliError("out of memory allocating " + std::to_string(size) + " bytes");
  std::memset(p, 0, rounded);
  data_.reset(p);
}

void AlignedBuffer::Free::operator()(void* p) const { std::free(p); }

RuntimeSession::RuntimeSession(const std::string& artifactPath, const SessionOptions& options)
    : path_(artifactPath) {
  if (options.executor && options.threads > 1)  // a caller's bug (bench checks its flags first)
    throw std::logic_error("RuntimeSession: a caller's executor runs on one thread");
  char error[512] = "";
  if (kiln_host_file_map(artifactPath.c_str(), &file_, error, sizeof error) != KILN_OK)
    throw CliError(error);

  kiln_load_options load;
  kiln_host_load_options_init(&load);
  load.error = error;
  load.error_capacity = sizeof error;
  if (!options.constantsPath.empty()) {
    std::vector<uint8_t> bytes = readFileBytes(options.constantsPath);
    constants_ = AlignedBuffer(bytes.size());
    std::memcpy(constants_.data(), bytes.data(), bytes.size());
    load.external_constants = constants_.data();
    load.external_constants_size = bytes.size();
  }
  kiln_status_t status = kiln_host_module_load(file_.data, file_.size, &load, &module_);
  if (status != KILN_OK) {
    kiln_host_file_unmap(&file_);
    std::string message = error[0] ? error : kiln_status_string(status);
    throw CliError("cannot load '" + artifactPath + "': " + message);
  }
  const kiln_executor* executor = options.executor;
  if (options.threads > 1) {
    if (kiln_thread_pool_create(options.threads, &pool_) != KILN_OK) {
      kiln_host_module_free(module_);
      kiln_host_file_unmap(&file_);
      throw CliError("cannot start a pool of " + std::to_string(options.threads) + " threads");
    }
    executor = kiln_thread_pool_executor(pool_);
    poolThreads_ = options.threads;
  }
  status = kiln_host_context_create(module_, executor, &context_);
  if (status != KILN_OK) {
    if (pool_) kiln_thread_pool_destroy(pool_);
    kiln_host_module_free(module_);
    kiln_host_file_unmap(&file_);
    throw CliError("cannot create a context for '" + artifactPath + "': " +
                   kiln_status_string(status));
  }
}

RuntimeSession::~RuntimeSession() {
  if (context_) kiln_host_context_free(context_);
  if (pool_) kiln_thread_pool_destroy(pool_);
  if (module_) kiln_host_module_free(module_);
  kiln_host_file_unmap(&file_);
}

uint32_t RuntimeSession::findFunction(const std::optional<std::string>& name) const {
  uint32_t count = kiln_module_function_count(module_);
  if (!name) {
    if (count == 0) throw CliError("'" + path_ + "' has no entry function");
    return 0;
  }
  uint32_t index = 0;
  if (kiln_module_find_function(module_, name->c_str(), &index) == KILN_OK) return index;
  std::string names;
  for (uint32_t i = 0; i < count; ++i) names += (i ? ", " : "") + functionName(i);
  throw CliError("'" + path_ + "' has no function '" + *name + "' (it has: " + names + ")");
}

std::string RuntimeSession::functionName(uint32_t function) const {
  kiln_function_info info;
  if (kiln_module_function_info(module_, function, &info) != KILN_OK) return "?";
  return info.name ? info.name : "";
}

std::vector<TensorSignature> RuntimeSession::inputs(uint32_t function) const {
  kiln_function_info info;
  kiln_module_function_info(module_, function, &info);
  return signaturesOf(module_, function, info.input_count, kiln_module_input_info);
}

std::vector<TensorSignature> RuntimeSession::outputs(uint32_t function) const {
  kiln_function_info info;
  kiln_module_function_info(module_, function, &info);
  return signaturesOf(module_, function, info.output_count, kiln_module_output_info);
}

std::vector<AlignedBuffer> RuntimeSession::prepareInputs(
    uint32_t function, const std::vector<HostTensor>& tensors) const {
  std::vector<TensorSignature> signature = inputs(function);
  std::string fn = "'" + functionName(function) + "'";
  if (tensors.size() != signature.size()) {
    std::string wanted;
    for (const TensorSignature& s : signature)
      wanted += (wanted.empty() ? "" : ", ") + s.name + ": " + describeTensorType(s.type, s.shape);
    throw CliError("function " + fn + " takes " + std::to_string(signature.size()) + " input" +
                   (signature.size() == 1 ? "" : "s") + " (" + wanted + "), got " +
                   std::to_string(tensors.size()) + " --input");
  }
  std::vector<AlignedBuffer> buffers;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSignature& s = signature[i];
    const HostTensor& t = tensors[i];
    if (t.type != s.type || t.shape != s.shape)
      throw CliError("input " + std::to_string(i) + " ('" + s.name + "') of " + fn + " must be " +
                     describeTensorType(s.type, s.shape) + ", got " +
                     describeTensorType(t.type, t.shape));
    AlignedBuffer buffer(s.byteSize);
    std::memcpy(buffer.data(), t.data.data(), std::min<size_t>(t.data.size(), s.byteSize));
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}

std::vector<AlignedBuffer> RuntimeSession::allocateOutputs(uint32_t function) const {
  std::vector<AlignedBuffer> buffers;
  for (const TensorSignature& s : outputs(function)) buffers.emplace_back(s.byteSize);
  return buffers;
}

void RuntimeSession::call(uint32_t function, const std::vector<AlignedBuffer>& inputs,
                          const std::vector<AlignedBuffer>& outputs) {
  callInputs_.clear();
  for (const AlignedBuffer& b : inputs) callInputs_.push_back({b.data(), b.size()});
  callOutputs_.clear();
  for (const AlignedBuffer& b : outputs) callOutputs_.push_back({b.data(), b.size()});
  kiln_status_t status = kiln_context_call(
      context_, function, callInputs_.data(), static_cast<uint32_t>(callInputs_.size()),
      callOutputs_.data(), static_cast<uint32_t>(callOutputs_.size()));
  if (status != KILN_OK) {
    std::string message = kiln_context_error(context_);
    if (message.empty()) message = kiln_status_string(status);
    throw CliError("running '" + functionName(function) + "' failed: " + message);
  }
}

void RuntimeSession::setTrace(TraceFn trace, bool threadCpuClock) {
  trace_ = std::move(trace);
  if (trace_)
    kiln_context_set_trace(context_, traceThunk,
                           threadCpuClock ? threadCpuClockNs : kiln_host_clock_ns, &trace_);
  else kiln_context_set_trace(context_, nullptr, nullptr, nullptr);
}

std::string RuntimeSession::dispatchLabel(uint32_t dispatch) const {
  const char* name = nullptr;
  const char* node = nullptr;
  if (kiln_module_dispatch_debug(module_, dispatch, &name, &node) != KILN_OK) return "";
  std::string label = name ? name : "";
  if (node && *node) label += std::string(" <- ") + node;
  return label;
}

HostTensor RuntimeSession::toHostTensor(const TensorSignature& signature,
                                        const AlignedBuffer& buffer) const {
  HostTensor t;
  t.type = signature.type;
  t.shape = signature.shape;
  const uint8_t* p = static_cast<const uint8_t*>(buffer.data());
  t.data.assign(p, p + signature.byteSize);
  return t;
}

}  // namespace kiln::cli
