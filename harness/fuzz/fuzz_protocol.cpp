// A worker's protocol stream, as arbitrary bytes in arbitrary chunks: the line splitter holds no
// more than its limit, a line the scheduler accepts as a result can be summarised, combined and
// stored (JSON text that never throws), and one it refuses is refused with an exception the
// scheduler turns into a ProtocolError.
#include "FuzzSupport.h"
#include "common/Result.h"
#include "common/Text.h"
#include "execute/LineSplitter.h"
#include "schedule/Scheduler.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace conform;
  if (size == 0) return 0;
  // The first byte sets the chunk size (the pipe delivers any split) and a small line limit,
  // so that over-long lines are reached without megabytes of input.
  const std::size_t chunk = 1 + data[0] % 64;
  LineSplitter splitter(64 + data[0] * 16);
  std::vector<ProtocolLine> lines;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (std::size_t i = 0; i < stream.size(); i += chunk) {
    splitter.feed(stream.substr(i, chunk), lines);
    if (splitter.pending() > 64 + data[0] * 16u) throw std::logic_error("splitter over its limit");
  }
  for (const ProtocolLine& line : lines) {
    if (line.too_long) continue;  // recorded as a ProtocolError with the line's start
    CaseResult result;
    try {
      result = CaseResult::from_worker_json(nlohmann::json::parse(line.text));
    } catch (const std::exception&) {
      continue;  // the scheduler records a ProtocolError for it
    }
    // Accepted: everything downstream must take it.
    (void)case_message(result.evidence);
    (void)json_text(result.evidence);
    const CaseResult combined = combine_attempts({result, result});
    (void)case_message(combined.evidence);
    (void)json_text(combined.evidence);
  }
  return 0;
}
