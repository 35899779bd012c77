#include "execute/LineSplitter.h"

#include <algorithm>

namespace conform {

void LineSplitter::feed(std::string_view chunk, std::vector<ProtocolLine>& lines) {
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    const std::string_view part = chunk.substr(0, newline);
    chunk = newline == std::string_view::npos ? std::string_view{} : chunk.substr(newline + 1);
    if (!discarding_) {
      pending_.append(part.substr(0, max_line_ + 1 - pending_.size()));
      if (pending_.size() > max_line_) {
        pending_.resize(std::min(kKeptOfLongLine, max_line_));
        lines.push_back({std::move(pending_), true});
        pending_ = std::string();  // the long line's capacity goes with it
        discarding_ = true;
      }
    }
    if (newline == std::string_view::npos) return;
    if (!discarding_) lines.push_back({std::move(pending_), false});
    pending_ = std::string();
    discarding_ = false;
  }
}

}  // namespace conform
