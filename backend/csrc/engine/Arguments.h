#pragma once

#include "runtime/Device.h"

#include <ATen/core/ivalue.h>

#include <algorithm>
#include <optional>
#include <vector>

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

// Replaces every tensor in `value` (a tensor, a tensor list or an optional-tensor list) by
// fn(tensor), keeping the list kinds.
template <typename Fn>
void map_tensors(c10::IValue& value, Fn&& fn) {
  if (value.isTensor()) {
    value = fn(value.toTensor());
  } else if (value.isTensorList()) {
    std::vector<at::Tensor> items;
    for (const at::Tensor& t : value.toTensorList().vec()) items.push_back(fn(t));
    value = c10::IValue(items);
  } else if (value.isList() && !value.toListRef().empty() &&
             std::any_of(value.toListRef().begin(), value.toListRef().end(),
                         [](const c10::IValue& v) { return v.isTensor(); })) {
    c10::List<std::optional<at::Tensor>> items;
    for (const c10::IValue& item : value.toListRef()) {
      items.push_back(item.isTensor() ? std::optional<at::Tensor>(fn(item.toTensor()))
                                      : std::nullopt);
    }
    value = c10::IValue(items);
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
