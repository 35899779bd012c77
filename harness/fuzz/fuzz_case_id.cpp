// Case ids ("suite/subject/dtype/check") from suites, skip lists and the command line: refused
// with a message, or parsed into fields that print back as the same id.
#include "FuzzSupport.h"
#include "common/CaseId.h"

#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace conform;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::refuses_cleanly([&] {
    const CaseId id = CaseId::parse(text);
    if (id.str() != text || !(CaseId::parse(id.str()) == id))
      throw std::logic_error("a case id does not print back as itself");
  });
  return 0;
}
