#pragma once

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <vector>

namespace neuronsim::distributed {

// A collective on device tensors, run by the host backend on host copies of them. It ends
// when the host's work has ended and its results are copied back into the device tensors:
// wait() does that on the caller's thread, the future (which DDP's comm hooks chain on) on the
// host backend's thread, whichever comes first, and only once.
class StagedWork : public c10d::Work {
 public:
  // `device[i]` receives `host[i]` when the host work ends; `result` is what the future and
  // result() give (the device tensors the caller sees as outputs).
  StagedWork(c10::intrusive_ptr<c10d::Work> host_work, std::vector<at::Tensor> host,
             std::vector<at::Tensor> device, std::vector<at::Tensor> result, c10d::OpType type);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  struct CopyBack;  // shared with the future's callback, which may outlive this object
  c10::intrusive_ptr<c10d::Work> host_work_;
  std::shared_ptr<CopyBack> copy_back_;
  std::vector<at::Tensor> result_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace neuronsim::distributed
