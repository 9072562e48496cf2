// Thread-pool executor: a stage's dispatches are flattened into (dispatch, workgroup) items that
// the workers and the calling thread claim from one atomic cursor, so a stage's independent
// dispatches run concurrently and each dispatch's workgroups spread over the threads. The
// calling thread returns once every item of the stage has finished.
//
// The handoff between stages is what a model of many small stages pays per stage, so it avoids
// the kernel when it can: a worker that has finished a stage spins on the cursor for the next
// stage's epoch (see spinUntil) for up to kSpinBudgetNs, and only then sleeps on a condition
// variable; the caller wakes sleepers only when there are some. Likewise the caller
// spins for the workers' last items before it sleeps. So back-to-back stages cost a few cache
// line transfers, while an idle pool (a loaded model with no traffic) sleeps after the budget.
//
// The cursor packs (epoch:16 | lo:24 | hi:24): [lo, hi) are the unclaimed items of one
// dispatch, the stage's dispatches taken last to first (the items below lo are the lower
// dispatches', all unclaimed). The workers claim from the bottom and the caller from the top,
// so in consecutive stages each thread tends to get the same part of each dispatch's items
// (the same part of the tensors, which then stay in its core's caches). A claim is a compare-and-swap against the exact cursor value
// the thread read, so a thread never claims an item of a stage other than the current one;
// and a stage's data (dispatches, firstItem) stays unchanged until every thread has counted
// the items it claimed, so a thread relies on it only after a claim (it reads the dispatches'
// boundaries before, to size the claim: see drain). (An epoch wrapping around
// while a worker is asleep only makes it miss that stage: the caller runs what is left.)
// Plain pthreads (rather than std::thread) keep the host runtime small.
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomic>
#include <new>

#include "kiln/kiln_host.h"
#include "thread_pool_internal.h"

namespace {

constexpr size_t kMinWorkerStack = size_t{4} << 20;  // 4 MiB
constexpr uint32_t kMaxStageDispatches = 4096;  // larger stages run in several parts
// How long a thread waits for the next stage (or, the caller, for the stage's last items)
// before it sleeps: first spinning with a pause instruction, then yielding the processor
// between checks (on a machine with more runnable threads than processors a spinning thread
// would take the processor from the very thread it waits for). Long enough to cover the
// caller's work between two stages and the imbalance of a stage's last workgroups; short
// enough that an idle pool soon sleeps.
constexpr uint64_t kPauseSpinNs = 50 * 1000;
constexpr uint64_t kSpinBudgetNs = 500 * 1000;
constexpr uint32_t kSpinsPerClockRead = 64;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Spins until `done()` holds or the budget is spent; returns whether it holds.
template <typename Done>
bool spinUntil(Done done) {
  uint64_t start = 0;
  bool yielding = false;
  for (uint32_t spins = 1;; ++spins) {
    if (done()) return true;
    if (yielding) {
      sched_yield();
    } else {
      cpuRelax();
    }
    if (yielding || spins % kSpinsPerClockRead == 0) {
      uint64_t now = nowNs();
      if (start == 0) start = now;
      if (now - start >= kSpinBudgetNs) return done();
      yielding = now - start >= kPauseSpinNs;
    }
  }
}

constexpr uint32_t kMaxStageItems = (1u << 24) - 1;  // the cursor's 24-bit item indices
constexpr uint32_t epochOf(uint64_t cursor) { return uint32_t(cursor >> 48); }
constexpr uint32_t loOf(uint64_t cursor) { return uint32_t(cursor >> 24) & kMaxStageItems; }
constexpr uint32_t hiOf(uint64_t cursor) { return uint32_t(cursor) & kMaxStageItems; }
constexpr uint64_t makeCursor(uint32_t epoch, uint32_t lo, uint32_t hi) {
  return (uint64_t(epoch & 0xffffu) << 48) | (uint64_t(lo) << 24) | hi;
}

}  // namespace

