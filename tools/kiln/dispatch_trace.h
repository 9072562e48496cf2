// What `kiln bench --per-dispatch` and `kiln compare --per-dispatch` share: each dispatch's
// names, cost and workgroups from the artifact (dispatchInfos), and a DispatchProfile fed by
// the runtime's trace hook of one session (preparePerDispatch).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "artifact_reader.h"
#include "dispatch_profile.h"
#include "runtime_session.h"

namespace kiln::cli {

// One entry per dispatch of `function`, in index order: its workgroup count from COMMANDS,
// its names and cost from DEBUG (left empty when the artifact was stripped).
std::vector<DispatchInfo> dispatchInfos(const ArtifactSummary& artifact,
                                        const ArtifactFunction& function);

struct PerDispatch {
  std::unique_ptr<DispatchProfile> profile;
  std::vector<DispatchInfo> infos;
  bool hasCosts = false;
  std::string missingCosts;  // why there are no FLOPs, if there are none
};

// Reads the artifact at `path` (the one `session` runs) and sets the session's trace hook to
// record every dispatch of `function` into the returned profile, by the wall clock or by the
// calling thread's CPU time.
PerDispatch preparePerDispatch(const std::string& path, RuntimeSession& session,
                               uint32_t function, bool threadCpuClock);

}  // namespace kiln::cli
