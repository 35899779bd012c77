// torch_neuronsim._C: the Python face of the runtime. Kept thin: the device module in
// torch_neuronsim/neuron/ builds torch.neuron on these and on torch's generic stream, event
// and accelerator-memory APIs, which reach the runtime through the guard and allocator.
#include "aten/Autocast.h"
#include "aten/DirectKernels.h"
#include "aten/HostOnly.h"
#include "aten/NativeOps.h"
#include "distributed/CollectiveStats.h"
#include "distributed/NeuronBackend.h"

#include <ATen/ATen.h>
#include "engine/CallKey.h"
#include "engine/Claim.h"
#include "engine/CompileCache.h"
#include "engine/Engine.h"
#include "engine/Fusion.h"
#include "engine/Options.h"
#include "engine/Tracking.h"
#include "runtime/Config.h"
#include "runtime/Device.h"
#include "runtime/Executor.h"
#include "runtime/Generator.h"
#include "runtime/HostAllocator.h"
#include "runtime/Stream.h"

#include <torch/csrc/Exceptions.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace py = pybind11;

namespace {

py::object default_generator(c10::DeviceIndex index) {
  return py::reinterpret_steal<py::object>(
      THPGenerator_initDefaultGenerator(neuronsim::default_generator(index)));
}

py::dict host_memory_stats() {
  const auto stats = neuronsim::HostAllocator::instance().get_stats();
  py::dict out;
  out["allocated_bytes.current"] = stats.allocated_bytes.current;
  out["allocated_bytes.peak"] = stats.allocated_bytes.peak;
  out["allocations.current"] = stats.allocations.current;
  out["num_host_alloc"] = stats.num_host_alloc;
  out["num_host_free"] = stats.num_host_free;
  return out;
}

py::dict collective_stats() {
  py::dict out;
  for (const auto& [name, count] : neuronsim::distributed::collective_stats()) {
    py::dict entry;
    entry["calls"] = count.calls;
    entry["bytes"] = count.bytes;
    out[py::str(name)] = entry;
  }
  return out;
}

py::dict cache_stats() {
  // Without the GIL while the cache's lock is taken: a harness reads these from a thread of its
  // own while ops run (an eviction scan may hold the lock).
  const auto stats = [] {
    const py::gil_scoped_release no_gil;
    return neuronsim::engine::CompileCache::instance().stats();
  }();
  py::dict out;
  out["compiles"] = stats.compiles;
  out["memory_hits"] = stats.memory_hits;
  out["disk_hits"] = stats.disk_hits;
  out["disk_rejected"] = stats.disk_rejected;
  out["failed_compiles"] = stats.failed_compiles;
  out["failure_hits"] = stats.failure_hits;
  out["claims_waited"] = stats.claims_waited;
  out["claims_broken"] = stats.claims_broken;
  out["evicted"] = stats.evicted;
  out["compile_seconds"] = stats.compile_seconds;
  out["claim_wait_seconds"] = stats.claim_wait_seconds;
  out["compiling_seconds"] = stats.compiling_seconds;
  out["compiled_ops"] = stats.compiled_ops;
  out["loaded_ops"] = stats.loaded_ops;
  return out;
}

py::dict execution_stats() {
  const auto stats = neuronsim::Executor::instance().stats();
  py::dict out;
  out["queued"] = stats.queued;
  out["executables"] = stats.executables;
  out["fused_ops"] = stats.fused_ops;
  out["fused_chains"] = stats.fused_chains;
  out["waits"] = stats.waits;
  out["late_errors"] = stats.late_errors;
  return out;
}

// Mean seconds of one compile-cache hit for add(x, x, alpha=1) on a 16-element device tensor:
// building the call's memory key and finding its executable in memory, from typed arguments
// as the direct kernels do ("direct") and from a boxed stack as the boxed engine does ("boxed").
py::dict time_cache_hit(int iterations) {
  namespace engine = neuronsim::engine;
  auto x = at::ones({16}, at::TensorOptions().device(c10::Device("neuron:0")));
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  const c10::Scalar alpha(1);
  torch::jit::Stack stack{x, x, alpha};
  auto& cache = engine::CompileCache::instance();
  (void)(x + x);  // compiled once
  engine::MemoryKey key;
  auto timed = [&](auto&& build_key) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      build_key();
      TORCH_CHECK(cache.find_compiled(key) != nullptr, "expected a cache hit");
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    return took.count() / iterations;
  };
  py::dict out;
  out["direct"] = timed([&] {
    engine::begin_key(op, key);
    engine::append_key(key, x);
    engine::append_key(key, x);
    engine::append_key(key, alpha);
  });
  out["boxed"] = timed([&] { engine::memory_key(op, stack, key); });
  return out;
}

