#include "backends/cpu/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

// OpenBLAS's own thread count follows ours, so "one thread" means one thread for GEMM too.
extern "C" void openblas_set_num_threads(int);

namespace ember::cpu {
namespace {

int default_threads() {
  if (const char* env = std::getenv("EMBER_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int> g_threads{default_threads()};

// How long a worker keeps polling for the next region after finishing one, and a caller for its workers to
// finish, before sleeping on a condition variable. Waking a sleeping thread costs tens of microseconds on this
// VM, as much as one thread's half of a batch-256 MLP layer, and a model's ops come back to back, so a short
// poll catches the next region. Bounded, so an idle process stops using the CPU at once. EMBER_POOL_SPIN_US
// sets it (0: always sleep).
std::chrono::microseconds spin_time() {
  if (const char* env = std::getenv("EMBER_POOL_SPIN_US")) {
    const int us = std::atoi(env);
    if (us >= 0) return std::chrono::microseconds(us);
  }
  return std::chrono::microseconds(50);
}
const std::chrono::microseconds g_spin = spin_time();

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls done() for up to g_spin; true once it held.
template <class Done>
bool spin_until(Done&& done) {
  if (g_spin.count() == 0) return done();
  const auto until = std::chrono::steady_clock::now() + g_spin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

// Workers wait for a job generation counter to change, run their chunk, and count down.
class Pool {
 public:
  static Pool& get() {
    static Pool* p = new Pool();  // leaked on purpose: workers must outlive static destruction
    return *p;
  }

  void run(int parts, const std::function<void(int)>& job) {
    std::unique_lock run_lock(run_mu_);  // one parallel region at a time; nested regions run inline
    ensure_workers(parts - 1);
    {
      std::lock_guard lock(mu_);
      job_ = &job;
      parts_ = parts;
      next_part_ = 1;
      pending_.store(parts - 1, std::memory_order_relaxed);
      error_ = nullptr;
      ++generation_;
      published_.store(generation_, std::memory_order_release);
    }
    cv_.notify_all();
    run_part(0);
    // Parts no worker has claimed yet run here too: a worker that slept (waking one costs tens of microseconds on a
    // shared VM, more beside a busy process) would otherwise leave this thread waiting for it to start.
    for (;;) {
      int part;
      {
        std::lock_guard lock(mu_);
        if (next_part_ >= parts_) break;
        part = next_part_++;
      }
      run_part(part);
      std::lock_guard lock(mu_);
      pending_.fetch_sub(1, std::memory_order_release);
    }
    spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; });
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_relaxed) == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

  bool busy_on_this_thread() const { return in_worker_; }

 private:
  void ensure_workers(int n) {
    while (static_cast<int>(workers_.size()) < n) {
      workers_.emplace_back([this] { loop(); });
      workers_.back().detach();
    }
  }

  void run_part(int part) {
    try {
      (*job_)(part);
    } catch (...) {
      std::lock_guard lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void loop() {
    in_worker_ = true;
    uint64_t seen = 0;
    for (;;) {
      // A worker that polls sees the next region without being woken (cv_ is notified all the same).
      spin_until([&] { return published_.load(std::memory_order_acquire) != seen; });
      int part;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        // Every part of this region already taken (by the caller, or by other workers): back to polling for the next
        // region, rather than sleeping until a notify wakes it.
        if (next_part_ >= parts_) {
          seen = generation_;
          continue;
        }
        part = next_part_++;
        if (next_part_ >= parts_) seen = generation_;
      }
      run_part(part);
      std::lock_guard lock(mu_);
      if (pending_.fetch_sub(1, std::memory_order_release) == 1) done_cv_.notify_one();
    }
  }

  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* job_ = nullptr;
  int parts_ = 0, next_part_ = 0;
  std::atomic<int> pending_{0};  // written under mu_; read without it by the caller's poll
  uint64_t generation_ = 0;
  std::atomic<uint64_t> published_{0};  // generation_, for the workers' poll
  std::exception_ptr error_;
  static thread_local bool in_worker_;
};
thread_local bool Pool::in_worker_ = false;

thread_local bool t_in_parallel = false;

}  // namespace

int num_threads() { return g_threads.load(std::memory_order_relaxed); }
void set_num_threads(int n) {
  g_threads.store(std::max(1, n), std::memory_order_relaxed);
  openblas_set_num_threads(std::max(1, n));
}

void parallel_for_split(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int threads = num_threads();
  const int64_t parts64 = std::min<int64_t>(threads, (n + grain - 1) / std::max<int64_t>(grain, 1));
  if (parts64 <= 1 || t_in_parallel) {
    fn(0, n);
    return;
  }
  const int parts = static_cast<int>(parts64);
  const int64_t chunk = (n + parts - 1) / parts;
  Pool::get().run(parts, [&](int p) {
    struct Flag {  // reset even when fn throws, or this thread would run every later region inline
      Flag() { t_in_parallel = true; }
      ~Flag() { t_in_parallel = false; }
    } flag;
    const int64_t b = p * chunk, e = std::min(n, b + chunk);
    if (b < e) fn(b, e);
  });
}

}  // namespace ember::cpu
