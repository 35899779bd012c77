#pragma once

#include "runtime/Device.h"

#include <ATen/core/ivalue.h>

namespace neuronsim::engine {

inline bool on_device(const at::Tensor& t) {
  return t.defined() && t.device().type() == kDeviceType;
}

// Calls `fn` on every tensor in an op argument: a tensor, or the tensors of a list.
template <typename Fn>
void for_each_tensor(const c10::IValue& value, Fn&& fn) {
  if (value.isTensor()) {
    fn(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorList().vec()) fn(t);
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef()) {
      if (item.isTensor()) fn(item.toTensor());
    }
  }
}

// Calls `fn` on every neuron tensor among an op's arguments.
template <typename Fn>
void for_each_device_tensor(c10::ArrayRef<c10::IValue> args, Fn&& fn) {
  for (const c10::IValue& arg : args) {
    for_each_tensor(arg, [&](const at::Tensor& t) {
      if (on_device(t)) fn(t);
    });
  }
}

}  // namespace neuronsim::engine