struct kiln_thread_pool {
  // Written by the caller, read by every thread: its own cache line.
  alignas(64) std::atomic<uint64_t> cursor;  // epoch:16 | lo:24 | hi:24, see above
  const kiln_dispatch* dispatches;           // the current stage (stable while it runs)
  std::atomic<uint32_t> stageCount;  // atomics: a thread may read them before its claim fails
  std::atomic<bool> stopping;
  // Written by every thread that finishes an item.
  alignas(64) std::atomic<uint32_t> finished;  // items of the current stage that have finished
  alignas(64) std::atomic<uint32_t> sleepers;  // workers asleep (or going to sleep) on `wake`
  std::atomic<bool> callerSleeping;            // the caller sleeps (or is about to) on `done`
  std::atomic<uint64_t> sleeps;                // how often a worker went to sleep (tests)

  kiln_executor executor;
  pthread_t* workers;
  uint32_t workerCount;
  pthread_mutex_t stageMutex;  // one stage at a time per pool
  pthread_mutex_t mutex;       // guards the sleeps on `wake` and `done`
  pthread_cond_t wake;         // workers sleep here until a new epoch or `stopping`
  pthread_cond_t done;         // the caller sleeps here until the stage's items have finished
  // First item of each dispatch, then the total.
  std::atomic<uint32_t> firstItem[kMaxStageDispatches + 1];
};

