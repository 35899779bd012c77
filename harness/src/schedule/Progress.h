#pragma once

#include "common/Result.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace conform {

// Progress of a run on stderr: a bar redrawn in place on a terminal, otherwise one line every
// ten seconds, so CI logs stay readable.
//
// The time left is estimated from what each case took when last recorded: cases run longest
// first, so by counting cases the first minutes of an ops run promised hours. The work left,
// in recorded seconds, is scaled by the run's pace so far (its wall time per recorded second
// done: the jobs and this machine's speed). A case with no recorded duration counts as the
// average of those with one; with none recorded at all, each case counts alike.
class Progress {
 public:
  Progress(const std::vector<std::string>& cases, const std::map<std::string, double>& durations,
           bool terminal);
  void add(const CaseResult& result);
  void finish();
  // Seconds left once `elapsed` seconds have gone by (0 before the first result).
  double eta_seconds(double elapsed) const;

 private:
  void draw(bool force);
  std::size_t total_;
  std::size_t done_ = 0;
  std::map<std::string, double> expected_;  // seconds, by case id, for the cases not done
  double expected_left_ = 0.0, expected_done_ = 0.0;
  bool terminal_;
  OutcomeCounts counts_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace conform
