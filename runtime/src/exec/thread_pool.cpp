// Thread-pool executor: a stage's dispatches are flattened into (dispatch, workgroup) items that
// the workers and the calling thread take from one atomic counter, so a stage's independent
// dispatches run concurrently and each dispatch's workgroups spread over the threads. The
// calling thread returns once every item of the stage has finished. Plain pthreads (rather than
// std::thread) keep the host runtime small.
#include <pthread.h>
#include <stdlib.h>

#include <atomic>
#include <new>

#include "kiln/kiln_host.h"

namespace {

constexpr uint32_t kMaxStageDispatches = 4096;  // larger stages run in several parts

}  // namespace

struct kiln_thread_pool {
  kiln_executor executor;
  pthread_t* workers;
  uint32_t workerCount;
  pthread_mutex_t stageMutex;  // one stage at a time per pool

  pthread_mutex_t mutex;
  pthread_cond_t wake;  // workers wait here for a new stage
  pthread_cond_t idle;  // the caller waits here for the workers to leave a stage
  uint64_t generation;  // bumped per stage
  bool stopping;
  uint32_t active;  // workers inside the current stage

  // The current stage (written under `mutex` while no worker is inside a stage).
  const kiln_dispatch* dispatches;
  uint32_t stageCount;
  uint32_t firstItem[kMaxStageDispatches + 1];  // first item of each dispatch, then the total
  std::atomic<uint32_t> next;
};

namespace {

// Runs items of the current stage until none are left.
void drain(kiln_thread_pool& pool, uint32_t count) {
  const uint32_t* first = pool.firstItem;
  uint32_t total = first[count];
  uint32_t d = 0;
  for (uint32_t item = pool.next.fetch_add(1, std::memory_order_relaxed); item < total;
       item = pool.next.fetch_add(1, std::memory_order_relaxed)) {
    while (item >= first[d + 1]) ++d;  // each thread takes items in increasing order
    const kiln_dispatch& dispatch = pool.dispatches[d];
    dispatch.kernel(dispatch.bindings, item - first[d], dispatch.workgroup_count);
  }
}

void* workerLoop(void* arg) {
  kiln_thread_pool& pool = *static_cast<kiln_thread_pool*>(arg);
  uint64_t seen = 0;
  for (;;) {
    pthread_mutex_lock(&pool.mutex);
    while (!pool.stopping && pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.mutex);
    if (pool.stopping) {
      pthread_mutex_unlock(&pool.mutex);
      return nullptr;
    }
    seen = pool.generation;
    ++pool.active;
    uint32_t count = pool.stageCount;
    pthread_mutex_unlock(&pool.mutex);
    drain(pool, count);
    pthread_mutex_lock(&pool.mutex);
    if (--pool.active == 0) pthread_cond_signal(&pool.idle);
    pthread_mutex_unlock(&pool.mutex);
  }
}

void runPart(kiln_thread_pool& pool, const kiln_dispatch* dispatches, uint32_t count) {
  pthread_mutex_lock(&pool.mutex);
  // A worker that woke too late for the previous stage may still be leaving it.
  while (pool.active != 0) pthread_cond_wait(&pool.idle, &pool.mutex);
  pool.dispatches = dispatches;
  pool.firstItem[0] = 0;
  for (uint32_t d = 0; d < count; ++d)
    pool.firstItem[d + 1] = pool.firstItem[d] + dispatches[d].workgroup_count;
  pool.next.store(0, std::memory_order_relaxed);
  pool.stageCount = count;
  ++pool.generation;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.mutex);
  drain(pool, count);
  // Every item has been taken; wait for the workers that joined to finish theirs.
  pthread_mutex_lock(&pool.mutex);
  while (pool.active != 0) pthread_cond_wait(&pool.idle, &pool.mutex);
  pthread_mutex_unlock(&pool.mutex);
}

void runStage(void* self, const kiln_dispatch* dispatches, uint32_t count) {
  kiln_thread_pool& pool = *static_cast<kiln_thread_pool*>(self);
  if (pool.workerCount == 0 || (count == 1 && dispatches[0].workgroup_count == 1)) {
    // Nothing to share: waking the workers would only add latency.
    for (uint32_t d = 0; d < count; ++d)
      for (uint32_t wg = 0; wg < dispatches[d].workgroup_count; ++wg)
        dispatches[d].kernel(dispatches[d].bindings, wg, dispatches[d].workgroup_count);
    return;
  }
  pthread_mutex_lock(&pool.stageMutex);
  for (uint32_t done = 0; done < count; done += kMaxStageDispatches) {
    uint32_t part = count - done < kMaxStageDispatches ? count - done : kMaxStageDispatches;
    runPart(pool, dispatches + done, part);
  }
  pthread_mutex_unlock(&pool.stageMutex);
}

}  // namespace

extern "C" kiln_status_t kiln_thread_pool_create(uint32_t threads, kiln_thread_pool** out_pool) {
  if (!out_pool || threads == 0 || threads > 1024) return KILN_ERROR_INVALID_ARGUMENT;
  *out_pool = nullptr;
  void* memory = calloc(1, sizeof(kiln_thread_pool));
  if (!memory) return KILN_ERROR_OUT_OF_MEMORY;
  kiln_thread_pool* pool = new (memory) kiln_thread_pool();
  pool->workers = static_cast<pthread_t*>(calloc(threads, sizeof(pthread_t)));
  if (!pool->workers) {
    pool->~kiln_thread_pool();
    free(pool);
    return KILN_ERROR_OUT_OF_MEMORY;
  }
  pool->executor.run_stage = runStage;
  pool->executor.self = pool;
  pthread_mutex_init(&pool->stageMutex, nullptr);
  pthread_mutex_init(&pool->mutex, nullptr);
  pthread_cond_init(&pool->wake, nullptr);
  pthread_cond_init(&pool->idle, nullptr);
  for (uint32_t i = 1; i < threads; ++i) {
    if (pthread_create(&pool->workers[pool->workerCount], nullptr, workerLoop, pool) != 0) break;
    ++pool->workerCount;
  }
  *out_pool = pool;
  return KILN_OK;
}

extern "C" void kiln_thread_pool_destroy(kiln_thread_pool* pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (uint32_t i = 0; i < pool->workerCount; ++i) pthread_join(pool->workers[i], nullptr);
  pthread_mutex_destroy(&pool->stageMutex);
  pthread_mutex_destroy(&pool->mutex);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->idle);
  free(pool->workers);
  pool->~kiln_thread_pool();
  free(pool);
}

extern "C" const kiln_executor* kiln_thread_pool_executor(const kiln_thread_pool* pool) {
  return pool ? &pool->executor : nullptr;
}
