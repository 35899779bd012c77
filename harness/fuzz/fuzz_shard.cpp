// --shard K/N: refused with a message, or a shard whose cases, over all N shards, are every case
// exactly once.
#include "FuzzSupport.h"
#include "plan/Shard.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace conform;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::refuses_cleanly([&] {
    const ShardSpec shard = ShardSpec::parse(text);
    if (shard.count > 64) return;  // the split itself is what is checked, on a few shards
    const std::vector<std::string> cases{"s/a/-/c", "s/b/-/c", "s/c/-/c", "s/d/-/c", "s/e/-/c"};
    const std::map<std::string, double> durations{{"s/a/-/c", 3.0}, {"s/c/-/c", 1.0}};
    std::size_t total = 0;
    for (int k = 1; k <= shard.count; ++k)
      total += shard_cases(cases, ShardSpec{k, shard.count}, durations).size();
    if (total != cases.size()) throw std::logic_error("shards do not cover every case once");
  });
  return 0;
}
