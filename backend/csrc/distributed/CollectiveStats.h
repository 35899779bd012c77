#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace neuronsim::distributed {

// How many times each collective ran on neuron tensors in this process, and how many bytes of
// device memory it carried (its input tensors), as get_collective_stats() reports them.
struct CollectiveCount {
  std::int64_t calls = 0;
  std::int64_t bytes = 0;
};

void record_collective(const std::string& name, std::int64_t bytes);
std::map<std::string, CollectiveCount> collective_stats();
void clear_collective_stats();

}  // namespace neuronsim::distributed
