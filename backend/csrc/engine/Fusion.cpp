#include "engine/Fusion.h"

#include "engine/CompileCache.h"
#include "runtime/Executor.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace neuronsim::engine {
namespace {

constexpr std::uint64_t kChainTag = 0xf05edc4a1aULL;  // a chain's memory key starts with this

// Compiles a chain of queued ops: one cache entry, keyed by its members' signatures in order.
void compile_chain(const std::vector<std::string>& member_keys) {
  MemoryKey key;
  key.push(kChainTag);
  for (const std::string& member : member_keys) {
    key.push(std::hash<std::string>{}(member));
    key.push(member.size());
  }
  const auto signature = [&] {
    std::string text = "fused[";
    for (std::size_t i = 0; i < member_keys.size(); ++i) {
      text += (i == 0 ? "" : " ; ") + member_keys[i];
    }
    return text + "]";
  };
  (void)CompileCache::instance().get_or_compile(key, signature, [&](const std::string& chain) {
    Executable plan;
    plan.key = chain;
    plan.op = "neuron::fused_chain";
    plan.ops = static_cast<int>(member_keys.size());
    return plan;
  });
}

thread_local bool tls_in_compiled_graph = false;

const bool g_installed = [] {
  Executor::instance().set_chain_compiler(&compile_chain);
  return true;
}();

}  // namespace

bool fusible(const c10::OperatorHandle& op, const Executable& plan) {
  return !tls_in_compiled_graph && plan.results.has_value() && op.hasTag(at::Tag::pointwise);
}

bool set_in_compiled_graph(bool inside) {
  return std::exchange(tls_in_compiled_graph, inside);
}

}  // namespace neuronsim::engine
