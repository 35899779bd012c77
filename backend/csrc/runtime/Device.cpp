#include "runtime/Device.h"

#include "runtime/Config.h"

#include <c10/util/Exception.h>

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace neuronsim {
namespace {

thread_local c10::DeviceIndex tls_current_device = 0;
std::atomic<bool> g_initialized{false};
std::atomic<bool> g_bad_fork{false};

void on_fork_child() {
  if (g_initialized.load()) g_bad_fork.store(true);
}

}  // namespace

c10::DeviceIndex device_count() noexcept {
  try {
    return static_cast<c10::DeviceIndex>(config().device_count);
  } catch (...) {
    return 0;
  }
}

void check_device_index(c10::DeviceIndex index) {
  const auto count = static_cast<c10::DeviceIndex>(config().device_count);
  TORCH_CHECK(index >= 0 && index < count, "Invalid device index ", static_cast<int>(index),
              " for neuron: torch_neuronsim emulates ", static_cast<int>(count),
              " device(s), neuron:0 to neuron:", static_cast<int>(count) - 1,
              ". Use a valid index or set NEURONSIM_DEVICES to emulate more devices.");
}

c10::DeviceIndex current_device() {
  return tls_current_device;
}

void set_device(c10::DeviceIndex index) {
  check_device_index(index);
  ensure_initialized();
  tls_current_device = index;
}

c10::DeviceIndex exchange_device(c10::DeviceIndex index) {
  const auto previous = tls_current_device;
  if (index != previous) set_device(index);
  return previous;
}

void ensure_initialized() {
  TORCH_CHECK(!g_bad_fork.load(),
              "Cannot use the neuron device in a fork()ed child process: the parent had already "
              "initialised it, and device memory is not shared with children. Use the 'spawn' "
              "start method (multiprocessing.set_start_method('spawn') or "
              "torch.multiprocessing.spawn), or initialise the device only in the children.");
  if (g_initialized.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    (void)config();  // validate the environment before anything uses it
    pthread_atfork(nullptr, nullptr, &on_fork_child);
    g_initialized.store(true, std::memory_order_release);
  });
}

bool is_initialized() noexcept {
  return g_initialized.load();
}
bool in_bad_fork() noexcept {
  return g_bad_fork.load();
}

}  // namespace neuronsim
