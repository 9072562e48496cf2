// Per-dispatch tracing of one session (see dispatch_trace.h).
#include "dispatch_trace.h"

#include "npy.h"

namespace kiln::cli {

// One entry per dispatch of `function`, in index order: its workgroup count from COMMANDS,
// its names and cost from DEBUG (left empty when the artifact was stripped).
std::vector<DispatchInfo> dispatchInfos(const ArtifactSummary& artifact,
                                        const ArtifactFunction& function) {
  std::vector<DispatchInfo> infos(function.dispatchCount);
  for (const ArtifactCommand& c : function.commands) {
    if (c.opcode != KILN_OP_DISPATCH) continue;
    uint32_t slot = c.dispatchIndex - function.firstDispatch;
    if (slot >= infos.size()) continue;
    DispatchInfo& info = infos[slot];
    info.workgroups = static_cast<uint32_t>(c.operands[KILN_DISPATCH_WORKGROUPS]);
    if (c.dispatchIndex < artifact.debug.size()) {
      const ArtifactDebugEntry& d = artifact.debug[c.dispatchIndex];
      info.name = d.dispatchName;
      info.node = d.nodeName;
      info.costKind = d.costKind;
      info.cost = d.cost;
      info.workQueues = d.workQueues;
    }
  }
  return infos;
}


PerDispatch preparePerDispatch(const std::string& path, RuntimeSession& session,
                               uint32_t function, bool threadCpuClock) {
  ArtifactSummary artifact = readArtifact(readFileBytes(path), path);
  const ArtifactFunction& f = artifact.functions.at(function);
  PerDispatch p;
  p.profile = std::make_unique<DispatchProfile>(f.firstDispatch, f.dispatchCount);
  p.infos = dispatchInfos(artifact, f);
  p.hasCosts = artifact.debugHasCosts;
  if (artifact.debug.empty())
    p.missingCosts = "'" + path + "' has no DEBUG section (compiled with --strip): FLOPs and "
                     "dispatch names are unavailable, times only";
  else if (!artifact.debugHasCosts)
    p.missingCosts = "'" + path + "' has no cost table in DEBUG (written by an older compiler): "
                     "FLOPs are unavailable, times only";
  DispatchProfile* profile = p.profile.get();
  session.setTrace(
      [profile](uint32_t dispatch, uint32_t kernel, uint64_t ns) {
        profile->record(dispatch, kernel, ns);
      },
      threadCpuClock);
  return p;
}

}  // namespace kiln::cli
