#include "schedule/Scheduler.h"

#include "common/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <thread>

namespace conform {

using Clock = std::chrono::steady_clock;

Scheduler::Scheduler(ScheduleOptions options, OnResult on_result)
    : options_(std::move(options)), on_result_(std::move(on_result)) {}

void Scheduler::adopt(std::unique_ptr<Zygote> zygote) {
  zygote_ = std::move(zygote);
}

ScheduleStats Scheduler::run(const std::vector<std::string>& cases) {
  cases_ = &cases;
  next_ = 0;
  const int jobs = std::max(1, std::min<int>(options_.jobs, static_cast<int>(cases.size())));
  if (!cases.empty()) {
    // One zygote for the run, started here (its death signal follows this thread, which
    // outlives every slot); a zygote that cannot start makes each case a crash saying why.
    try {
      if (!zygote_)
        zygote_ = std::make_unique<Zygote>(options_.worker, options_.log_dir + "/zygote.log",
                                           options_.startup_timeout);
      stats_.zygote_startup_seconds = zygote_->ready().value("startup_seconds", 0.0);
    } catch (const std::exception& e) {
      zygote_.reset();
      zygote_failure_ = e.what();
    }
  }
  std::vector<std::thread> slots;
  for (int slot = 0; slot < jobs; ++slot) {
    slots.emplace_back([this, slot] {
      try {
        slot_loop(slot);
      } catch (...) {  // e.g. the store refused a result: stop handing out cases, report it
        next_ = cases_->size();
        std::lock_guard lock(mutex_);
        if (!failure_) failure_ = std::current_exception();
      }
    });
  }
  for (auto& t : slots) t.join();
  if (failure_) std::rethrow_exception(failure_);
  return stats_;
}

void Scheduler::deliver(const CaseResult& result) {
  std::lock_guard lock(mutex_);
  if (result.outcome == Outcome::kCrash) ++stats_.crashes;
  if (result.outcome == Outcome::kTimeout) ++stats_.timeouts;
  if (result.outcome == Outcome::kFlaky) ++stats_.flaky;
  try {
    on_result_(result);
  } catch (...) {
    next_ = cases_->size();  // before this slot's worker is torn down: no other slot goes on
    throw;
  }
}

std::unique_ptr<Worker> Scheduler::start_worker(int slot, std::string& failure) {
  const int n = spawned_.fetch_add(1);
  const std::string log = fmt::format("{}/worker-{}-{}.log", options_.log_dir, slot, n);
  if (!zygote_) {
    failure = zygote_failure_;
    return nullptr;
  }
  std::unique_ptr<Worker> worker;
  try {
    worker = std::make_unique<Worker>(*zygote_, log);
  } catch (const std::exception& e) {
    failure = e.what();
    return nullptr;
  }
  std::string line;
  switch (worker->read_line(options_.startup_timeout, line)) {
    case Worker::Read::kTooLong:
    case Worker::Read::kLine: {
      auto hello = nlohmann::json::parse(line, nullptr, false);
      if (hello.is_object() && hello.value("ready", false)) {
        std::lock_guard lock(mutex_);
        ++stats_.workers_started;
        stats_.startup_seconds_total += hello.value("startup_seconds", 0.0);
        return worker;
      }
      failure = hello.is_object() && hello.contains("fatal") ? hello["fatal"].get<std::string>()
                                                             : "unexpected first line: " + line;
      break;
    }
    case Worker::Read::kTimeout:
      failure = "worker did not start within the start-up timeout";
      worker->kill();
      break;
    case Worker::Read::kEof:
      failure =
          "worker " + worker->wait().describe() + " while starting: " + worker->stderr_tail(500);
      break;
  }
  return nullptr;
}

namespace {

// A case whose worker broke the line protocol: `error` where the harness saw it, with the start
// of the offending line. The line may have been written by a process an earlier case of the same
// worker left behind (a fork writing late), so that case is named.
CaseResult protocol_error(const std::string& case_id, const std::string& what,
                          const std::string& line, const std::string& previous_case) {
  nlohmann::json evidence{{"where", name(Where::kHarness)},
                          {"exception_type", "ProtocolError"},
                          {"message", what},
                          {"line", line.substr(0, 500)}};
  if (!previous_case.empty()) evidence["previous_case_of_worker"] = previous_case;
  return CaseResult{case_id, Outcome::kError, 0.0, std::move(evidence), {}, {}, {}};
}

}  // namespace

CaseResult Scheduler::attempt(int slot, std::unique_ptr<Worker>& worker,
                              std::string& previous_case, const std::string& case_id) {
  CaseResult result;
  result.case_id = case_id;
  const auto start = Clock::now();
  if (!worker) {
    previous_case.clear();
    std::string failure;
    worker = start_worker(slot, failure);
    if (!worker) {
      result.outcome = Outcome::kCrash;
      result.evidence = {{"reason", "worker failed to start"}, {"message", failure}};
      return result;
    }
  }
  worker->send(nlohmann::json{{"case", case_id}}.dump());
  std::string line;
  bool broke_protocol = false;  // then the worker is not trusted with another case
  bool retiring = false;        // the worker ends after this case (its memory grew: worker.py)
  switch (worker->read_line(options_.case_timeout, line)) {
    case Worker::Read::kLine:
      try {
        const nlohmann::json answer = nlohmann::json::parse(line);
        result = CaseResult::from_worker_json(answer);
        retiring = answer.value("retiring", false);
        if (result.case_id != case_id) {
          throw std::runtime_error(
              fmt::format("worker answered for {} while running {}", result.case_id, case_id));
        }
      } catch (const std::exception& e) {
        result = protocol_error(case_id, e.what(), line, previous_case);
        broke_protocol = true;
      }
      break;
    case Worker::Read::kTooLong:
      result = protocol_error(case_id,
                              fmt::format("worker wrote a line longer than the protocol's limit "
                                          "of {} MiB",
                                          kMaxLineBytes >> 20),
                              line, previous_case);
      broke_protocol = true;
      break;
    case Worker::Read::kTimeout:
      worker->kill();
      worker->wait();
      result.outcome = Outcome::kTimeout;
      result.evidence = {{"timeout_seconds", options_.case_timeout.count() / 1000.0},
                         {"worker_pid", worker->pid()}};
      worker.reset();
      break;
    case Worker::Read::kEof: {
      const ExitStatus status = worker->wait();
      result.outcome = Outcome::kCrash;
      result.evidence = {{"message", "worker " + status.describe()},
                         {"worker_pid", worker->pid()},
                         {"stderr_tail", worker->stderr_tail()},
                         {"log", worker->log_path()}};
      if (status.signal) {
        result.evidence["signal"] = *status.signal;
        result.evidence["signal_name"] =
            sigabbrev_np(*status.signal) ? fmt::format("SIG{}", sigabbrev_np(*status.signal)) : "?";
      }
      if (status.exit_code) result.evidence["exit_code"] = *status.exit_code;
      if (status.exit_code == kExitMemoryLimit) {
        result.evidence["message"] =
            fmt::format("exceeded the worker memory limit ({})",
                        describe_bytes(options_.worker.max_memory_bytes));
        result.evidence["max_worker_memory"] = options_.worker.max_memory_bytes;
      }
      worker.reset();
      break;
    }
  }
  if (broke_protocol) {
    worker->kill();
    worker.reset();
  }
  if (retiring && worker) {
    worker.reset();  // it is ending by itself: the next case starts a fresh one
    std::lock_guard lock(mutex_);
    ++stats_.retired;
  }
  if (worker) previous_case = case_id;
  if (is_lost_worker(result.outcome) || broke_protocol) {
    result.duration = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return result;
}

CaseResult combine_attempts(std::vector<CaseResult> attempts) {
  if (attempts.size() == 1) return std::move(attempts.front());
  nlohmann::json summary = nlohmann::json::array();
  double seconds = 0;
  const CaseResult* first_match = nullptr;
  const CaseResult* first_miss = nullptr;
  for (const CaseResult& a : attempts) {
    summary.push_back({{"outcome", a.outcome},
                       {"duration", a.duration},
                       {"message", case_message(a.evidence).substr(0, 300)}});
    seconds += a.duration;
    if (is_success(a.outcome) && !first_match) first_match = &a;
    if (!is_success(a.outcome) && !first_miss) first_miss = &a;
  }
  // Failed and passed: flaky, with the passing attempt's evidence. Otherwise the first attempt
  // that says what every attempt said.
  CaseResult out = first_match && first_miss ? *first_match
                   : first_miss              ? *first_miss
                                             : *first_match;
  if (first_match && first_miss) {
    out.outcome = Outcome::kFlaky;
    out.evidence["first_failure"] = {
        {"outcome", first_miss->outcome},
        {"message", case_message(first_miss->evidence).substr(0, 600)}};
  }
  out.evidence["attempts"] = summary;
  out.duration = seconds;
  return out;
}

void Scheduler::slot_loop(int slot) {
  std::unique_ptr<Worker> worker;
  std::string previous_case;  // the case `worker` ran before the current one
  while (true) {
    const std::size_t index = next_.fetch_add(1);
    if (index >= cases_->size()) break;
    const std::string& case_id = (*cases_)[index];
    std::vector<CaseResult> attempts;
    for (int i = 0; i < std::max(1, options_.repeat); ++i)
      attempts.push_back(attempt(slot, worker, previous_case, case_id));
    // A case that only failed is run again, each time in a fresh worker. A skip is the suite's
    // own decision, not a failure: running it again would only say it again.
    const auto only_failed = [&] {
      return std::all_of(attempts.begin(), attempts.end(),
                         [](const CaseResult& a) { return is_failure(a.outcome); });
    };
    for (int rerun = 0; rerun < options_.reruns && only_failed() &&
                        (!options_.may_rerun || options_.may_rerun(case_id));
         ++rerun) {
      if (worker) worker->kill();
      worker.reset();
      {
        std::lock_guard lock(mutex_);
        ++stats_.reruns;
      }
      attempts.push_back(attempt(slot, worker, previous_case, case_id));
    }
    deliver(combine_attempts(std::move(attempts)));
  }
}

}  // namespace conform
