#include "schedule/Progress.h"

#include "common/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace conform {

Progress::Progress(const std::vector<std::string>& cases,
                   const std::map<std::string, double>& durations, bool terminal)
    : total_(cases.size()),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  double known = 0.0;
  std::size_t n_known = 0;
  for (const auto& id : cases) {
    if (auto it = durations.find(id); it != durations.end() && it->second > 0.0) {
      known += it->second;
      ++n_known;
    }
  }
  const double unknown = n_known ? known / static_cast<double>(n_known) : 1.0;
  for (const auto& id : cases) {
    const auto it = durations.find(id);
    const double seconds = it != durations.end() && it->second > 0.0 ? it->second : unknown;
    expected_left_ += seconds - expected_[id];  // a case listed twice counts once
    expected_[id] = seconds;
  }
}

void Progress::add(const CaseResult& result) {
  ++done_;
  ++counts_[result.outcome];
  if (auto it = expected_.find(result.case_id); it != expected_.end()) {
    expected_left_ -= it->second;
    expected_done_ += it->second;
    expected_.erase(it);
  }
  draw(false);
}

double Progress::eta_seconds(double elapsed) const {
  if (expected_done_ <= 0.0) return 0.0;
  return elapsed / expected_done_ * std::max(0.0, expected_left_);
}

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  const auto since = std::chrono::duration<double>(now - last_draw_).count();
  if (!force && since < (terminal_ ? 0.1 : 10.0)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = eta_seconds(elapsed);
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
