#include "schedule/Scheduler.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <thread>

namespace conform {

using Clock = std::chrono::steady_clock;

Scheduler::Scheduler(ScheduleOptions options, OnResult on_result)
    : options_(std::move(options)), on_result_(std::move(on_result)) {}

ScheduleStats Scheduler::run(const std::vector<std::string>& cases) {
  cases_ = &cases;
  next_ = 0;
  const int jobs = std::max(1, std::min<int>(options_.jobs, static_cast<int>(cases.size())));
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
  auto worker = std::make_unique<Worker>(options_.worker, "--serve", log);
  std::string line;
  switch (worker->read_line(options_.startup_timeout, line)) {
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

void Scheduler::slot_loop(int slot) {
  std::unique_ptr<Worker> worker;
  while (true) {
    const std::size_t index = next_.fetch_add(1);
    if (index >= cases_->size()) break;
    const std::string& case_id = (*cases_)[index];
    CaseResult result;
    result.case_id = case_id;
    const auto start = Clock::now();
    if (!worker) {
      std::string failure;
      worker = start_worker(slot, failure);
      if (!worker) {
        result.outcome = Outcome::kCrash;
        result.evidence = {{"reason", "worker failed to start"}, {"message", failure}};
        deliver(result);
        continue;
      }
    }
    worker->send(nlohmann::json{{"case", case_id}}.dump());
    std::string line;
    switch (worker->read_line(options_.case_timeout, line)) {
      case Worker::Read::kLine:
        try {
          result = CaseResult::from_worker_json(nlohmann::json::parse(line));
          if (result.case_id != case_id) {
            throw std::runtime_error(
                fmt::format("worker answered for {} while running {}", result.case_id, case_id));
          }
        } catch (const std::exception& e) {
          result = CaseResult{case_id,
                              Outcome::kError,
                              0.0,
                              {{"where", "harness"},
                               {"exception_type", "ProtocolError"},
                               {"message", e.what()},
                               {"line", line.substr(0, 500)}},
                              {},
                              {}};
          worker->kill();
          worker.reset();
        }
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
          result.evidence["signal_name"] = sigabbrev_np(*status.signal)
                                               ? fmt::format("SIG{}", sigabbrev_np(*status.signal))
                                               : "?";
        }
        if (status.exit_code) result.evidence["exit_code"] = *status.exit_code;
        worker.reset();
        break;
      }
    }
    if (is_lost_worker(result.outcome)) {
      result.duration = std::chrono::duration<double>(Clock::now() - start).count();
    }
    deliver(result);
  }
}

}  // namespace conform
