#pragma once

#include "common/Result.h"
#include "execute/Worker.h"
#include "execute/Zygote.h"

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
  int repeat = 1;       // attempts of every case, in the same worker
  int reruns = 0;       // further attempts of a case that only failed, each in a fresh worker
  // Whether a case may be rerun (e.g. not when a skip list expects it to fail); empty: all.
  std::function<bool(const std::string&)> may_rerun;
};

struct ScheduleStats {
  double zygote_startup_seconds = 0.0;  // imports, once per run
  int workers_started = 0;
  double startup_seconds_total = 0.0;  // as the workers measured their own start-up (a fork)
  int crashes = 0;
  int timeouts = 0;
  int reruns = 0;
  int flaky = 0;
  int retired = 0;  // workers that ended after a case because their memory had grown
};

// One result from a case's attempts: alone, as it is; failed and then passed, `flaky` (the
// passing attempt's evidence and ops, the first failure kept); otherwise the first attempt.
// Every attempt's outcome, duration and message are in the evidence (`attempts`).
CaseResult combine_attempts(std::vector<CaseResult> attempts);

// Runs cases on `jobs` worker processes fed from one dynamic queue (a slow case never
// stalls the others), each forked by the run's zygote. A worker that dies has its in-flight case
// recorded as `crash` (with the signal); one that passes the per-case timeout is killed and its
// case recorded as `timeout`; a fresh worker takes its place and the run goes on, as it does for
// a worker that retires after a case (its result says "retiring": its memory grew too far). With `repeat`, a
// case runs that many times; with `reruns`, one that only failed (a skip is not a failure) runs
// again, each time in a fresh worker, and a pass on a rerun makes it `flaky`. `on_result` is
// called once per case, from the workers' threads, one call at a time.
class Scheduler {
 public:
  using OnResult = std::function<void(const CaseResult&)>;
  Scheduler(ScheduleOptions options, OnResult on_result);
  // A zygote already started with the workers' command (a run starts it while a worker lists
  // the suite, so the two import at once): run() waits for it instead of starting its own.
  void adopt(std::unique_ptr<Zygote> zygote);
  ScheduleStats run(const std::vector<std::string>& cases);

 private:
  void slot_loop(int slot);
  // One run of a case on the slot's worker, started if there is none; a worker that crashed,
  // hung or broke the protocol is gone afterwards.
  CaseResult attempt(int slot, std::unique_ptr<Worker>& worker, std::string& previous_case,
                     const std::string& case_id);
  std::unique_ptr<Worker> start_worker(int slot, std::string& failure);
  void deliver(const CaseResult& result);

  ScheduleOptions options_;
  OnResult on_result_;
  const std::vector<std::string>* cases_ = nullptr;
  std::atomic<std::size_t> next_{0};
  std::mutex mutex_;  // serialises on_result_ and stats_
  ScheduleStats stats_;
  std::atomic<int> spawned_{0};
  std::unique_ptr<Zygote> zygote_;  // forks the workers (execute/Zygote.h)
  std::string zygote_failure_;
  std::exception_ptr failure_;  // the first exception of a slot, rethrown by run()
};

}  // namespace conform
