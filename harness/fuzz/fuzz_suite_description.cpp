// A suite's declaration (suite_api.Suite.describe(), as the worker sends it): refused with a message that
// names the problem, or accepted and usable.
#include "FuzzSupport.h"
#include "common/SuiteDescription.h"

#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace conform;
  const auto json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return 0;  // the listing refuses a line that is not JSON before this
  fuzz::refuses_cleanly([&] {
    const SuiteDescription d = SuiteDescription::from_json("fuzz", json);
    // What a run stores, it reads back as the same declaration.
    if (SuiteDescription::of_run("fuzz", d.to_json(), {}).to_json() != d.to_json())
      throw std::logic_error("a stored declaration reads back different");
    (void)d.native_sentence(1, 2, "most-used");
  });
  return 0;
}
