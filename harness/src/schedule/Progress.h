#pragma once

#include "common/Result.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace conform {

// Progress of a run on stderr: a bar redrawn in place on a terminal, otherwise one line every
// ten seconds, so CI logs stay readable.
class Progress {
 public:
  Progress(std::size_t total, bool terminal);
  void add(const CaseResult& result);
  void finish();

 private:
  void draw(bool force);
  std::size_t total_;
  std::size_t done_ = 0;
  bool terminal_;
  OutcomeCounts counts_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace conform
