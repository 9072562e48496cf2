// emitArtifact: dispatch graph + kernel library -> ArtifactContents -> bytes. This file maps
// IR notions onto the format: memory spaces, IO tensors, per-kernel binding signatures, the
// step list as DISPATCH/COPY/FILL commands with a BARRIER between stages, the target, the
// constants blob and the DEBUG names.
#include "kiln/emit/emit_artifact.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "kiln/codegen/work_queue.h"
#include "kiln/emit/dispatch_cost.h"
#include "kiln/ir/op.h"

namespace kiln::emit {
namespace {

kiln_dtype formatDtype(ir::DType dtype) {
  // ir::DType's numeric values are the format's kiln_dtype values by design (dtype.h).
  return static_cast<kiln_dtype>(static_cast<uint8_t>(dtype));
}

uint64_t formatSpace(const ir::BufferRef& ref) {
  switch (ref.space) {
    case ir::Space::Arena: return KILN_SPACE_ARENA;
    case ir::Space::Constants: return KILN_SPACE_CONSTANTS;
    case ir::Space::Input: return KILN_SPACE_INPUT(ref.index);
    case ir::Space::Output: return KILN_SPACE_OUTPUT(ref.index);
  }
  assert(false && "unknown memory space");
  return 0;
}

kiln_arch formatArch(codegen::TargetArch arch) {
  switch (arch) {
    case codegen::TargetArch::X86_64: return KILN_ARCH_X86_64;
    case codegen::TargetArch::AArch64: return KILN_ARCH_AARCH64;
    case codegen::TargetArch::RiscV64: return KILN_ARCH_RISCV64;
    case codegen::TargetArch::Arm32: return KILN_ARCH_ARM;
    case codegen::TargetArch::RiscV32: return KILN_ARCH_RISCV32;
  }
  return KILN_ARCH_NONE;
}

kiln_abi formatAbi(const codegen::CodegenResult& kernels) {
  bool soft = kernels.floatAbi == codegen::FloatAbi::Soft;
  switch (kernels.arch) {
    case codegen::TargetArch::X86_64:
    case codegen::TargetArch::AArch64: return KILN_ABI_LP64;
    case codegen::TargetArch::RiscV64: return KILN_ABI_LP64D;
    case codegen::TargetArch::Arm32: return soft ? KILN_ABI_EABI_SOFT : KILN_ABI_EABI_HARD;
    case codegen::TargetArch::RiscV32: return soft ? KILN_ABI_ILP32 : KILN_ABI_ILP32F;
  }
  return KILN_ABI_NONE;
}

// Feature names as codegen records them -> the format's bits for the architecture. Names
// the format has no bit for (e.g. "fpu" meaning the base FPU) are implied by the ABI.
uint64_t formatFeatures(kiln_arch arch, const std::vector<std::string>& names) {
  uint64_t bits = 0;
  for (const std::string& name : names) {
    for (uint32_t bit = 0; bit < 64; ++bit) {
      const char* known = kiln_cpu_feature_name(arch, bit);
      if (known && name == known) bits |= uint64_t{1} << bit;
    }
  }
  return bits;
}

TensorInfo ioTensor(const ir::IoTensor& io) {
  TensorInfo t;
  t.name = io.name;
  t.dtype = formatDtype(io.type.dtype);
  for (int64_t d : io.type.shape) t.dims.push_back(static_cast<uint32_t>(d));
  t.alignment = KILN_ALIGNMENT;
  return t;
}

// Alignment a kernel may assume for a binding: its element size (the kernels use plain,
// unaligned-safe vector accesses beyond that).
uint16_t bindingAlignment(const ir::Binding& binding) {
  if (!binding.value) return KILN_ALIGNMENT;  // work queues (codegen/work_queue.h): 64-byte lines
  uint32_t size = ir::dtypeSize(binding.value->type().dtype);
  return static_cast<uint16_t>(std::clamp<uint32_t>(size, 1, KILN_ALIGNMENT));
}

// "Conv+Relu": the root op's kind and the fused ops' kinds.
std::string dispatchName(const ir::Dispatch& d) {
  std::string name(d.root->kindName());
  for (const ir::Op* op : d.fused) name += "+" + std::string(op->kindName());
  return name;
}

// "conv1 (Conv), relu1 (Relu)": the model nodes the dispatch came from.
std::string sourceNames(const ir::Dispatch& d) {
  std::string names;
  auto add = [&](const ir::Op* op) {
    if (!op || op->source().nodeName.empty()) return;
    std::string text = op->source().nodeName;
    if (!op->source().opType.empty()) text += " (" + op->source().opType + ")";
    if (!names.empty()) names += ", ";
    names += text;
  };
  add(d.root);
  for (const ir::Op* op : d.fused) add(op);
  return names.empty() ? d.name : names;
}

}  // namespace

ArtifactContents describeArtifact(const ir::DispatchGraph& graph,
                                  const codegen::CodegenResult& kernels,
                                  const EmitOptions& options) {
  assert(kernels.kernelIndex.size() == graph.dispatches.size() &&
         "one kernel index per dispatch");
  ArtifactContents c;
  c.arch = formatArch(kernels.arch);
  c.abi = formatAbi(kernels);
  c.cpuFeatures = formatFeatures(c.arch, kernels.requiredFeatures);
  c.arenaSize = graph.arenaSize;
  c.stackBound = kernels.stackBoundBytes;

  // Kernel signatures: identical kernels were merged by codegen, so every dispatch of one
  // kernel binds the same lengths; take them from the first such dispatch.
  c.kernels.resize(kernels.kernelCount);
  std::vector<bool> described(kernels.kernelCount, false);
  for (const ir::Dispatch& d : graph.dispatches) {
    uint32_t k = kernels.kernelIndex[d.id];
    assert(k < kernels.kernelCount);
    if (described[k]) continue;
    described[k] = true;
    for (const ir::Binding& b : d.bindings)
      c.kernels[k].bindings.push_back({b.ref.length, b.access, bindingAlignment(b)});
  }

  FunctionInfo f;
  f.name = "main";
  for (const ir::IoTensor& io : graph.inputs) f.inputs.push_back(ioTensor(io));
  for (const ir::IoTensor& io : graph.outputs) f.outputs.push_back(ioTensor(io));
  uint32_t stage = graph.steps.empty() ? 0 : graph.steps.front().stage;
  for (const ir::Step& step : graph.steps) {
    if (step.stage != stage) {
      f.commands.barrier();
      stage = step.stage;
    }
    switch (step.kind) {
      case ir::StepKind::Dispatch: {
        const ir::Dispatch& d = graph.dispatches[step.dispatch];
        std::vector<BindingRef> refs;
        for (const ir::Binding& b : d.bindings)
          refs.push_back({formatSpace(b.ref), graph.spaceOffset(b.ref)});
        uint32_t workgroups = std::max<uint32_t>(
            1, std::min(kernels.maxWorkgroups[d.id], options.maxWorkgroups));
        f.commands.dispatch(kernels.kernelIndex[d.id], workgroups, refs);
        if (!options.strip) {
          DispatchCost cost = dispatchCost(d);
          uint32_t queues = 0;  // the work-queue binding has no tensor (codegen/work_queue.h)
          for (const ir::Binding& b : d.bindings)
            if (!b.value) queues += static_cast<uint32_t>(b.ref.length / codegen::kWorkQueueBytes);
          c.debug.push_back({dispatchName(d), sourceNames(d), cost.kind, cost.count, queues});
        }
        break;
      }
      case ir::StepKind::Copy:
        f.commands.copy(formatSpace(step.src), graph.spaceOffset(step.src),
                        formatSpace(step.dst), graph.spaceOffset(step.dst), step.dst.length);
        break;
      case ir::StepKind::Fill:
        f.commands.fill(formatSpace(step.dst), graph.spaceOffset(step.dst), step.dst.length,
                        step.fillByte);
        break;
    }
  }
  f.commands.ret();
  c.functions.push_back(std::move(f));

  c.constants.assign(graph.constantsSize, 0);
  for (const ir::ConstantEntry& entry : graph.constants) {
    assert(entry.offset + entry.bytes.size() <= c.constants.size());
    std::copy(entry.bytes.begin(), entry.bytes.end(), c.constants.begin() + entry.offset);
  }
  c.externalConstants = options.externalConstants;
  if (!options.strip) c.debugNote = options.debugNote;

  if (kernels.output == codegen::KernelOutput::SharedElf) {
    c.kernelElf = kernels.bytes;
  } else {
    c.staticLibraryName = options.staticLibraryName;
  }
  return c;
}

EmittedArtifact emitArtifact(const ir::DispatchGraph& graph,
                             const codegen::CodegenResult& kernels, const EmitOptions& options) {
  ArtifactContents contents = describeArtifact(graph, kernels, options);
  EmittedArtifact result;
  result.artifact = serializeArtifact(contents);
  if (options.externalConstants) result.externalConstants = contents.constants;
  return result;
}

}  // namespace kiln::emit
