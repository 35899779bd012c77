#pragma once

#include <c10/core/Stream.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace neuronsim {

// One op's device work, queued on a stream.
struct Work {
  std::string op;         // overload name, for errors and statistics
  std::string fusion_key; // the op's compiled signature when it may be fused, else empty
  std::function<void()> run;
  bool marker = false;    // an event's record or wait, not an op
};

// The point an event recorded in a stream: complete once everything queued before it has run.
class Marker {
 public:
  void complete();
  bool done() const;
  void wait() const;
  std::chrono::steady_clock::time_point when() const;  // valid once done

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable completed_;
  bool done_ = false;
  std::chrono::steady_clock::time_point when_{};
};

struct ExecutorStats {
  std::int64_t queued = 0;           // ops run asynchronously (each op of a fused chain counts)
  std::int64_t executables = 0;      // executables run: single ops and fused chains
  std::int64_t fused_ops = 0;        // ops that ran inside a fused chain of two or more
  std::int64_t fused_chains = 0;     // fused chains run
  std::int64_t waits = 0;            // synchronizing calls that found work pending
  std::int64_t late_errors = 0;      // op errors raised at a later synchronizing call
};

// Compiles a fused chain from its members' signatures before it is queued (the engine's compile
// cache: one entry keyed by the chain).
using ChainCompiler = std::function<void(const std::vector<std::string>& member_keys)>;

// The device's execution queues, as TorchNeuron runs eager ops: every stream of every device has
// a FIFO drained by its own thread, so an op returns once queued and runs later, in stream order.
// Consecutive fusible ops on a stream are held open as one chain, queued as one executable when
// a non-fusible op, an event, a synchronizing call or the size limit ends it (NEURONSIM_FUSION).
// An error inside an op is kept and raised at the next synchronizing call on its device, naming
// the op and its place in the stream. Anything that touches device memory from the host first
// waits for the device (drain), so the host never reads or writes memory a queued op still uses.
// Queued work holds its operands, so their blocks go back to the allocator only after the work
// ran; finished work is released on a calling thread, never on a queue's thread (releasing a
// tensor may need the Python GIL, which a caller waiting on the queue may hold).
class Executor {
 public:
  static Executor& instance();
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Most ops in one fused chain.
  static constexpr std::size_t kMaxChain = 32;

  void enqueue(c10::Stream stream, Work work);
  // Waits until everything queued on the stream (or on every stream of the device; -1: of every
  // device) has run; then raises the first error an op of that device left, if any.
  void synchronize_stream(c10::Stream stream);
  void synchronize_device(c10::DeviceIndex device);
  // Raises (once) the first error an op of the device left, and the warnings ops raised.
  void raise_errors(c10::DeviceIndex device);
  // Whether the stream has run everything queued on it (never raises).
  bool query_stream(c10::Stream stream);
  // An event: the marker completes when the stream has run what was queued before it.
  std::shared_ptr<Marker> record(c10::Stream stream);
  // The stream runs nothing queued after this until `marker` completes.
  void wait(c10::Stream stream, std::shared_ptr<Marker> marker);
  // Ops (and event markers) queued on the device and not yet run.
  std::int64_t pending(c10::DeviceIndex device);

  // Releases the operands of work that has run (done on calling threads: see above).
  void release_finished();

  // Returns the compiler it replaces.
  ChainCompiler set_chain_compiler(ChainCompiler compiler);
  ExecutorStats stats() const;
  void reset_stats();

 private:
  Executor();
  struct Batch;
  struct Queue;
  struct DeviceState;

  DeviceState& device(c10::DeviceIndex index);
  Queue& queue(c10::Stream stream);
  void close_chain(Queue& queue, std::unique_lock<std::mutex>& lock);
  void push(Queue& queue, Batch batch, std::unique_lock<std::mutex>& lock);
  // An event's record or wait: queued like an op, counted as none.
  void push_marker(Queue& queue, std::function<void()> run, std::unique_lock<std::mutex>& lock);
  void drain_queue(Queue& queue);
  void raise_kept_error(DeviceState& state);
  void serve(Queue* queue);

  mutable std::mutex mutex_;  // the chain compiler
  std::vector<std::unique_ptr<DeviceState>> devices_;
  ChainCompiler compile_chain_;
  // ExecutorStats's counters, each bumped without a lock on the queues' hot paths.
  struct Counters {
    std::atomic<std::int64_t> queued{0}, executables{0}, fused_ops{0}, fused_chains{0}, waits{0},
        late_errors{0};
  } counters_;
  std::atomic<std::int64_t> finished_{0};  // executables run and not yet released
};

// Before the host reads or writes device memory: waits for the device's queued work and raises an
// error it left. Cheap when nothing is queued.
void drain(c10::DeviceIndex device);

// NEURONSIM_LAUNCH_BLOCKING, settable for tests: whether device ops run at their call.
bool launch_blocking();
void set_launch_blocking(bool blocking);
bool fusion_enabled();
void set_fusion_enabled(bool enabled);

}  // namespace neuronsim
