#include "schedule/Progress.h"

#include "common/Text.h"

#include <fmt/format.h>

#include <cstdio>

namespace conform {

Progress::Progress(std::size_t total, bool terminal)
    : total_(total),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::add(const CaseResult& result) {
  ++done_;
  ++counts_[result.outcome];
  draw(false);
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const auto since = std::chrono::duration<double>(now - last_draw_).count();
  if (!force && since < (terminal_ ? 0.1 : 10.0)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta =
      done_ ? elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) : 0.0;
  std::string tally;
  for (const auto& [outcome, n] : counts_) tally += fmt::format(" {} {}", name(outcome), n);
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : kWidth;
    fmt::print(stderr, "\r[{}{}] {}/{}{}  eta {}   ", std::string(filled, '#'),
               std::string(kWidth - filled, '.'), done_, total_, tally, format_duration(eta));
  } else {
    fmt::print(stderr, "progress: {}/{} cases in {}{} (eta {})\n", done_, total_,
               format_duration(elapsed), tally, format_duration(eta));
  }
  std::fflush(stderr);
}

void Progress::finish() {
  draw(true);
  if (terminal_) fmt::print(stderr, "\n");
}

}  // namespace conform
