// The kernels' thread pool, see parallel.hpp. Workers spin briefly on the job counter before they
// sleep, so the many small jobs of a forward (one per matmul) do not each pay a wake-up.
#include "attention/parallel.hpp"

#include <algorithm>
#include <string>

#include "attention/error.hpp"

#if ATTN_THREADS
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace attn {

#if ATTN_THREADS
namespace {

// Polls of the counter before a worker or the caller sleeps: long enough to span the serial steps
// between a generation step's products (a layer's attention, norms), so that a worker is still
// awake for the next one — 2^17 polls decode 1.06× faster on 2 threads in Chromium than 2^14 did.
constexpr int kSpins = 1 << 17;

class Pool {
 public:
  ~Pool() { resize(1); }

  std::size_t size() const { return workers_.size() + 1; }

  void resize(std::size_t count) {
    if (!workers_.empty()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        generation_.fetch_add(1);
      }
      wake_.notify_all();
      for (auto& worker : workers_) worker.join();
      workers_.clear();
      stopping_ = false;
    }
    // A worker waits for the job after this one: read now, not when the thread first runs (a job
    // posted in between would be missed).
    const std::size_t now = generation_.load();
    for (std::size_t i = 1; i < count; ++i) {
      workers_.emplace_back([this, i, now] { work(i, now); });
    }
  }

  void run(std::size_t parts, std::size_t items,
           const std::function<void(std::size_t, std::size_t)>& body) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body_ = &body;
      items_ = items;
      parts_ = parts;
      remaining_.store(parts - 1);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    run_part(0, body);
    for (int spin = 0; spin < kSpins && remaining_.load() != 0; ++spin) {
    }
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return remaining_.load() == 0; });
    body_ = nullptr;
  }

 private:
  void run_part(std::size_t part, const std::function<void(std::size_t, std::size_t)>& body) {
    const std::size_t begin = items_ * part / parts_, end = items_ * (part + 1) / parts_;
    inside_ = true;
    body(begin, end);
    inside_ = false;
  }

  void work(std::size_t index, std::size_t seen) {
    for (;;) {
      for (int spin = 0; spin < kSpins && generation_.load() == seen; ++spin) {
      }
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
      seen = generation_.load();
      if (stopping_) return;
      const auto* body = body_;
      const bool mine = index < parts_;
      lock.unlock();
      if (!mine) continue;
      run_part(index, *body);
      if (remaining_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> done_lock(mutex_);
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<std::size_t> generation_{0}, remaining_{0};
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t items_ = 0, parts_ = 1;
  bool stopping_ = false;

 public:
  static thread_local bool inside_;  // a body is running on this thread
};

thread_local bool Pool::inside_ = false;

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

std::size_t thread_count() {
  return pool().size();
}

std::size_t max_threads() {
  return kMaxThreads;
}

void set_thread_count(std::size_t count) {
  if (count == 0 || count > max_threads()) {
    throw Error("threads must be from 1 to " + std::to_string(max_threads()) + ", got " +
                std::to_string(count));
  }
  if (Pool::inside_) throw Error("set_thread_count cannot be called from a parallel body");
  if (count != pool().size()) pool().resize(count);
}

void parallel_for(std::size_t items, std::size_t min_items,
                  const std::function<void(std::size_t begin, std::size_t end)>& body) {
  const std::size_t parts = std::min(
      pool().size(), std::max<std::size_t>(1, items / std::max<std::size_t>(min_items, 1)));
  if (parts <= 1 || Pool::inside_) {
    if (items > 0) body(0, items);
    return;
  }
  pool().run(parts, items, body);
}

#else  // one thread: no pool

std::size_t thread_count() {
  return 1;
}

std::size_t max_threads() {
  return 1;
}

void set_thread_count(std::size_t count) {
  if (count != 1) {
    throw Error("this build of the core has no threads: threads must be 1, got " +
                std::to_string(count));
  }
}

void parallel_for(std::size_t items, std::size_t,
                  const std::function<void(std::size_t begin, std::size_t end)>& body) {
  if (items > 0) body(0, items);
}

#endif

}  // namespace attn
