// The dispatcher capture (dispatch_capture.py) as a RecordFunction observer: the same account of
// which aten ops a case ran on the device, and how the dispatcher ran each, at about a twentieth
// of a Python TorchDispatchMode's cost per op. Built by native_capture.py against the installed
// torch on first use; where it cannot be built or loaded, the Python mode serves.
//
// RecordFunction sees every call that enters the dispatcher from the top (not a redispatch), on
// every thread the caller's thread-local state reaches (the autograd engine's device thread
// too). Each call with a device tensor (or device=) among its inputs is classified per overload,
// afresh after each clear() (a case may register kernels: torch.library), by the kernel the
// dispatcher has for PrivateUse1 or AutogradPrivateUse1 (a backend's autograd kernel is its own):
//   device: counted, and nothing the kernel calls itself is (a kernel's inside is the backend's
//     business), except a copy of a device tensor's data to the host: a kernel that makes one
//     computed on the host (TorchNeuron's "Host-only") and its call is counted as such;
//   fallback: counted, and nothing the kernel calls itself is (its copies are the fallback's);
//   composite (explicit): counted, its parts counted too, as the Python mode follows them;
//   view (a composite that aliases): counted, its parts not (they compute nothing);
//   implicit composite (CompositeImplicitAutograd): not counted, its parts are; the Python mode,
//     below autograd, only ever sees the parts.
// Tensors with the Python key (fake tensors while torch.compile traces, other subclasses) are
// not the device's, and a call made while a Python dispatch mode is on (FakeTensorMode) is the
// mode's: what the mode runs on the device comes back through the dispatcher and is seen then.
// The Python capture ignores compile internals likewise.

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/library.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

namespace {

enum class Kind { kDevice, kFallback, kComposite, kView, kImplicit, kUnknown };

// How a call moves data from a device tensor to the host, where it does: the copies every
// device-to-host path of the dispatcher ends in (Tensor.cpu(), .to("cpu"), the CPU fallback's
// _to_cpu). A scalar read (item(), _local_scalar_dense, a one-element copy) sizes or parametrises
// what the device computes and computes nothing itself: not a round trip here.
enum class Transfer {
  kNone,
  kIntoFirst,   // copy_(self, src): src's data into self
  kFromFirst,   // _copy_from(self, dst), _copy_from_and_resize(self, dst): self's data into dst
  kToDevice3,   // _to_copy(self, dtype, layout, device, ...): self's data to `device`
};

Transfer transfer_of(const std::string& name) {
  if (name == "aten::copy_") return Transfer::kIntoFirst;
  if (name == "aten::_copy_from" || name == "aten::_copy_from_and_resize")
    return Transfer::kFromFirst;
  if (name == "aten::_to_copy") return Transfer::kToDevice3;
  return Transfer::kNone;
}

struct Overload {
  Overload(std::string full, c10::OperatorName operator_name)
      : name(std::move(full)),
        op(std::move(operator_name)),
        transfer(transfer_of(op.name)),
        moves_data(transfer != Transfer::kNone || op.name.rfind("c10d::", 0) == 0) {}

  const std::string name;  // "aten::add.Tensor", as OpOverload.name() spells it
  const c10::OperatorName op;
  const Transfer transfer;
  // A copy moves data where it is asked to, a collective (c10d) between processes through the
  // process group's transport, which may stage through the host: neither kernel is host-only.
  const bool moves_data;
  std::atomic<Kind> kind{Kind::kUnknown};
  std::atomic<std::uint64_t> classified_in{0};  // the generation its kind is from
  std::atomic<std::int64_t> count{0};
  std::atomic<std::int64_t> on_host{0};  // of count, the calls that copied device data to the host
};

// Bumped by clear(): every overload is classified again in the next generation.
std::atomic<std::uint64_t> generation{1};

// Every overload seen, for the process's life: a registry that only grows, so pointers to its
// entries stay valid and counting needs no lock.
std::mutex registry_mutex;
std::unordered_map<std::string, std::unique_ptr<Overload>> registry;

Kind classify(const c10::OperatorHandle& op) {
  using c10::DispatchKey;
  if (op.hasKernelForDispatchKey(DispatchKey::PrivateUse1) ||
      op.hasKernelForDispatchKey(DispatchKey::AutogradPrivateUse1)) {
    return Kind::kDevice;
  }
  const bool explicit_composite =
      op.hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutogradNonFunctional) ||
      op.hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutograd);
  if (!explicit_composite) {
    return op.hasKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd) ? Kind::kImplicit
                                                                               : Kind::kFallback;
  }
  // A view: its arguments alias the result and none is written (OpOverload.is_view).
  bool aliases = false, writes = false;
  for (const c10::Argument& argument : op.schema().arguments()) {
    if (const c10::AliasInfo* alias = argument.alias_info()) {
      aliases = true;
      writes = writes || alias->isWrite();
    }
  }
  return aliases && !writes ? Kind::kView : Kind::kComposite;
}

