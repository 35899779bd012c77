#include "runtime/Executor.h"

#include "runtime/Config.h"
#include "runtime/Errors.h"
#include "runtime/Stream.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/Exception.h>

#include <pthread.h>

#include <array>
#include <atomic>
#include <deque>
#include <optional>
#include <thread>
#include <utility>

namespace neuronsim {
namespace {

std::atomic<bool>& blocking_switch() {
  static std::atomic<bool> blocking{config().launch_blocking};
  return blocking;
}

std::atomic<bool>& fusion_switch() {
  static std::atomic<bool> fusion{config().fusion};
  return fusion;
}

// Set in a fork()ed child: the queues' threads do not exist there, and their locks may be held
// by threads that vanished. The child never uses the device (Device.cpp refuses it), and must
// not wait on those threads when it exits.
std::atomic<bool> g_forked_child{false};

constexpr std::size_t kStreamsPerDevice = 1 + 2 * kStreamsPerPriority;

// Set on the queues' threads. A kernel that calls device ops itself (one that makes its result on
// a device argument) runs them inline, as part of the op it belongs to: queued behind it, or
// waited for by it, they would wait for the thread that is running them.
thread_local bool tls_on_queue_thread = false;

}  // namespace

void Marker::complete() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    when_ = std::chrono::steady_clock::now();
  }
  completed_.notify_all();
}

bool Marker::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

void Marker::wait() const {
  std::unique_lock lock(mutex_);
  completed_.wait(lock, [&] { return done_; });
}

std::chrono::steady_clock::time_point Marker::when() const {
  std::lock_guard lock(mutex_);
  return when_;
}

// What a queue runs at once: one op, a fused chain, or an event's marker.
struct Executor::Batch {
  std::vector<Work> ops;
  std::uint64_t first = 0;  // the first op's number among those queued on its stream, from 1
};

// An error an op raised on a queue, kept until a synchronizing call raises it.
struct KeptError {
  std::exception_ptr error;
  std::string op;
  c10::StreamId stream = 0;
  std::uint64_t position = 0;  // the op's number among those queued on its stream, from 1
  std::size_t chain = 1;       // ops in the executable it ran in
};

struct Executor::Queue {
  c10::Stream stream;
  DeviceState* device = nullptr;
  std::mutex mutex;
  std::condition_variable changed;      // work queued, work done
  std::deque<Batch> ready;         // executables in stream order: one op or a fused chain
  Batch open;                      // the fusible ops of the chain not yet closed
  std::uint64_t queued = 0;        // ops queued on the stream so far
  std::vector<Batch> finished;     // run; released by a calling thread
  bool stop = false;
  std::unique_ptr<std::thread> thread;
  explicit Queue(c10::Stream s) : stream(s) {}
};

struct Executor::DeviceState {
  std::mutex mutex;  // creating queues; the kept error and warnings
  std::array<std::unique_ptr<Queue>, kStreamsPerDevice> queues;
  std::atomic<std::int64_t> pending{0};  // ops queued (open chains included) and not yet run
  std::atomic<bool> noted{false};        // an error or a warning is kept
  std::optional<KeptError> error;
  std::vector<c10::Warning> warnings;  // raised by queued ops; re-raised at a synchronizing call
};

Executor& Executor::instance() {
  static Executor* const executor = [] {
    static Executor owned;
    pthread_atfork(nullptr, nullptr, [] { g_forked_child.store(true); });
    return &owned;
  }();
  return *executor;
}

Executor::~Executor() {
  if (g_forked_child.load()) {
    // The threads are gone: leave their handles (and any held lock) alone.
    for (auto& state : devices_) {
      for (auto& q : state->queues) {
        if (q) (void)q->thread.release();  // NOLINT: deliberately leaked, see above
      }
    }
    return;
  }
  for (auto& state : devices_) {
    for (auto& q : state->queues) {
      if (!q || !q->thread) continue;
      {
        std::lock_guard lock(q->mutex);
        q->stop = true;  // what is ready still runs; an open chain is dropped
      }
      q->changed.notify_all();
      q->thread->join();
    }
  }
}

Executor::Executor() {
  for (int i = 0; i < kMaxDevices; ++i) devices_.push_back(std::make_unique<DeviceState>());
}

Executor::DeviceState& Executor::device(c10::DeviceIndex index) {
  TORCH_CHECK(index >= 0 && index < kMaxDevices, "invalid neuron device index ", index);
  return *devices_[static_cast<std::size_t>(index)];
}

Executor::Queue& Executor::queue(c10::Stream stream) {
  DeviceState& state = device(stream.device_index());
  TORCH_CHECK(stream.id() >= 0 && static_cast<std::size_t>(stream.id()) < kStreamsPerDevice,
              "invalid neuron stream id ", stream.id());
  std::lock_guard lock(state.mutex);
  auto& slot = state.queues[static_cast<std::size_t>(stream.id())];
  if (!slot) {
    slot = std::make_unique<Queue>(stream);
    slot->device = &state;
  }
  return *slot;
}