// Mean seconds per engine stage of one benchmark op ("add", "mul", "mm", "softmax") on `x`,
// over `iterations` warm calls: the per-stage breakdown `make bench-backend` prints.
py::dict time_stages(const std::string& name, const at::Tensor& x, int iterations) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::optional<c10::OperatorHandle> op;
  torch::jit::Stack args;
  if (name == "add") {
    op = dispatcher.findSchemaOrThrow("aten::add", "Tensor"), args = {x, x, 1};
  } else if (name == "mul") {
    op = dispatcher.findSchemaOrThrow("aten::mul", "Tensor"), args = {x, x};
  } else if (name == "mm") {
    op = dispatcher.findSchemaOrThrow("aten::mm", ""), args = {x, x};
  } else if (name == "softmax") {
    op = dispatcher.findSchemaOrThrow("aten::_softmax", ""), args = {x, -1, false};
  } else {
    TORCH_CHECK_VALUE(false, "no stage timing for '", name, "' (add, mul, mm, softmax)");
  }
  namespace engine = neuronsim::engine;
  const auto seconds = engine::time_stages(*op, args, iterations);
  py::dict out;
  for (std::size_t i = 0; i < engine::kStageCount; ++i) {
    out[engine::stage_name(static_cast<engine::Stage>(i))] = seconds[i];
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_neuronsim runtime bindings (emulated neuron device)";
  m.def("_validate_environment", torch::wrap_pybind_function([] { (void)neuronsim::config(); }),
        "Parse NEURONSIM_* variables; raises ValueError naming a bad one.");
  m.def("_known_variables", [] { return neuronsim::known_variables(); });
  m.def("_init", torch::wrap_pybind_function(neuronsim::ensure_initialized));
  m.def("_is_initialized", &neuronsim::is_initialized);
  m.def("_is_in_bad_fork", &neuronsim::in_bad_fork);
  m.def("_device_count", [] { return static_cast<int>(neuronsim::device_count()); });
  m.def("_current_device", [] { return static_cast<int>(neuronsim::current_device()); });
  m.def("_set_device", torch::wrap_pybind_function([](int index) {
          neuronsim::set_device(static_cast<c10::DeviceIndex>(index));
        }));
  m.def("_exchange_device", torch::wrap_pybind_function([](int index) {
          return static_cast<int>(neuronsim::exchange_device(static_cast<c10::DeviceIndex>(index)));
        }));
  m.def("_default_generator", torch::wrap_pybind_function([](int index) {
          return default_generator(static_cast<c10::DeviceIndex>(index));
        }));
  m.def("_host_memory_stats", &host_memory_stats);

  namespace engine = neuronsim::engine;
  m.def("native_ops", [] { return neuronsim::native_ops(); });
  m.def("host_only_ops", [] { return neuronsim::host_only_ops(); });
  m.def("_autocast_policy", [] { return neuronsim::autocast_policy(); });
  m.def("_direct_kernel_ops", [] {  // "aten::add.Tensor", ...: the native ops run unboxed
    std::vector<std::string> names;
    for (std::string_view op : neuronsim::direct_kernel_ops()) {
      names.push_back("aten::" + std::string(op));
    }
    return names;
  });
  m.def("get_executed_ops", &engine::executed_ops);
  m.def("get_fallback_ops", &engine::fallback_ops);
  m.def("clear_op_tracking", &engine::clear_op_tracking);
  m.def("compile_cache_stats", &cache_stats);
  m.def("_reset_compile_cache_stats", [] { engine::CompileCache::instance().reset_stats(); });
  m.def("_clear_compile_cache_memory", [] { engine::CompileCache::instance().clear_memory(); });
  m.def("_time_cache_hit", torch::wrap_pybind_function(&time_cache_hit));
  m.def("_time_stages", torch::wrap_pybind_function(&time_stages));
  m.def("_compile_cache_dir", [] {
    return engine::CompileCache::instance().disk_enabled() ? neuronsim::config().cache_dir
                                                           : std::string();
  });
  m.def("set_fallback_mode", torch::wrap_pybind_function([](const std::string& mode) {
          engine::set_fallback_mode(neuronsim::parse_fallback_mode("fallback mode", mode));
        }));
  m.def("set_64bit_mode", torch::wrap_pybind_function([](const std::string& mode) {
          engine::set_wide64_mode(neuronsim::parse_wide64_mode("64-bit mode", mode));
        }));
  m.def("set_matmul_mode", torch::wrap_pybind_function([](const std::string& mode) {
          engine::set_matmul_mode(neuronsim::parse_matmul_mode("matmul mode", mode));
        }));
  m.def("set_compile_latency", torch::wrap_pybind_function([](const std::string& latency) {
          engine::set_compile_latency(neuronsim::parse_compile_latency("compile latency", latency));
        }));
  m.def("get_compile_latency", [] {
    const auto latency = engine::compile_latency();
    return py::make_tuple(latency.base_seconds, latency.per_op_seconds);
  });
  // What compiling costs on the device this backend emulates (its `realistic` latency), whatever
  // latency it emulates now: what a harness estimates compile time with (docs/backends.md).
  m.def("declared_compile_latency", [] {
    py::dict out;
    out["base_seconds"] = neuronsim::kRealisticLatency.base_seconds;
    out["per_op_seconds"] = neuronsim::kRealisticLatency.per_op_seconds;
    return out;
  });
  // The emulated compiler's time for a graph of `ops` ops (torch.compile's backend): slept,
  // returned.
  m.def("_emulate_compile", [](long long ops) {
    py::gil_scoped_release release;
    return engine::emulate_compile(ops);
  });
  // Execution: queues, launch blocking, fusion.
  m.def("execution_stats", &execution_stats);
  m.def("_reset_execution_stats", [] { neuronsim::Executor::instance().reset_stats(); });
  m.def("_pending", [](int device) {
    return neuronsim::Executor::instance().pending(static_cast<c10::DeviceIndex>(device));
  });
  m.def("set_launch_blocking", torch::wrap_pybind_function([](bool blocking) {
          py::gil_scoped_release release;
          neuronsim::set_launch_blocking(blocking);
        }));
  m.def("get_launch_blocking", &neuronsim::launch_blocking);
  m.def("_synchronize_all", torch::wrap_pybind_function([] {
          py::gil_scoped_release release;
          neuronsim::Executor::instance().synchronize_device(-1);
        }));
  m.def("set_fusion", &neuronsim::set_fusion_enabled);
  m.def("_set_in_compiled_graph", &engine::set_in_compiled_graph);
  m.def("get_fusion", &neuronsim::fusion_enabled);
  // Occupies the current stream of `device` for `seconds`: what a long kernel does, for tests
  // that need queued work to still be pending.
  m.def("_occupy_stream", torch::wrap_pybind_function([](int device, double seconds) {
          const auto index = static_cast<c10::DeviceIndex>(device);
          neuronsim::Work work;
          work.op = "neuron::occupy";
          work.run = [seconds] {
            std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
          };
          neuronsim::Executor::instance().enqueue(neuronsim::current_stream(index),
                                                  std::move(work));
        }));
  // The compile caches' claims (engine/Claim.h), for torch.compile's graph cache.
  m.def("_claim_entry", [](const std::string& entry, double expiry_seconds) {
    py::gil_scoped_release release;
    std::optional<std::filesystem::path> held;
    engine::ClaimEvents events;
    const bool compile =
        engine::claim_entry(entry, std::chrono::duration<double>(expiry_seconds), held, events);
    py::gil_scoped_acquire acquire;
    return py::make_tuple(compile, held ? py::cast(held->string()) : py::none(), events.waited,
                          events.broken);
  });
  m.def("_release_claim",
        [](const std::string& held) { engine::release_claim(std::filesystem::path(held)); });
  m.def("get_fallback_mode",
        [] { return std::string(neuronsim::to_string(engine::fallback_mode())); });
  m.def("get_64bit_mode", [] { return std::string(neuronsim::to_string(engine::wide64_mode())); });
  m.def("get_matmul_mode", [] { return std::string(neuronsim::to_string(engine::matmul_mode())); });

  // The c10d backend; torch_neuronsim/distributed.py registers it for the neuron device.
  // Returned as c10d::Backend, the type torch.distributed knows.
  m.def("_create_c10d_backend",
        torch::wrap_pybind_function([](c10::intrusive_ptr<c10d::Backend> host, int rank, int size) {
          return c10::intrusive_ptr<c10d::Backend>(
              c10::make_intrusive<neuronsim::distributed::NeuronBackend>(std::move(host), rank,
                                                                         size));
        }));
  m.def("get_collective_stats", &collective_stats);
  m.def("clear_collective_stats", &neuronsim::distributed::clear_collective_stats);
}
