// A gate baseline file (compare/Snapshot): refused with a message naming the file, or loaded.
#include "FuzzSupport.h"
#include "compare/Snapshot.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace conform;
  const std::string path = fuzz::as_file(data, size, ".json");
  fuzz::refuses_cleanly([&] { (void)load_baselines(path); });
  return 0;
}
