// In-place random fills drawn from the neuron device's own generator (torch.neuron.manual_seed),
// never from torch's CPU generator: the factories rand, randn, randint, bernoulli and dropout
// all end in one of these.
#include "aten/CpuView.h"
#include "runtime/Generator.h"

#include <torch/library.h>

namespace neuronsim {
namespace {

using Gen = std::optional<at::Generator>;

template <typename Fill>
at::Tensor& fill_random(at::Tensor& self, const Gen& gen, Fill fill) {
  at::Tensor view = cpu_view(self);
  with_engine(gen, self.device().index(), [&](const at::Generator& engine) { fill(view, engine); });
  return self;
}

at::Tensor& normal(at::Tensor& self, double mean, double std, Gen gen) {
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.normal_(mean, std, g); });
}

at::Tensor& uniform(at::Tensor& self, double from, double to, Gen gen) {
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.uniform_(from, to, g); });
}

at::Tensor& random(at::Tensor& self, Gen gen) {
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.random_(g); });
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to, Gen gen) {
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.random_(from, to, g); });
}

at::Tensor& random_to(at::Tensor& self, int64_t to, Gen gen) {
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.random_(to, g); });
}

at::Tensor& bernoulli_float(at::Tensor& self, double p, Gen gen) {
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.bernoulli_(p, g); });
}

at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p, Gen gen) {
  const at::Tensor p_view = cpu_view(p);
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.bernoulli_(p_view, g); });
}

at::Tensor& exponential(at::Tensor& self, double lambd, Gen gen) {
  return fill_random(self, gen, [&](at::Tensor& v, const at::Generator& g) { v.exponential_(lambd, g); });
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("normal_", normal);
  m.impl("uniform_", uniform);
  m.impl("random_", random);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("bernoulli_.Tensor", bernoulli_tensor);
  m.impl("exponential_", exponential);
}

}  // namespace neuronsim
