// What the thread pool's tests may observe beyond the C API in kiln_host.h: how many workers
// are asleep, and how often a worker went to sleep (an idle pool must not spin forever).
#ifndef KILN_RUNTIME_EXEC_THREAD_POOL_INTERNAL_H_
#define KILN_RUNTIME_EXEC_THREAD_POOL_INTERNAL_H_

#include <stdint.h>

#include "kiln/kiln_host.h"

namespace kiln {

// Workers asleep on the pool's condition variable (or about to be) right now.
uint32_t threadPoolSleepingWorkers(const kiln_thread_pool* pool);

// How many times any worker has gone to sleep since the pool was created.
uint64_t threadPoolSleeps(const kiln_thread_pool* pool);

}  // namespace kiln

#endif  // KILN_RUNTIME_EXEC_THREAD_POOL_INTERNAL_H_