void Executor::push(Queue& q, Batch batch, std::unique_lock<std::mutex>&) {
  if (!q.thread) q.thread = std::make_unique<std::thread>(&Executor::serve, this, &q);
  q.ready.push_back(std::move(batch));
  q.changed.notify_all();
}

void Executor::push_marker(Queue& q, std::function<void()> run,
                           std::unique_lock<std::mutex>& lock) {
  q.device->pending.fetch_add(1);
  Batch batch{{}, q.queued};
  batch.ops.push_back(Work{"event", "", std::move(run), true});
  push(q, std::move(batch), lock);
}

void Executor::close_chain(Queue& q, std::unique_lock<std::mutex>& lock) {
  if (q.open.ops.empty()) return;
  Batch chain = std::exchange(q.open, Batch{});
  if (chain.ops.size() > 1) {
    std::vector<std::string> keys;
    for (const Work& w : chain.ops) keys.push_back(w.fusion_key);
    ChainCompiler compile;
    {
      std::lock_guard compiler_lock(mutex_);
      compile = compile_chain_;
    }
    // Compiled as it is queued, as a launch compiles a new executable; a failure to compile the
    // chain leaves it queued unfused (the ops' own executables exist).
    if (compile) {
      try {
        compile(keys);
      } catch (const std::exception& e) {
        TORCH_WARN("neuron: compiling a fused chain of ", chain.ops.size(),
                   " ops failed; they run unfused: ", e.what());
      }
    }
  }
  push(q, std::move(chain), lock);
}

void Executor::enqueue(c10::Stream stream, Work work) {
  if (tls_on_queue_thread) {
    work.run();
    return;
  }
  release_finished();
  Queue& q = queue(stream);
  std::unique_lock lock(q.mutex);
  const std::uint64_t position = ++q.queued;
  q.device->pending.fetch_add(1);
  counters_.queued.fetch_add(1, std::memory_order_relaxed);
  if (fusion_enabled() && !work.fusion_key.empty()) {
    if (q.open.ops.empty()) q.open.first = position;
    q.open.ops.push_back(std::move(work));
    if (q.open.ops.size() >= kMaxChain) close_chain(q, lock);
    return;
  }
  close_chain(q, lock);
  Batch batch{{}, position};
  batch.ops.push_back(std::move(work));
  push(q, std::move(batch), lock);
}

void Executor::serve(Queue* q) {
  tls_on_queue_thread = true;
  const c10::DeviceGuard device_guard(q->stream.device());
  // The work is a CPU kernel below autograd: it records nothing for autograd.
  const c10::impl::ExcludeDispatchKeyGuard no_autograd(c10::autograd_dispatch_keyset);
  DeviceState& state = *q->device;
  struct KeepWarnings final : c10::WarningHandler {
    explicit KeepWarnings(DeviceState& s) : state(s) {}
    void process(const c10::Warning& warning) override {
      std::lock_guard lock(state.mutex);
      state.warnings.push_back(warning);
      state.noted.store(true);
    }
    DeviceState& state;
  } keep_warnings(state);
  const c10::WarningUtils::WarningHandlerGuard warnings_guard(&keep_warnings);
  for (;;) {
    std::unique_lock lock(q->mutex);
    q->changed.wait(lock, [&] { return !q->ready.empty() || q->stop; });
    if (q->ready.empty()) return;
    Batch& batch = q->ready.front();
    std::vector<Work>& executable = batch.ops;
    lock.unlock();
    for (std::size_t i = 0; i < executable.size(); ++i) {
      try {
        executable[i].run();
      } catch (...) {
        std::lock_guard error_lock(state.mutex);
        if (!state.error) {
          state.error = KeptError{std::current_exception(), executable[i].op, q->stream.id(),
                                  batch.first + i, executable.size()};
          state.noted.store(true);
        }
      }
    }
    const auto ran = static_cast<std::int64_t>(executable.size());
    if (!executable.front().marker) {
      counters_.executables.fetch_add(1, std::memory_order_relaxed);
      if (ran > 1) {
        counters_.fused_ops.fetch_add(ran, std::memory_order_relaxed);
        counters_.fused_chains.fetch_add(1, std::memory_order_relaxed);
      }
    }
    lock.lock();
    q->finished.push_back(std::move(batch));
    finished_.fetch_add(1, std::memory_order_release);
    q->ready.pop_front();
    state.pending.fetch_sub(ran);
    lock.unlock();
    q->changed.notify_all();
  }
}

void Executor::release_finished() {
  if (finished_.load(std::memory_order_acquire) == 0) return;  // the common case: nothing to scan
  std::vector<Batch> released;  // destroyed here, outside every lock
  for (auto& state : devices_) {
    for (auto& q : state->queues) {
      if (!q) continue;
      std::lock_guard lock(q->mutex);
      for (auto& done : q->finished) released.push_back(std::move(done));
      finished_.fetch_sub(static_cast<std::int64_t>(q->finished.size()), std::memory_order_relaxed);
      q->finished.clear();
    }
  }
}

