// The ledger's dispositions file (skiplists/ledger/dispositions.json, written by hand): problems
// reported at their file, line and column, never thrown.
#include "FuzzSupport.h"
#include "expect/Dispositions.h"

#include <cstdint>
#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace conform;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::set<std::string> known{"aten::add.Tensor", "aten::cumsum"};
  fuzz::refuses_cleanly([&] {
    (void)parse_dispositions(text, "dispositions.json", nullptr);
    (void)parse_dispositions(text, "dispositions.json", &known);
  });
  return 0;
}
