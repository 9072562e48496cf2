// Thread-pool executor: a stage's dispatches are flattened into (dispatch, workgroup) items that
// the workers and the calling thread take from one atomic counter, so a stage's independent
// dispatches run concurrently and each dispatch's workgroups spread over the threads. The
// calling thread returns once every item of the stage has finished.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "kiln/kiln_host.h"

struct kiln_thread_pool {
  kiln_executor executor{};
  std::vector<std::thread> workers;
  std::mutex stageMutex;  // one stage at a time per pool

  std::mutex mutex;
  std::condition_variable wake;    // workers wait here for a new stage
  std::condition_variable idle;    // the caller waits here for the workers to leave a stage
  uint64_t generation = 0;         // bumped per stage
  bool stopping = false;
  uint32_t active = 0;             // workers inside the current stage

  // The current stage (written under `mutex` before `generation` is bumped).
  const kiln_dispatch* dispatches = nullptr;
  std::vector<uint32_t> firstItem;  // first item index of each dispatch, plus the total
  std::atomic<uint32_t> next{0};
};

namespace {

// Runs items of the current stage until none are left.
void drain(kiln_thread_pool& pool) {
  const std::vector<uint32_t>& first = pool.firstItem;
  uint32_t total = first.back();
  uint32_t d = 0;
  for (uint32_t item = pool.next.fetch_add(1, std::memory_order_relaxed); item < total;
       item = pool.next.fetch_add(1, std::memory_order_relaxed)) {
    while (item >= first[d + 1]) ++d;  // items are taken in increasing order per thread
    const kiln_dispatch& dispatch = pool.dispatches[d];
    dispatch.kernel(dispatch.bindings, item - first[d], dispatch.workgroup_count);
  }
}

void workerLoop(kiln_thread_pool* pool) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(pool->mutex);
      pool->wake.wait(lock, [&] { return pool->stopping || pool->generation != seen; });
      if (pool->stopping) return;
      seen = pool->generation;
      ++pool->active;
    }
    drain(*pool);
    {
      std::lock_guard<std::mutex> lock(pool->mutex);
      if (--pool->active == 0) pool->idle.notify_one();
    }
  }
}

void runStage(void* self, const kiln_dispatch* dispatches, uint32_t count) {
  kiln_thread_pool& pool = *static_cast<kiln_thread_pool*>(self);
  std::lock_guard<std::mutex> stageLock(pool.stageMutex);
  uint32_t total = 0;
  for (uint32_t d = 0; d < count; ++d) total += dispatches[d].workgroup_count;
  if (pool.workers.empty() || total == 1) {
    for (uint32_t d = 0; d < count; ++d)
      for (uint32_t wg = 0; wg < dispatches[d].workgroup_count; ++wg)
        dispatches[d].kernel(dispatches[d].bindings, wg, dispatches[d].workgroup_count);
    return;
  }
  {
    std::unique_lock<std::mutex> lock(pool.mutex);
    // A worker that woke too late for the previous stage may still be leaving it.
    pool.idle.wait(lock, [&] { return pool.active == 0; });
    pool.dispatches = dispatches;
    pool.firstItem.assign(count + 1, 0);
    for (uint32_t d = 0; d < count; ++d)
      pool.firstItem[d + 1] = pool.firstItem[d] + dispatches[d].workgroup_count;
    pool.next.store(0, std::memory_order_relaxed);
    ++pool.generation;
  }
  pool.wake.notify_all();
  drain(pool);
  // Every item has been taken; wait until the workers that joined have finished theirs. A
  // worker that wakes late finds no item left and leaves at once.
  std::unique_lock<std::mutex> lock(pool.mutex);
  pool.idle.wait(lock, [&] { return pool.active == 0; });
}

}  // namespace

extern "C" kiln_status_t kiln_thread_pool_create(uint32_t threads, kiln_thread_pool** out_pool) {
  if (!out_pool || threads == 0) return KILN_ERROR_INVALID_ARGUMENT;
  kiln_thread_pool* pool = new (std::nothrow) kiln_thread_pool;
  if (!pool) return KILN_ERROR_OUT_OF_MEMORY;
  pool->executor.run_stage = runStage;
  pool->executor.self = pool;
  pool->firstItem.assign(1, 0);
  for (uint32_t i = 1; i < threads; ++i) pool->workers.emplace_back(workerLoop, pool);
  *out_pool = pool;
  return KILN_OK;
}

extern "C" void kiln_thread_pool_destroy(kiln_thread_pool* pool) {
  if (!pool) return;
  {
    std::lock_guard<std::mutex> lock(pool->mutex);
    pool->stopping = true;
  }
  pool->wake.notify_all();
  for (std::thread& t : pool->workers) t.join();
  delete pool;
}

extern "C" const kiln_executor* kiln_thread_pool_executor(const kiln_thread_pool* pool) {
  return pool ? &pool->executor : nullptr;
}