namespace {

// Claims and runs items of the stage whose cursor value `seen` a thread has read (from the top
// if `fromTop`, else from the bottom), until that stage has no unclaimed items left (or a newer
// stage has replaced it), then counts the items it ran into `finished` at once (one contended
// write per thread and stage, not per item).
//
// The cursor holds the unclaimed items of one dispatch at a time, the stage's last first: every
// thread works on the same dispatch, the caller from its top and the workers from its bottom,
// and the claim that takes a dispatch's last items moves the cursor to the whole of the
// dispatch below (no barrier: the threads that finish first start on it while the others end
// theirs). Claims are guided: a share of what remains of the dispatch (at least one item), so
// a dispatch of many tiny items does not bounce the cursor between the threads per item, while
// its last items still go one at a time to whichever thread is free. SqueezeNet's stages run
// expand1x1 (24 items of ~5 us) beside the Winograd expand3x3 (4 or 8 items of 50-100 us): a
// share of the stage's items took all the Winograd items into the caller's first claim (one
// thread ran ~80 % of the stage); shares of one dispatch each, but the worker on expand1x1
// first, left it ending on a Winograd item alone; both threads on the Winograd items first,
// then expand1x1 fills in (simulated from per-workgroup CPU times: x1.73 -> x1.86 -> x1.95).
//
// `kiln bench --per-workgroup` replays this claim order on measured workgroup times
// (simulatePoolStage in tools/kiln/workgroup_profile.cpp): change both together.
//
// The claim is computed from the stage data before the claim; if the stage has moved on
// meanwhile, the data may be a newer stage's (hence atomics, and a bounded search), but then
// the claim's compare-and-swap fails.
void drain(kiln_thread_pool& pool, uint64_t seen, bool fromTop) {
  uint64_t c = seen;
  uint32_t ran = 0;
  const uint32_t shares = 2 * (pool.workerCount + 1);
  const uint32_t count = pool.stageCount.load(std::memory_order_relaxed);
  if (count == 0) return;  // (only a stale read: a published stage has dispatches)
  auto first = [&](uint32_t d) { return pool.firstItem[d].load(std::memory_order_relaxed); };
  uint32_t d = count - 1;  // the cursor's dispatch
  for (;;) {
    uint32_t lo = loOf(c), hi = hiOf(c);
    if (lo >= hi) break;
    while (d > 0 && lo < first(d)) --d;
    while (d + 1 < count && lo >= first(d + 1)) ++d;
    uint32_t claim = (hi - lo) / shares;
    if (claim == 0) claim = 1;
    uint64_t next = fromTop ? c - claim : c + (uint64_t(claim) << 24);
    if (claim == hi - lo && d > 0) next = makeCursor(epochOf(c), first(d - 1), first(d));
    if (!pool.cursor.compare_exchange_weak(c, next, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
      if (epochOf(c) != epochOf(seen)) break;  // only while ran == 0: see below
      continue;
    }
    // Claimed: the stage cannot finish before this thread counts its items, so its data stays
    // put (and its epoch: a thread with items still to count never sees another epoch). The
    // claimed items are all dispatch d's.
    const kiln_dispatch& dispatch = pool.dispatches[d];
    for (uint32_t i = 0; i < claim; ++i) {
      uint32_t item = fromTop ? hi - 1 - i : lo + i;
      dispatch.kernel(dispatch.bindings, item - first(d), dispatch.workgroup_count);
    }
    ran += claim;
    c = pool.cursor.load(std::memory_order_relaxed);
  }
  if (ran == 0) return;
  const uint32_t total = first(count);
  if (pool.finished.fetch_add(ran, std::memory_order_seq_cst) + ran == total &&
      pool.callerSleeping.load(std::memory_order_seq_cst)) {
    pthread_mutex_lock(&pool.mutex);  // the caller is in (or about to enter) its wait
    pthread_cond_signal(&pool.done);
    pthread_mutex_unlock(&pool.mutex);
  }
}

// Waits for a stage with an epoch other than `seenEpoch` (or for `stopping`) and returns the
// cursor value it found.
uint64_t waitForStage(kiln_thread_pool& pool, uint32_t seenEpoch) {
  uint64_t c = 0;
  auto ready = [&] {
    c = pool.cursor.load(std::memory_order_acquire);
    return epochOf(c) != seenEpoch || pool.stopping.load(std::memory_order_relaxed);
  };
  if (spinUntil(ready)) return c;
  pthread_mutex_lock(&pool.mutex);
  pool.sleepers.fetch_add(1, std::memory_order_seq_cst);
  pool.sleeps.fetch_add(1, std::memory_order_relaxed);
  // seq_cst pairs with the caller's store of the cursor and load of `sleepers`: either this
  // load sees the new epoch, or the caller sees a sleeper and broadcasts under the mutex.
  while (epochOf(pool.cursor.load(std::memory_order_seq_cst)) == seenEpoch &&
         !pool.stopping.load(std::memory_order_relaxed)) {
    pthread_cond_wait(&pool.wake, &pool.mutex);
  }
  pool.sleepers.fetch_sub(1, std::memory_order_relaxed);
  pthread_mutex_unlock(&pool.mutex);
  return pool.cursor.load(std::memory_order_acquire);
}

void* workerLoop(void* arg) {
  kiln_thread_pool& pool = *static_cast<kiln_thread_pool*>(arg);
  uint32_t seenEpoch = 0;
  for (;;) {
    uint64_t c = waitForStage(pool, seenEpoch);
    if (pool.stopping.load(std::memory_order_relaxed)) return nullptr;
    seenEpoch = epochOf(c);
    drain(pool, c, /*fromTop=*/false);
  }
}

void runPart(kiln_thread_pool& pool, const kiln_dispatch* dispatches, uint32_t count) {
  // Every item of the previous stage has finished, so no thread reads the stage data now.
  pool.dispatches = dispatches;
  pool.stageCount.store(count, std::memory_order_relaxed);
  uint32_t total = 0;
  pool.firstItem[0].store(0, std::memory_order_relaxed);
  for (uint32_t d = 0; d < count; ++d) {
    total += dispatches[d].workgroup_count;
    pool.firstItem[d + 1].store(total, std::memory_order_relaxed);
  }
  if (total == 0) return;
  pool.finished.store(0, std::memory_order_relaxed);
  uint32_t epoch = epochOf(pool.cursor.load(std::memory_order_relaxed)) + 1u;
  uint64_t c = makeCursor(epoch, total - dispatches[count - 1].workgroup_count, total);
  pool.cursor.store(c, std::memory_order_seq_cst);  // publishes the stage
  if (pool.sleepers.load(std::memory_order_seq_cst) != 0) {
    pthread_mutex_lock(&pool.mutex);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mutex);
  }
  drain(pool, c, /*fromTop=*/true);
  // Every item has been claimed; wait for the workers to finish theirs.
  auto stageDone = [&] { return pool.finished.load(std::memory_order_acquire) == total; };
  if (spinUntil(stageDone)) return;
  pthread_mutex_lock(&pool.mutex);
  pool.callerSleeping.store(true, std::memory_order_seq_cst);
  while (pool.finished.load(std::memory_order_seq_cst) != total)
    pthread_cond_wait(&pool.done, &pool.mutex);
  pool.callerSleeping.store(false, std::memory_order_relaxed);
  pthread_mutex_unlock(&pool.mutex);
}

void runInline(const kiln_dispatch* dispatches, uint32_t count) {
  for (uint32_t d = 0; d < count; ++d)
    for (uint32_t wg = 0; wg < dispatches[d].workgroup_count; ++wg)
      dispatches[d].kernel(dispatches[d].bindings, wg, dispatches[d].workgroup_count);
}

void runStage(void* self, const kiln_dispatch* dispatches, uint32_t count) {
  kiln_thread_pool& pool = *static_cast<kiln_thread_pool*>(self);
  if (pool.workerCount == 0 || (count == 1 && dispatches[0].workgroup_count <= 1)) {
    runInline(dispatches, count);  // nothing to share: handing it over would only add latency
    return;
  }
  pthread_mutex_lock(&pool.stageMutex);
  // Parts of at most kMaxStageDispatches dispatches and kMaxStageItems items (the dispatches
  // of a stage are independent, so they may run part after part).
  for (uint32_t begin = 0; begin < count;) {
    uint32_t end = begin, items = 0;
    while (end < count && end - begin < kMaxStageDispatches &&
           dispatches[end].workgroup_count <= kMaxStageItems - items) {
      items += dispatches[end++].workgroup_count;
    }
    if (end == begin) {
      runInline(dispatches + begin, 1);  // 16 M workgroups: no time to save on sharing them
      ++begin;
    } else {
      runPart(pool, dispatches + begin, end - begin);
      begin = end;
    }
  }
  pthread_mutex_unlock(&pool.stageMutex);
}

}  // namespace

