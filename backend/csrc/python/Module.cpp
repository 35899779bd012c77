// torch_neuronsim._C: the Python face of the runtime. Kept thin: the device module in
// torch_neuronsim/neuron/ builds torch.neuron on these and on torch's generic stream, event
// and accelerator-memory APIs, which reach the runtime through the guard and allocator.
#include "runtime/Config.h"
#include "runtime/Device.h"
#include "runtime/Generator.h"
#include "runtime/HostAllocator.h"

#include <torch/csrc/Exceptions.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

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
  m.def("_set_device", torch::wrap_pybind_function(
                           [](int index) { neuronsim::set_device(static_cast<c10::DeviceIndex>(index)); }));
  m.def("_exchange_device", torch::wrap_pybind_function([](int index) {
          return static_cast<int>(
              neuronsim::exchange_device(static_cast<c10::DeviceIndex>(index)));
        }));
  m.def("_default_generator", torch::wrap_pybind_function([](int index) {
          return default_generator(static_cast<c10::DeviceIndex>(index));
        }));
  m.def("_host_memory_stats", &host_memory_stats);
}
