// ReadyQueue: the engine's per-device priority queue of NodeTasks.
// Used by _engine.pyx; push() is called holding the GIL, pop() without it.
//
// A NodeTask owns one reference to each of its PyObject pointers; whoever
// pops it (with the GIL) takes them over. The queue itself never touches
// Python: it only moves pointers under its mutex.
//
// Order (PyTorch's CompareNodeTaskTime): shutdown tasks first, then wake-up
// tasks (no node), then the deeper reentrant level (an inner backward must
// finish before the outer one can go on), then the higher sequence_nr (the
// node created last runs first).
#pragma once
#include <Python.h>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <queue>
#include <vector>

struct RgNodeTask {
  PyObject* graph_task = nullptr;  // owned; nullptr only for shutdown tasks
  PyObject* node = nullptr;        // owned; nullptr for wake-up tasks
  PyObject* inputs = nullptr;      // owned list of gradients; nullptr for wake-up tasks
  int reentrant_depth = 0;
  uint64_t sequence_nr = 0;
  bool is_shutdown = false;
};

struct RgCompareNodeTask {
  bool operator()(const RgNodeTask& t1, const RgNodeTask& t2) const {
    if (t2.is_shutdown) return true;
    if (!t1.node || t1.is_shutdown) return false;
    if (!t2.node) return true;
    if (t1.reentrant_depth == t2.reentrant_depth) return t1.sequence_nr < t2.sequence_nr;
    return t1.reentrant_depth < t2.reentrant_depth;
  }
};

class RgReadyQueue {
 public:
  void push(const RgNodeTask& task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      heap_.push(task);
    }
    not_empty_.notify_one();
  }

  // Blocks until a task is available. Call without the GIL.
  RgNodeTask pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [this] { return !heap_.empty(); });
    RgNodeTask task = heap_.top();
    heap_.pop();
    return task;
  }

  // Non-blocking pop (for draining); returns false when empty.
  bool try_pop(RgNodeTask* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (heap_.empty()) return false;
    *out = heap_.top();
    heap_.pop();
    return true;
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return heap_.size();
  }

 private:
  std::priority_queue<RgNodeTask, std::vector<RgNodeTask>, RgCompareNodeTask> heap_;
  std::mutex mutex_;
  std::condition_variable not_empty_;
};

// The CPU ready queue of the calling thread (PyTorch's local_ready_queue for
// user threads), created on first use and destroyed with the thread.
static thread_local std::unique_ptr<RgReadyQueue> rg_tls_cpu_queue;

static inline RgReadyQueue* rg_thread_cpu_queue() {
  if (!rg_tls_cpu_queue) rg_tls_cpu_queue.reset(new RgReadyQueue());
  return rg_tls_cpu_queue.get();
}

// After fork(), in the child: a worker of the parent may have held this
// thread's queue mutex when the process forked. Leak the old queue (its
// mutex may stay locked forever) and start with a fresh one on next use.
static inline void rg_reset_thread_cpu_queue() {
  (void)rg_tls_cpu_queue.release();
}

// GraphTask's mutex (PyTorch's GraphTask::mutex_). The GIL alone does not
// serialise the bookkeeping of a graph task: NumPy releases it inside large
// additions (InputBuffer accumulation), and another thread may then run the
// same task's bookkeeping. Take it with try_lock() holding the GIL, and fall
// back to lock() only after releasing the GIL (or the holder, which needs the
// GIL back to finish, deadlocks with us).
class RgMutex {
 public:
  bool try_lock() { return mutex_.try_lock(); }
  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }
 private:
  std::mutex mutex_;
};

// A one-shot completion flag that threads wait on without the GIL.
class RgEvent {
 public:
  void set() {
    { std::lock_guard<std::mutex> lock(mutex_); done_ = true; }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return done_; });
  }
  bool is_set() {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
 private:
  bool done_ = false;
  std::mutex mutex_;
  std::condition_variable cv_;
};
