#include "schedule/Scheduler.h"

#include "common/Evidence.h"
#include "common/Text.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <thread>

namespace conform {

using Clock = std::chrono::steady_clock;

// How many of the cases a worker ran before a late error surfaced are rerun to find its case,
// newest first: queued work fails soon after it was queued.
constexpr std::size_t kLateErrorCandidates = 8;

Scheduler::Scheduler(ScheduleOptions options, OnResult on_result)
    : options_(std::move(options)), on_result_(std::move(on_result)) {}

void Scheduler::adopt(std::unique_ptr<Zygote> zygote) {
  zygote_ = std::move(zygote);
}

ScheduleStats Scheduler::run(const std::vector<std::string>& cases) {
  cases_ = &cases;
  next_ = 0;
  stopping_ = false;
  groups_.clear();
  std::string group;  // the key of the group being gathered
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::string key = options_.group_of ? options_.group_of(cases[i]) : std::string();
    if (!groups_.empty() && options_.group_of && key == group)
      groups_.back().second = i + 1;
    else
      groups_.emplace_back(i, i + 1);
    group = std::move(key);
  }
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
        stopping_ = true;
        std::lock_guard lock(mutex_);
        if (!failure_) failure_ = std::current_exception();
      }
    });
  }
  for (auto& t : slots) t.join();
  if (failure_) std::rethrow_exception(failure_);
  return stats_;
}

void Scheduler::deliver(const CaseResult& result, bool amends) {
  std::lock_guard lock(mutex_);
  if (amends && !delivered_.contains(result.case_id)) {
    // found while the case's own attempts were still going on (a rerun's worker ending): it
    // amends the result the case delivers
    pending_amendments_.insert_or_assign(result.case_id, result);
    return;
  }
  if (!amends) {
    if (result.outcome == Outcome::kCrash) ++stats_.crashes;
    if (result.outcome == Outcome::kTimeout) ++stats_.timeouts;
    if (result.outcome == Outcome::kFlaky) ++stats_.flaky;
  }
  try {
    on_result_(result, amends);
    if (!amends) {
      delivered_.insert(result.case_id);
      if (auto pending = pending_amendments_.extract(result.case_id))
        on_result_(pending.mapped(), true);
    }
  } catch (...) {
    stopping_ = true;  // before this slot's worker is torn down: no other slot goes on
    throw;
  }
}