void Executor::drain_queue(Queue& q) {
  std::unique_lock lock(q.mutex);
  close_chain(q, lock);
  if (q.ready.empty()) return;
  counters_.waits.fetch_add(1, std::memory_order_relaxed);
  q.changed.wait(lock, [&] { return q.ready.empty(); });
}

void Executor::raise_kept_error(DeviceState& state) {
  std::vector<c10::Warning> warnings;
  std::optional<KeptError> kept;
  {
    std::lock_guard lock(state.mutex);
    warnings.swap(state.warnings);
    kept.swap(state.error);
    state.noted.store(false);
  }
  for (const c10::Warning& warning : warnings) c10::warn(warning);
  if (!kept) return;
  counters_.late_errors.fetch_add(1, std::memory_order_relaxed);
  std::string where = "op " + std::to_string(kept->position) + " queued on stream " +
                      std::to_string(kept->stream);
  if (kept->chain > 1) where += ", in a fused chain of " + std::to_string(kept->chain) + " ops";
  rethrow_prefixed(kept->error, kept->op + " failed on the device (" + where +
                                    "); the error surfaced at a later synchronizing call. Set "
                                    "NEURONSIM_LAUNCH_BLOCKING=1 to raise it where the op is "
                                    "called: ");
}

void Executor::synchronize_stream(c10::Stream stream) {
  if (tls_on_queue_thread) return;  // inside an op: what it waits for ran before it
  Queue& q = queue(stream);
  drain_queue(q);
  release_finished();
  raise_kept_error(*q.device);
}

void Executor::synchronize_device(c10::DeviceIndex index) {
  if (tls_on_queue_thread) return;  // inside an op: what it waits for ran before it
  if (index < 0) {
    for (c10::DeviceIndex i = 0; i < kMaxDevices; ++i) {
      if (pending(i) > 0 || device(i).noted.load()) synchronize_device(i);
    }
    return;
  }
  DeviceState& state = device(index);
  if (state.pending.load() == 0 && !state.noted.load()) {
    release_finished();
    return;
  }
  for (std::size_t id = 0; id < kStreamsPerDevice; ++id) {
    Queue* q = nullptr;
    {
      std::lock_guard lock(state.mutex);
      q = state.queues[id].get();
    }
    if (q != nullptr) drain_queue(*q);
  }
  release_finished();
  raise_kept_error(state);
}

void Executor::raise_errors(c10::DeviceIndex index) {
  raise_kept_error(device(index));
}

bool Executor::query_stream(c10::Stream stream) {
  Queue& q = queue(stream);
  std::unique_lock lock(q.mutex);
  close_chain(q, lock);  // a chain held open would never finish otherwise
  return q.ready.empty();
}

std::shared_ptr<Marker> Executor::record(c10::Stream stream) {
  auto marker = std::make_shared<Marker>();
  Queue& q = queue(stream);
  std::unique_lock lock(q.mutex);
  close_chain(q, lock);
  if (q.ready.empty()) {
    marker->complete();
  } else {
    push_marker(q, [marker] { marker->complete(); }, lock);
  }
  return marker;
}

void Executor::wait(c10::Stream stream, std::shared_ptr<Marker> marker) {
  if (marker == nullptr || marker->done()) return;
  Queue& q = queue(stream);
  std::unique_lock lock(q.mutex);
  close_chain(q, lock);
  push_marker(q, [marker] { marker->wait(); }, lock);
}

std::int64_t Executor::pending(c10::DeviceIndex index) {
  return device(index).pending.load();
}

ChainCompiler Executor::set_chain_compiler(ChainCompiler compiler) {
  std::lock_guard lock(mutex_);
  return std::exchange(compile_chain_, std::move(compiler));
}

ExecutorStats Executor::stats() const {
  const auto read = [](const std::atomic<std::int64_t>& c) {
    return c.load(std::memory_order_relaxed);
  };
  return {read(counters_.queued),      read(counters_.executables), read(counters_.fused_ops),
          read(counters_.fused_chains), read(counters_.waits),       read(counters_.late_errors)};
}

void Executor::reset_stats() {
  for (auto* c : {&counters_.queued, &counters_.executables, &counters_.fused_ops,
                  &counters_.fused_chains, &counters_.waits, &counters_.late_errors}) {
    c->store(0, std::memory_order_relaxed);
  }
}

void drain(c10::DeviceIndex device) {
  Executor::instance().synchronize_device(device);
}

bool launch_blocking() {
  return blocking_switch().load(std::memory_order_relaxed);
}

void set_launch_blocking(bool blocking) {
  if (blocking) Executor::instance().synchronize_device(-1);
  blocking_switch().store(blocking);
}

bool fusion_enabled() {
  return fusion_switch().load(std::memory_order_relaxed);
}

void set_fusion_enabled(bool enabled) {
  fusion_switch().store(enabled);
}

}  // namespace neuronsim
