#pragma once

#include "common/Result.h"
#include "execute/Worker.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace conform {

struct ScheduleOptions {
  int jobs = 1;
  std::chrono::milliseconds case_timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds startup_timeout{std::chrono::seconds(300)};
  WorkerCommand worker;
  std::string log_dir;  // one stderr log per worker process
};

struct ScheduleStats {
  int workers_started = 0;
  double startup_seconds_total = 0.0;  // as the workers measured their own start-up
  int crashes = 0;
  int timeouts = 0;
};

// Runs cases on `jobs` worker processes fed from one dynamic queue (a slow case never
// stalls the others). A worker that dies has its in-flight case recorded as `crash` (with the
// signal); one that passes the per-case timeout is killed and its case recorded as `timeout`;
// a fresh worker takes its place and the run goes on. `on_result` is called once per case,
// from the workers' threads, one call at a time.
class Scheduler {
 public:
  using OnResult = std::function<void(const CaseResult&)>;
  Scheduler(ScheduleOptions options, OnResult on_result);
  ScheduleStats run(const std::vector<std::string>& cases);

 private:
  void slot_loop(int slot);
  std::unique_ptr<Worker> start_worker(int slot, std::string& failure);
  void deliver(const CaseResult& result);

  ScheduleOptions options_;
  OnResult on_result_;
  const std::vector<std::string>* cases_ = nullptr;
  std::atomic<std::size_t> next_{0};
  std::mutex mutex_;  // serialises on_result_ and stats_
  ScheduleStats stats_;
  std::atomic<int> spawned_{0};
  std::exception_ptr failure_;  // the first exception of a slot, rethrown by run()
};

}  // namespace conform
