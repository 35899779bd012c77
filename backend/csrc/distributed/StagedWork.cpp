#include "distributed/StagedWork.h"

#include <ATen/core/ivalue.h>
#include <c10/core/DeviceGuard.h>

#include <mutex>

namespace neuronsim::distributed {

struct StagedWork::CopyBack {
  std::vector<at::Tensor> host;
  std::vector<at::Tensor> device;
  std::once_flag once;

  void run() {
    std::call_once(once, [this] {
      for (size_t i = 0; i < device.size(); ++i) {
        c10::DeviceGuard guard(device[i].device());
        device[i].copy_(host[i]);
      }
    });
  }
};

StagedWork::StagedWork(c10::intrusive_ptr<c10d::Work> host_work, std::vector<at::Tensor> host,
                       std::vector<at::Tensor> device, std::vector<at::Tensor> result,
                       c10d::OpType type)
    : c10d::Work(-1, type),
      host_work_(std::move(host_work)),
      copy_back_(std::make_shared<CopyBack>()),
      result_(std::move(result)) {
  copy_back_->host = std::move(host);
  copy_back_->device = std::move(device);
}

bool StagedWork::isCompleted() { return host_work_->isCompleted(); }

bool StagedWork::isSuccess() const { return host_work_->isSuccess(); }

std::exception_ptr StagedWork::exception() const { return host_work_->exception(); }

int StagedWork::sourceRank() const { return host_work_->sourceRank(); }

std::vector<at::Tensor> StagedWork::result() { return result_; }

void StagedWork::synchronize() { copy_back_->run(); }

bool StagedWork::wait(std::chrono::milliseconds timeout) {
  const bool done = host_work_->wait(timeout);
  copy_back_->run();
  return done;
}

c10::intrusive_ptr<c10::ivalue::Future> StagedWork::getFuture() {
  if (!future_) {
    auto copy_back = copy_back_;
    auto result = result_;
    future_ = host_work_->getFuture()->then(
        [copy_back, result](c10::ivalue::Future& /*host*/) -> c10::IValue {
          copy_back->run();
          return c10::IValue(result);
        },
        c10::ListType::create(c10::TensorType::get()));
  }
  return future_;
}

}  // namespace neuronsim::distributed
