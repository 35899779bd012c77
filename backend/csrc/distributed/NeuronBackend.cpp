#include "distributed/NeuronBackend.h"

#include "distributed/CollectiveStats.h"
#include "distributed/StagedWork.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>

namespace neuronsim::distributed {
namespace {

// The host copy of a device tensor: contiguous (Gloo's requirement), same values.
at::Tensor to_host(const at::Tensor& device, const char* collective) {
  TORCH_CHECK(device.device().type() == c10::DeviceType::PrivateUse1, "neuron: ", collective,
              " was given a tensor on ", device.device(), "; this backend takes neuron tensors");
  c10::DeviceGuard guard(device.device());
  return device.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true,
                   at::MemoryFormat::Contiguous);
}

std::vector<at::Tensor> to_host(const std::vector<at::Tensor>& device, const char* collective) {
  std::vector<at::Tensor> host;
  host.reserve(device.size());
  for (const auto& t : device) host.push_back(to_host(t, collective));
  return host;
}

// Host copies of lists of device tensors (gather's and all_gather's outputs, scatter's inputs),
// with both sides flattened for the copy back.
struct HostLists {
  std::vector<std::vector<at::Tensor>> lists;
  std::vector<at::Tensor> host_flat;
  std::vector<at::Tensor> device_flat;
};

HostLists to_host(const std::vector<std::vector<at::Tensor>>& device, const char* collective) {
  HostLists out;
  for (const auto& list : device) {
    out.lists.push_back(to_host(list, collective));
    out.host_flat.insert(out.host_flat.end(), out.lists.back().begin(), out.lists.back().end());
    out.device_flat.insert(out.device_flat.end(), list.begin(), list.end());
  }
  return out;
}

std::int64_t bytes_of(const std::vector<at::Tensor>& tensors) {
  std::int64_t bytes = 0;
  for (const auto& t : tensors) bytes += static_cast<std::int64_t>(t.nbytes());
  return bytes;
}

// ReduceOp.AVG divides: an integer tensor has no exact average, and Gloo's own refusal
// ("result type Float can't be cast") does not say which collective or why.
void check_reduce_op(const c10d::ReduceOp& op, const std::vector<at::Tensor>& tensors,
                     const char* collective) {
  for (const auto& t : tensors) {
    TORCH_CHECK_VALUE(!(op == c10d::ReduceOp::AVG && !at::isFloatingType(t.scalar_type()) &&
                        !at::isComplexType(t.scalar_type())),
                      "neuron: ", collective, " with ReduceOp.AVG is not supported for ",
                      t.scalar_type(), " tensors (an integer average is not exact); reduce with ",
                      "SUM and divide instead");
  }
}

c10::intrusive_ptr<c10d::Work> staged(c10::intrusive_ptr<c10d::Work> host_work,
                                      std::vector<at::Tensor> host,
                                      std::vector<at::Tensor> device,
                                      std::vector<at::Tensor> result, c10d::OpType type) {
  return c10::make_intrusive<StagedWork>(std::move(host_work), std::move(host), std::move(device),
                                         std::move(result), type);
}

// A collective that works in place (all_reduce, broadcast, reduce, recv): `run(host copies)`,
// then the host copies back into `tensors`.
template <typename Run>
c10::intrusive_ptr<c10d::Work> in_place(const char* name, std::vector<at::Tensor>& tensors,
                                        c10d::OpType type, Run run) {
  record_collective(name, bytes_of(tensors));
  auto host = to_host(tensors, name);
  auto work = run(host);
  return staged(work, host, tensors, tensors, type);
}

// A collective from `inputs` into `outputs` (all_gather_into_tensor, reduce_scatter_tensor,
// all_to_all_single and their coalesced forms): `run(host outputs, host inputs)`, then the host
// outputs copied back into `outputs`.
template <typename Run>
c10::intrusive_ptr<c10d::Work> into(const char* name, std::vector<at::Tensor> outputs,
                                    const std::vector<at::Tensor>& inputs, c10d::OpType type,
                                    Run run) {
  record_collective(name, bytes_of(inputs));
  auto host_inputs = to_host(inputs, name);
  auto host_outputs = to_host(outputs, name);
  auto work = run(host_outputs, host_inputs);
  return staged(work, host_outputs, outputs, outputs, type);
}

// The same into lists of outputs (all_gather, gather: one list per rank's result).
template <typename Run>
c10::intrusive_ptr<c10d::Work> into_lists(const char* name,
                                          const std::vector<std::vector<at::Tensor>>& outputs,
                                          const std::vector<at::Tensor>& inputs,
                                          c10d::OpType type, Run run) {
  record_collective(name, bytes_of(inputs));
  auto host_inputs = to_host(inputs, name);
  auto host_outputs = to_host(outputs, name);
  auto work = run(host_outputs.lists, host_inputs);
  return staged(work, host_outputs.host_flat, host_outputs.device_flat, host_outputs.device_flat,
                type);
}

}  // namespace

