#include "runtime/CpuView.h"

#include "runtime/DeviceAllocator.h"

namespace neuronsim {

at::Tensor frozen_alias(const at::Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;
  const c10::Storage& owner = t.storage();
  std::optional<c10::DataPtr> memory =
      owner.data() == nullptr ? c10::DataPtr(nullptr, owner.device())  // no bytes to hold
                              : DeviceAllocator::instance().lease(owner.data_ptr());
  c10::Storage storage = memory ? c10::Storage(c10::Storage::use_byte_size_t(), owner.nbytes(),
                                               std::move(*memory), /*allocator=*/nullptr,
                                               /*resizable=*/false)
                                : owner;  // memory of another origin: held through its storage
  auto alias = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), t.key_set(), t.dtype());
  alias.unsafeGetTensorImpl()->set_storage_offset(t.storage_offset());
  detail::take_geometry(*alias.unsafeGetTensorImpl(), t);
  return alias;
}

}  // namespace neuronsim