// The overload's kind in this generation: classified again when a clear() came since.
Kind kind_of(Overload& entry) {
  const std::uint64_t now = generation.load(std::memory_order_relaxed);
  if (entry.classified_in.load(std::memory_order_acquire) != now) {
    const auto op = c10::Dispatcher::singleton().findOp(entry.op);
    entry.kind.store(op ? classify(*op) : Kind::kUnknown, std::memory_order_relaxed);
    entry.classified_in.store(now, std::memory_order_release);
  }
  return entry.kind.load(std::memory_order_relaxed);
}

Overload* lookup(const char* name, const char* overload) {
  std::string full = name;
  if (overload != nullptr && *overload != '\0') full.append(".").append(overload);
  std::lock_guard lock(registry_mutex);
  auto found = registry.find(full);
  if (found != registry.end()) return found->second.get();
  auto entry = std::make_unique<Overload>(
      full, c10::OperatorName(name, overload != nullptr ? overload : ""));
  return registry.emplace(std::move(full), std::move(entry)).first->second.get();
}

// The overload of a call, by the schema's name pointers (stable while the op is registered),
// cached per thread; checked against the name, since an op registered later may reuse them.
Overload* overload_of(const at::RecordFunction& fn) {
  struct Cached {
    const char* overload;
    Overload* entry;
  };
  thread_local std::unordered_map<const char*, Cached> cache;
  const char* name = fn.name();
  const char* overload = fn.overload_name();
  auto found = cache.find(name);
  if (found != cache.end() && found->second.overload == overload &&
      found->second.entry->name.compare(0, std::strlen(name), name) == 0) {
    return found->second.entry;
  }
  Overload* entry = lookup(name, overload);
  cache[name] = Cached{overload, entry};
  return entry;
}

bool on_device(const at::Tensor& tensor) {
  return tensor.defined() && tensor.device().type() == c10::DeviceType::PrivateUse1 &&
         !tensor.key_set().has(c10::DispatchKey::Python);
}

bool on_device(c10::ArrayRef<const c10::IValue> inputs) {
  for (const c10::IValue& value : inputs) {
    if (value.isTensor()) {
      if (on_device(value.toTensor())) return true;
    } else if (value.isList()) {
      for (const c10::IValue& item : value.toListRef()) {
        if (item.isTensor() && on_device(item.toTensor())) return true;
      }
    } else if (value.isDevice() && value.toDevice().type() == c10::DeviceType::PrivateUse1) {
      return true;
    }
  }
  return false;
}

bool on_host(const c10::IValue& value) {
  return value.isTensor() && value.toTensor().defined() && value.toTensor().device().is_cpu();
}

bool on_host_device(const c10::IValue& value) {
  return value.isDevice() && value.toDevice().is_cpu();
}

// A device tensor of more than one element: copied to the host, its data is computed on there (a
// single element is a scalar read, as item() is, sizing or parametrising what the device computes).
bool device_data(const c10::IValue& value) {
  return value.isTensor() && on_device(value.toTensor()) && value.toTensor().numel() > 1;
}

// Whether the call copies a device tensor's data to the host.
bool to_host(const Overload& overload, c10::ArrayRef<const c10::IValue> in) {
  switch (overload.transfer) {
    case Transfer::kNone:
      return false;
    case Transfer::kIntoFirst:
      return in.size() >= 2 && on_host(in[0]) && device_data(in[1]);
    case Transfer::kFromFirst:
      return in.size() >= 2 && device_data(in[0]) && on_host(in[1]);
    case Transfer::kToDevice3:
      return in.size() >= 4 && device_data(in[0]) && on_host_device(in[3]);
  }
  return false;
}

