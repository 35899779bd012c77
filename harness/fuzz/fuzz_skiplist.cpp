// The skip-list loader and linter on arbitrary file contents: a problem is reported (file:line),
// never thrown past the loader, and whatever loads can be linted and decide cases.
#include "FuzzSupport.h"
#include "common/CaseId.h"
#include "expect/Skiplist.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace conform;
  const std::string path = fuzz::as_file(data, size, ".json");
  fuzz::refuses_cleanly([&] {
    const Skiplists lists = load_skiplists({path}, "2.13.0");
    for (const Problem& p : lists.problems) (void)p.str();
    (void)suites_named(lists.entries, "ops");
    (void)check_subjects(lists.entries, {{"ops", {"add", "nn.functional.relu"}}}, "ops", "2.13.0");
    const Expectations expectations(lists.entries);
    for (const char* id : {"ops/add/float32/forward", "hf/llama/bfloat16/backward", "x/y/-/z"}) {
      if (const Entry* e = expectations.decide(CaseId::parse(id))) {
        (void)skipped_result(*e, id);
        (void)apply_expectation(*e, CaseResult{id, Outcome::kFail, 0.0, {}, {}, {}, {}});
      }
    }
  });
  return 0;
}