std::unique_ptr<Worker> Scheduler::start_worker(Slot& slot, std::string& failure) {
  const int n = spawned_.fetch_add(1);
  const std::string log = fmt::format("{}/worker-{}-{}.log", options_.log_dir, slot.index, n);
  if (!zygote_) {
    failure = zygote_failure_;
    return nullptr;
  }
  std::unique_ptr<Worker> worker;
  try {
    worker = std::make_unique<Worker>(*zygote_, log, slot.blocking ? "serve_blocking" : "serve");
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

// A worker's report that the case it runs has spent `seconds` compiling so far
// (harness/worker/compile_progress.py): true, and `compiling` updated, when `message` is one for
// `case_id`; false for anything else, which is then read as the case's answer.
bool compile_progress(const nlohmann::json& message, const std::string& case_id,
                      double& compiling) {
  if (!message.is_object()) return false;
  const auto progress = message.find("compiling");
  if (progress == message.end() || !progress->is_object()) return false;
  const auto about = progress->find("case");
  const auto seconds = progress->find("seconds");
  if (about == progress->end() || !about->is_string() || *about != case_id ||
      seconds == progress->end() || !seconds->is_number())
    return false;
  compiling = std::max(compiling, seconds->get<double>());
  return true;
}

}  // namespace

CaseResult Scheduler::read_answer(Slot& slot, const std::string& case_id,
                                  std::optional<LateError>& late) {
  CaseResult result;
  result.case_id = case_id;
  const auto start = Clock::now();
  auto& worker = slot.worker;
  const std::string previous_case = slot.ran.empty() ? "" : slot.ran.back().case_id;
  nlohmann::json request =
      options_.case_request ? options_.case_request(case_id) : nlohmann::json();
  if (!request.is_object()) request = nlohmann::json::object();
  request["case"] = case_id;
  worker->send(request.dump());
  std::string line;
  bool broke_protocol = false;  // then the worker is not trusted with another case
  bool retiring = false;        // the worker ends after this case (worker.py says why)
  // The time limit counts run time: the compile time the worker reports extends it, up to the
  // compile timeout.
  double compiling = 0.0;
  const auto deadline = [&] {
    const std::chrono::duration<double> given(
        std::min(compiling, std::chrono::duration<double>(options_.compile_timeout).count()));
    return start + options_.case_timeout + std::chrono::duration_cast<Clock::duration>(given);
  };
  Worker::Read read;
  nlohmann::json parsed;
  do {
    const auto left = deadline() - Clock::now();
    if (left <= Clock::duration::zero()) {  // read_line serves a queued line even at no time left
      read = Worker::Read::kTimeout;
      break;
    }
    read = worker->read_line(std::chrono::ceil<std::chrono::milliseconds>(left), line);
    if (read == Worker::Read::kLine) parsed = nlohmann::json::parse(line, nullptr, false);
  } while (read == Worker::Read::kLine && compile_progress(parsed, case_id, compiling));
  switch (read) {
    case Worker::Read::kLine:
      try {
        // Parsed again where it is no JSON, for the parser's account of why.
        const nlohmann::json answer = parsed.is_discarded() ? nlohmann::json::parse(line) : parsed;
        retiring = answer.value("retiring", false);
        if (answer.contains("late_error")) {  // the case did not run: its worker's device failed
          late = LateError{answer.at("late_error"), slot.ran};
          worker->wait();
          worker.reset();
          return result;
        }
        result = CaseResult::from_worker_json(answer);
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
      if (compiling > 0) {  // as the worker reported it; at most the compile timeout was given
        result.evidence["compiling_seconds"] = compiling;
        result.evidence["compile_timeout_seconds"] = options_.compile_timeout.count() / 1000.0;
      }
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
        result.evidence["message"] = fmt::format("exceeded the worker memory limit ({})",
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
  if (is_lost_worker(result.outcome) || broke_protocol) {
    result.duration = std::chrono::duration<double>(Clock::now() - start).count();
  }
  if (worker) slot.ran.push_back({case_id, result.outcome});
  if (retiring && worker) {
    finish_worker(slot);  // it is ending by itself: the next case starts a fresh one
    std::lock_guard lock(mutex_);
    ++stats_.retired;
  }
  return result;
}

Scheduler::Attempt Scheduler::attempt(Slot& slot, const std::string& case_id) {
  while (true) {
    Attempt out;
    out.result.case_id = case_id;
    if (!slot.worker) {
      slot.ran.clear();
      std::string failure;
      slot.worker = start_worker(slot, failure);
      if (!slot.worker) {
        out.result.outcome = Outcome::kCrash;
        out.result.evidence = {{"reason", "worker failed to start"}, {"message", failure}};
        return out;
      }
    }
    out.ran_before = slot.ran;
    std::optional<LateError> late;
    out.result = read_answer(slot, case_id, late);
    if (!late) return out;
    if (late->candidates.empty()) {
      // A fresh worker's device failed before its first case: nothing earlier to charge, and
      // the case cannot run; the device's error is recorded where the case stood.
      out.result.outcome = Outcome::kError;
      out.result.evidence = late->evidence;
      out.result.evidence["message"] =
          "the device raised an error before the case ran, in a "
          "fresh worker: " +
          case_message(late->evidence);
      return out;
    }
    attribute(slot.index, *late, true);  // then the case runs in a fresh worker
  }
}

std::optional<Scheduler::LateError> Scheduler::end_worker(Slot& slot) {
  std::optional<LateError> late;
  if (!slot.worker) return late;
  Worker& worker = *slot.worker;
  worker.close_input();  // the worker waits on its device once more, then ends
  const auto patience =
      std::min<std::chrono::milliseconds>(options_.case_timeout, std::chrono::seconds(60));
  std::string line;
  while (true) {
    const Worker::Read read = worker.read_line(patience, line);
    if (read == Worker::Read::kLine) {
      const auto message = nlohmann::json::parse(line, nullptr, false);
      if (message.is_object() && message.contains("late_error"))
        late = LateError{message["late_error"], slot.ran};
      continue;
    }
    if (read == Worker::Read::kTooLong) continue;
    if (read == Worker::Read::kTimeout) worker.kill();
    break;
  }
  worker.wait();
  slot.worker.reset();
  slot.ran.clear();
  return late;
}

void Scheduler::finish_worker(Slot& slot) {
  if (auto late = end_worker(slot)) attribute(slot.index, *late, true);
}

std::optional<std::string> Scheduler::attribute(int slot, const LateError& late, bool charge) {
  {
    std::lock_guard lock(mutex_);
    ++stats_.late_errors;
  }
  // Newest first: queued work fails soon after it was queued. A case that failed already is
  // not a candidate: its failure is on record, and the late error is someone's pass.
  std::vector<Ran> candidates;
  for (auto it = late.candidates.rbegin(); it != late.candidates.rend(); ++it) {
    if (is_success(it->outcome) && candidates.size() < kLateErrorCandidates)
      candidates.push_back(*it);
  }
  nlohmann::json checked = nlohmann::json::array();
  for (const Ran& c : candidates) checked.push_back(c.case_id);
  const auto annotate = [&](CaseResult& r, const Ran& c, const std::string& how) {
    r.evidence["surfaced_at"] = late.evidence.value("surfaced_at", "a later case");
    r.evidence["late_error"] = {{"exception_type", Evidence::read(late.evidence).exception_type},
                                {"message", case_message(late.evidence).substr(0, 600)}};
    r.evidence["outcome_before"] = name(c.outcome);
    r.evidence["attributed_by"] = how;
    r.evidence["candidates"] = checked;
  };
  for (const Ran& c : candidates) {
    Slot alone{slot, options_.attribute_blocking, nullptr, {}};
    Attempt a = attempt(alone, c.case_id);
    const std::optional<LateError> at_exit = end_worker(alone);
    CaseResult found;
    if (is_failure(a.result.outcome)) {
      found = std::move(a.result);
    } else if (at_exit) {
      found =
          CaseResult{c.case_id, Outcome::kError, a.result.duration, at_exit->evidence, {}, {}, {}};
    } else {
      continue;
    }
    annotate(found, c,
             options_.attribute_blocking ? "rerun alone, every device op run at its call"
                                         : "rerun alone");
    deliver(found, true);
    std::lock_guard lock(mutex_);
    ++stats_.late_attributed;
    return c.case_id;
  }
  if (!charge || candidates.empty()) return std::nullopt;
  // No rerun failed: the device's error stands, charged where it most likely came from.
  CaseResult charged{candidates.front().case_id, Outcome::kError, 0.0, late.evidence, {}, {}, {}};
  annotate(charged, candidates.front(),
           fmt::format("not reproduced: none of the {} case(s) the worker ran before failed "
                       "when rerun alone; charged to the last of them",
                       candidates.size()));
  deliver(charged, true);
  return std::nullopt;
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

void Scheduler::slot_loop(int index) {
  Slot slot{index, options_.blocking, nullptr, {}};
  while (!stopping_) {
    const std::size_t next = next_.fetch_add(1);
    if (next >= groups_.size()) break;
    for (std::size_t i = groups_[next].first; i < groups_[next].second && !stopping_; ++i)
      run_case(slot, (*cases_)[i]);
  }
  finish_worker(slot);
}

void Scheduler::run_case(Slot& slot, const std::string& case_id) {
  std::vector<Attempt> attempts;
  for (int i = 0; i < std::max(1, options_.repeat); ++i) attempts.push_back(attempt(slot, case_id));
  // A case that only failed is run again, each time in a fresh worker. A skip is the suite's
  // own decision, not a failure: running it again would only say it again.
  const auto only_failed = [&] {
    return std::all_of(attempts.begin(), attempts.end(),
                       [](const Attempt& a) { return is_failure(a.result.outcome); });
  };
  for (int rerun = 0; rerun < options_.reruns && only_failed() &&
                      (!options_.may_rerun || options_.may_rerun(case_id));
       ++rerun) {
    finish_worker(slot);
    {
      std::lock_guard lock(mutex_);
      ++stats_.reruns;
    }
    attempts.push_back(attempt(slot, case_id));
  }
  // Failed after other cases and matched alone: the error may be a predecessor's, raised late.
  const Attempt& first = attempts.front();
  const bool matched_alone = std::any_of(attempts.begin(), attempts.end(), [](const Attempt& a) {
    return is_success(a.result.outcome);
  });
  std::optional<std::string> whose;
  if (is_failure(first.result.outcome) && matched_alone && !first.ran_before.empty()) {
    LateError late{first.result.evidence, first.ran_before};
    late.evidence["surfaced_at"] = case_id;
    whose = attribute(slot.index, late, false);
  }
  std::vector<CaseResult> results;
  for (Attempt& a : attempts) results.push_back(std::move(a.result));
  if (whose) {  // the first attempt met another case's error: the others are the case's own
    const CaseResult met = std::move(results.front());
    results.erase(results.begin());
    CaseResult own = combine_attempts(std::move(results));
    own.evidence["met_late_error"] = {{"of", *whose},
                                      {"outcome", name(met.outcome)},
                                      {"message", case_message(met.evidence).substr(0, 600)}};
    deliver(own);
  } else {
    deliver(combine_attempts(std::move(results)));
  }
}

}  // namespace conform