// The kernel this thread is inside (a device or fallback kernel's calls are not the case's to
// count), and whether a device kernel's call copied device data to the host yet.
struct InsideKernel : at::ObserverContext {
  Overload* overload;
  bool device;
  bool on_host = false;
  InsideKernel(Overload* o, bool d) : overload(o), device(d) {}
};
thread_local InsideKernel* inside_kernel = nullptr;
thread_local at::CallbackHandle callback = 0;  // this thread's observer, while active

std::unique_ptr<at::ObserverContext> enter_kernel(Overload* overload, bool device) {
  overload->count.fetch_add(1, std::memory_order_relaxed);
  auto context = std::make_unique<InsideKernel>(overload, device);
  inside_kernel = context.get();
  return context;
}

// A call inside a kernel: a device kernel's first copy to the host makes that call host-only.
void seen_inside(const at::RecordFunction& fn) {
  InsideKernel& kernel = *inside_kernel;
  if (!kernel.device || kernel.on_host) return;
  const Overload* overload = overload_of(fn);
  if (overload->transfer != Transfer::kNone && to_host(*overload, fn.inputs())) {
    kernel.on_host = true;
    kernel.overload->on_host.fetch_add(1, std::memory_order_relaxed);
  }
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (inside_kernel != nullptr) {
    seen_inside(fn);
    return nullptr;
  }
  if (c10::impl::dispatch_mode_enabled() || !on_device(fn.inputs())) return nullptr;
  Overload* overload = overload_of(fn);
  switch (kind_of(*overload)) {
    case Kind::kDevice:
      return enter_kernel(overload, !overload->moves_data);
    case Kind::kFallback:
    case Kind::kView:
      return enter_kernel(overload, false);
    case Kind::kComposite:
      overload->count.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    case Kind::kImplicit:
    case Kind::kUnknown:
      return nullptr;
  }
  return nullptr;
}

void on_exit(const at::RecordFunction&, at::ObserverContext* context) {
  if (context != nullptr) inside_kernel = nullptr;
}

// Starts counting on this thread (and the threads its state reaches); false if it already was.
bool activate() {
  if (callback != 0) return false;
  callback = at::addThreadLocalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                            .needsInputs(true)
                                            .scopes({at::RecordScope::FUNCTION}));
  return true;
}

// Stops counting on this thread; false if it was not.
bool deactivate() {
  if (callback == 0) return false;
  at::removeCallback(callback);
  callback = 0;
  return true;
}

using Counts = c10::Dict<std::string, std::int64_t>;

// The calls counted since clear(), by overload: (native, fallback, composite, host-only).
std::tuple<Counts, Counts, Counts, Counts> counts() {
  Counts native, fallback, composite, host_only;
  std::lock_guard lock(registry_mutex);
  for (const auto& [name, entry] : registry) {
    const std::int64_t calls = entry->count.load(std::memory_order_relaxed);
    if (calls == 0) continue;
    const Kind kind = entry->kind.load(std::memory_order_relaxed);
    if (kind == Kind::kDevice) {
      const std::int64_t hosted = entry->on_host.load(std::memory_order_relaxed);
      if (hosted > 0) host_only.insert(name, hosted);
      if (calls > hosted) native.insert(name, calls - hosted);
    } else {
      (kind == Kind::kFallback ? fallback : composite).insert(name, calls);
    }
  }
  return {native, fallback, composite, host_only};
}

void clear() {
  std::lock_guard lock(registry_mutex);
  for (auto& [name, entry] : registry) {
    entry->count.store(0, std::memory_order_relaxed);
    entry->on_host.store(0, std::memory_order_relaxed);
  }
  generation.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

TORCH_LIBRARY(conform_capture, m) {
  m.def("activate() -> bool", &activate);
  m.def("deactivate() -> bool", &deactivate);
  m.def("counts() -> (Dict(str, int), Dict(str, int), Dict(str, int), Dict(str, int))", &counts);
  m.def("clear() -> ()", &clear);
}