extern "C" kiln_status_t kiln_thread_pool_create(uint32_t threads, kiln_thread_pool** out_pool) {
  if (!out_pool || threads == 0 || threads > 1024) return KILN_ERROR_INVALID_ARGUMENT;
  *out_pool = nullptr;
  constexpr size_t kAlign = alignof(kiln_thread_pool);
  size_t bytes = (sizeof(kiln_thread_pool) + kAlign - 1) / kAlign * kAlign;
  void* memory = aligned_alloc(kAlign, bytes);
  if (!memory) return KILN_ERROR_OUT_OF_MEMORY;
  memset(memory, 0, bytes);
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
  pthread_cond_init(&pool->done, nullptr);
  // Kernels keep their tiles' panels on the stack (a Winograd convolution's transformed
  // inputs: up to ~1 MB), so workers get at least kMinWorkerStack whatever the process's
  // default thread stack is (address space only: pages are touched as the kernels use them).
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  size_t stack = 0;
  if (pthread_attr_getstacksize(&attr, &stack) != 0 || stack < kMinWorkerStack)
    pthread_attr_setstacksize(&attr, kMinWorkerStack);
  for (uint32_t i = 1; i < threads; ++i) {
    if (pthread_create(&pool->workers[pool->workerCount], &attr, workerLoop, pool) != 0) break;
    ++pool->workerCount;
  }
  pthread_attr_destroy(&attr);
  *out_pool = pool;
  return KILN_OK;
}

extern "C" void kiln_thread_pool_destroy(kiln_thread_pool* pool) {
  if (!pool) return;
  pool->stopping.store(true, std::memory_order_seq_cst);
  pthread_mutex_lock(&pool->mutex);  // a worker checks `stopping` under the mutex before sleeping
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (uint32_t i = 0; i < pool->workerCount; ++i) pthread_join(pool->workers[i], nullptr);
  pthread_mutex_destroy(&pool->stageMutex);
  pthread_mutex_destroy(&pool->mutex);
  pthread_cond_destroy(&pool->wake);
  pthread_cond_destroy(&pool->done);
  free(pool->workers);
  pool->~kiln_thread_pool();
  free(pool);
}

extern "C" const kiln_executor* kiln_thread_pool_executor(const kiln_thread_pool* pool) {
  return pool ? &pool->executor : nullptr;
}

namespace kiln {

uint32_t threadPoolSleepingWorkers(const kiln_thread_pool* pool) {
  return pool->sleepers.load(std::memory_order_seq_cst);
}

uint64_t threadPoolSleeps(const kiln_thread_pool* pool) {
  return pool->sleeps.load(std::memory_order_relaxed);
}

}  // namespace kiln