NeuronBackend::NeuronBackend(c10::intrusive_ptr<c10d::Backend> host, int rank, int size)
    : c10d::Backend(rank, size), host_(std::move(host)) {
  TORCH_CHECK(host_, "neuron: the c10d backend needs a host backend to stage collectives through");
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                        const c10d::BroadcastOptions& opts) {
  return in_place("broadcast", tensors, c10d::OpType::BROADCAST,
                  [&](std::vector<at::Tensor>& host) { return host_->broadcast(host, opts); });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::AllreduceOptions& opts) {
  check_reduce_op(opts.reduceOp, tensors, "all_reduce");
  return in_place("all_reduce", tensors, c10d::OpType::ALLREDUCE,
                  [&](std::vector<at::Tensor>& host) { return host_->allreduce(host, opts); });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::reduce(std::vector<at::Tensor>& tensors,
                                                     const c10d::ReduceOptions& opts) {
  check_reduce_op(opts.reduceOp, tensors, "reduce");
  return in_place("reduce", tensors, c10d::OpType::REDUCE,
                  [&](std::vector<at::Tensor>& host) { return host_->reduce(host, opts); });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  return into_lists("all_gather", outputs, inputs, c10d::OpType::ALLGATHER,
                    [&](std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in) {
                      return host_->allgather(out, in, opts);
                    });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  return into_lists("gather", outputs, inputs, c10d::OpType::GATHER,
                    [&](std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in) {
                      return host_->gather(out, in, opts);
                    });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  auto host_inputs = to_host(inputs, "scatter");
  record_collective("scatter", bytes_of(host_inputs.host_flat));
  auto host_outputs = to_host(outputs, "scatter");
  auto work = host_->scatter(host_outputs, host_inputs.lists, opts);
  return staged(work, host_outputs, outputs, outputs, c10d::OpType::SCATTER);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::_allgather_base(at::Tensor& output,
                                                              at::Tensor& input,
                                                              const c10d::AllgatherOptions& opts) {
  return into("all_gather_into_tensor", {output}, {input}, c10d::OpType::_ALLGATHER_BASE,
              [&](std::vector<at::Tensor>& out, std::vector<at::Tensor>& in) {
                return host_->_allgather_base(out[0], in[0], opts);
              });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  return into("all_gather_into_tensor_coalesced", outputs, inputs, c10d::OpType::COALESCED,
              [&](std::vector<at::Tensor>& out, std::vector<at::Tensor>& in) {
                return host_->allgather_into_tensor_coalesced(out, in, opts);
              });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  check_reduce_op(opts.reduceOp, tensors, "all_reduce_coalesced");
  return in_place(
      "all_reduce_coalesced", tensors, c10d::OpType::ALLREDUCE_COALESCED,
      [&](std::vector<at::Tensor>& host) { return host_->allreduce_coalesced(host, opts); });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  check_reduce_op(opts.reduceOp, inputs, "reduce_scatter_tensor_coalesced");
  return into("reduce_scatter_tensor_coalesced", outputs, inputs, c10d::OpType::COALESCED,
              [&](std::vector<at::Tensor>& out, std::vector<at::Tensor>& in) {
                return host_->reduce_scatter_tensor_coalesced(out, in, opts);
              });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_reduce_op(opts.reduceOp, {input}, "reduce_scatter_tensor");
  return into("reduce_scatter_tensor", {output}, {input}, c10d::OpType::_REDUCE_SCATTER_BASE,
              [&](std::vector<at::Tensor>& out, std::vector<at::Tensor>& in) {
                return host_->_reduce_scatter_base(out[0], in[0], opts);
              });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const c10d::AllToAllOptions& opts) {
  return into("all_to_all_single", {output}, {input}, c10d::OpType::ALLTOALL_BASE,
              [&](std::vector<at::Tensor>& out, std::vector<at::Tensor>& in) {
                return host_->alltoall_base(out[0], in[0], output_split_sizes, input_split_sizes,
                                            opts);
              });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::send(std::vector<at::Tensor>& tensors, int dst_rank,
                                                   int tag) {
  record_collective("send", bytes_of(tensors));
  auto host = to_host(tensors, "send");
  auto work = host_->send(host, dst_rank, tag);
  // The host copy stays alive with the work until Gloo has sent it.
  return staged(work, host, {}, tensors, c10d::OpType::SEND);
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::recv(std::vector<at::Tensor>& tensors, int src_rank,
                                                   int tag) {
  return in_place("recv", tensors, c10d::OpType::RECV, [&](std::vector<at::Tensor>& host) {
    return host_->recv(host, src_rank, tag);
  });
}

c10::intrusive_ptr<c10d::Work> NeuronBackend::barrier(const c10d::BarrierOptions& opts) {
  record_collective("barrier", 0);
  return host_->barrier(opts);
}

}  // namespace neuronsim::distributed
