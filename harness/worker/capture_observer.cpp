// The dispatcher capture (dispatch_capture.py) as a RecordFunction observer: the same account of
// which aten ops a case ran on the device, and how the dispatcher ran each, at about a twentieth
// of a Python TorchDispatchMode's cost per op. Built by native_capture.py against the installed
// torch on first use; where it cannot be built or loaded, the Python mode serves.
//
// RecordFunction sees every call that enters the dispatcher from the top (not a redispatch), on
// every thread the caller's thread-local state reaches (the autograd engine's device thread
// too). Each call with a device tensor (or device=) among its inputs is classified once per
// overload by the kernel the dispatcher has for PrivateUse1:
//   device, fallback: counted, and nothing the kernel calls itself is (a kernel's inside is the
//     backend's business, as the Python mode, popped while the kernel runs, does not see it);
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

struct Overload {
  std::string name;  // "aten::add.Tensor", as OpOverload.name() spells it
  Kind kind;
  std::atomic<std::int64_t> count{0};
};

// Every overload seen, for the process's life: a registry that only grows, so pointers to its
// entries stay valid and counting needs no lock.
std::mutex registry_mutex;
std::unordered_map<std::string, std::unique_ptr<Overload>> registry;

Kind classify(const c10::OperatorHandle& op) {
  using c10::DispatchKey;
  if (op.hasKernelForDispatchKey(DispatchKey::PrivateUse1)) return Kind::kDevice;
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

Overload* lookup(const char* name, const char* overload) {
  std::string full = name;
  if (overload != nullptr && *overload != '\0') full.append(".").append(overload);
  std::lock_guard lock(registry_mutex);
  auto found = registry.find(full);
  if (found != registry.end()) return found->second.get();
  Kind kind = Kind::kUnknown;
  if (auto op = c10::Dispatcher::singleton().findOp(
          c10::OperatorName(name, overload != nullptr ? overload : ""))) {
    kind = classify(*op);
  }
  auto entry = std::make_unique<Overload>();
  entry->name = full;
  entry->kind = kind;
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

// Calls inside a device or fallback kernel on this thread: not the case's to count.
thread_local int inside_kernel = 0;
thread_local at::CallbackHandle callback = 0;  // this thread's observer, while active

struct InsideKernel : at::ObserverContext {};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (inside_kernel > 0 || c10::impl::dispatch_mode_enabled() || !on_device(fn.inputs())) {
    return nullptr;
  }
  Overload* overload = overload_of(fn);
  switch (overload->kind) {
    case Kind::kDevice:
    case Kind::kFallback:
    case Kind::kView:
      overload->count.fetch_add(1, std::memory_order_relaxed);
      ++inside_kernel;
      return std::make_unique<InsideKernel>();
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
  if (context != nullptr) --inside_kernel;
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

// The calls counted since clear(), by overload: (native, fallback, composite).
std::tuple<Counts, Counts, Counts> counts() {
  Counts native, fallback, composite;
  std::lock_guard lock(registry_mutex);
  for (const auto& [name, entry] : registry) {
    const std::int64_t calls = entry->count.load(std::memory_order_relaxed);
    if (calls == 0) continue;
    Counts& route = entry->kind == Kind::kDevice     ? native
                    : entry->kind == Kind::kFallback ? fallback
                                                     : composite;
    route.insert(name, calls);
  }
  return {native, fallback, composite};
}

void clear() {
  std::lock_guard lock(registry_mutex);
  for (auto& [name, entry] : registry) entry->count.store(0, std::memory_order_relaxed);
}

}  // namespace

TORCH_LIBRARY(conform_capture, m) {
  m.def("activate() -> bool", &activate);
  m.def("deactivate() -> bool", &deactivate);
  m.def("counts() -> (Dict(str, int), Dict(str, int), Dict(str, int))", &counts);
  m.def("clear() -> ()", &clear);
}
