#pragma once

#include "common/Result.h"
#include "execute/Worker.h"
#include "execute/Zygote.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace conform {

struct ScheduleOptions {
  int jobs = 1;
  // A case's limit of run time: the compile time its worker reports is given beside it, up to
  // compile_timeout (a backend that compiles each new signature is not charged its compiler's
  // time as a hang).
  std::chrono::milliseconds case_timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds compile_timeout{std::chrono::hours(1)};
  std::chrono::milliseconds startup_timeout{std::chrono::seconds(300)};
  WorkerCommand worker;
  std::string log_dir;  // one stderr log per worker process
  int repeat = 1;       // attempts of every case, in the same worker
  int reruns = 0;       // further attempts of a case that only failed, each in a fresh worker
  // Whether a case may be rerun (e.g. not when a skip list expects it to fail); empty: all.
  std::function<bool(const std::string&)> may_rerun;
  // Whether the workers run every device op at its call (the worker's "serve_blocking" mode).
  bool blocking = false;
  // Whether a late error's candidates are rerun so: where the backend has a launch-blocking
  // switch, the rerun's error is then raised by the op that failed.
  bool attribute_blocking = false;
  // Cases with one key, next to each other in the list, go to one worker one after the other (the
  // run's: cases sharing compiled executables, CaseId::sharing_key); empty: each case alone.
  std::function<std::string(const std::string&)> group_of;
  // What the worker is given with a case besides its id (the run's: the tolerance entry matching
  // it, {"tolerance": ...}); empty, or an empty object: nothing.
  std::function<nlohmann::json(const std::string&)> case_request;
};

struct ScheduleStats {
  double zygote_startup_seconds = 0.0;  // imports, once per run
  int workers_started = 0;
  double startup_seconds_total = 0.0;  // as the workers measured their own start-up (a fork)
  int crashes = 0;
  int timeouts = 0;
  int reruns = 0;
  int flaky = 0;
  int retired = 0;  // workers that ended after a case (their memory had grown, their device failed)
  int late_errors = 0;      // errors a device raised outside the case that queued the work
  int late_attributed = 0;  // ... reproduced by rerunning one candidate alone
};

// One result from a case's attempts: alone, as it is; failed and then passed, `flaky` (the
// passing attempt's evidence and ops, the first failure kept); otherwise the first attempt.
// Every attempt's outcome, duration and message are in the evidence (`attempts`).
CaseResult combine_attempts(std::vector<CaseResult> attempts);

// Runs cases on `jobs` worker processes fed from one dynamic queue (a slow case never
// stalls the others; a group of cases sharing executables, `group_of`, is handed out whole), each
// forked by the run's zygote. A worker that dies has its in-flight case
// recorded as `crash` (with the signal); one that passes the per-case timeout (run time: the
// compile time it reports is not counted, up to the compile timeout) is killed and its case
// recorded as `timeout`; a fresh worker takes its place and the run goes on, as it does for
// a worker that retires after a case (its result says "retiring": its memory grew too far, or
// its device kept failing). With `repeat`, a case runs that many times; with `reruns`, one that
// only failed (a skip is not a failure) runs again, each time in a fresh worker, and a pass on a
// rerun makes it `flaky`.
//
// Late errors. An asynchronous device may raise an error of queued work outside the case that
// queued it: before the next case (the worker answers "late_error" instead of running it), at
// the worker's exit, or inside a later case (which then fails in its worker and passes alone).
// The cases the worker ran before are rerun alone, newest first (`attribute_blocking`: every op
// at its call); the
// first that fails where it had matched is the error's case, and its result is delivered again,
// amended: outcome `error`, the rerun's evidence (`failing_op`), `surfaced_at`, `late_error`,
// `outcome_before`. A late error no rerun reproduces is charged to the newest candidate that
// matched, saying so; an error inside a case that no predecessor reproduces stays its own
// (`flaky` when it passed alone).
//
// `on_result` is called once per case, and again for each amendment (`amends` true), from the
// workers' threads, one call at a time.
class Scheduler {
 public:
  using OnResult = std::function<void(const CaseResult&, bool amends)>;
  Scheduler(ScheduleOptions options, OnResult on_result);
  // A zygote already started with the workers' command (a run starts it while a worker lists
  // the suite, so the two import at once): run() waits for it instead of starting its own.
  void adopt(std::unique_ptr<Zygote> zygote);
  ScheduleStats run(const std::vector<std::string>& cases);

 private:
  // A case a worker ran, and its outcome (a late error is charged to a case that matched,
  // never to one whose failure is on record already).
  struct Ran {
    std::string case_id;
    Outcome outcome = Outcome::kPass;
  };
  // A worker and the cases it ran, oldest first: the candidates of an error its device raises
  // later.
  struct Slot {
    int index = 0;
    bool blocking = false;  // its workers run every device op at its call
    std::unique_ptr<Worker> worker;
    std::vector<Ran> ran;
  };
  // An error a worker's device raised outside any case: its evidence, and the worker's cases.
  struct LateError {
    nlohmann::json evidence;
    std::vector<Ran> candidates;
  };
  // One run of a case on the slot's worker, started if there is none; a worker that crashed,
  // hung or broke the protocol is gone afterwards. `ran_before` is what the worker had run.
  struct Attempt {
    CaseResult result;
    std::vector<Ran> ran_before;
  };

  void slot_loop(int slot);
  // A case's attempts (repeats, reruns in fresh workers), combined and delivered.
  void run_case(Slot& slot, const std::string& case_id);
  Attempt attempt(Slot& slot, const std::string& case_id);
  // The one line of a case's answer, or the late error the worker answered instead.
  CaseResult read_answer(Slot& slot, const std::string& case_id, std::optional<LateError>& late);
  // Lets the slot's worker end by itself (it waits on its device once more): what its device
  // raised then, with the worker's cases as candidates.
  std::optional<LateError> end_worker(Slot& slot);
  // end_worker(), then the late error attributed.
  void finish_worker(Slot& slot);
  // Finds the case of a late error among its candidates and delivers that case amended.
  // Returns the case, or nothing when no rerun reproduced the error (then, with `charge`, the
  // newest candidate that matched is charged, saying so).
  std::optional<std::string> attribute(int slot, const LateError& late, bool charge);
  std::unique_ptr<Worker> start_worker(Slot& slot, std::string& failure);
  void deliver(const CaseResult& result, bool amends = false);

  ScheduleOptions options_;
  OnResult on_result_;
  const std::vector<std::string>* cases_ = nullptr;
  std::vector<std::pair<std::size_t, std::size_t>> groups_;  // [begin, end) of cases_, in order
  std::atomic<std::size_t> next_{0};                         // the next group to hand out
  std::atomic<bool> stopping_{false};  // a slot failed: no case starts, no group is handed out
  std::mutex mutex_;                   // serialises on_result_, stats_ and the two below
  std::set<std::string> delivered_;
  std::map<std::string, CaseResult> pending_amendments_;  // of cases not delivered yet
  ScheduleStats stats_;
  std::atomic<int> spawned_{0};
  std::unique_ptr<Zygote> zygote_;  // forks the workers (execute/Zygote.h)
  std::string zygote_failure_;
  std::exception_ptr failure_;  // the first exception of a slot, rethrown by run()
};

}  // namespace conform
