#pragma once

#include "execute/Worker.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace conform {

// A worker process that has imported torch, the backend and the suite but never touched the
// device, and forks workers on request (harness/worker/worker.py --zygote): the run's listing
// worker and its serving workers, including a fresh one after a crash, a timeout or for a rerun,
// each cost a fork instead of seconds of imports.
// A forked worker's requests and results travel through two FIFOs in a private folder; the
// zygote reports how each of its workers ended. The zygote dies with the harness, and its
// workers with the zygote (PR_SET_PDEATHSIG both times).
class Zygote {
 public:
  // Starts the zygote, which then imports everything while the caller goes on (a run lists its
  // suite meanwhile). The zygote dies with the thread that constructs it: construct it on one
  // that outlives its workers.
  Zygote(const WorkerCommand& command, const std::string& log_path,
         std::chrono::milliseconds startup_timeout);
  // A zygote that never became ready is killed; a ready one is asked to end.
  ~Zygote();
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // Waits until the zygote is ready (once) and returns what it said of itself (versions,
  // start-up seconds); throws std::runtime_error with its own reason (an unimportable backend,
  // ...) when it cannot start. spawn() needs it ready.
  const nlohmann::json& ready();

  struct Child {
    Fd requests, results;
    std::unique_ptr<Process> process;
  };
  // Forks a worker whose stderr goes to `log_path`, in `mode`: "serve" (cases from its
  // requests, a result line each) or "list" (the suite's listing, as worker.py --list writes
  // it: a run lists its suite without a Python start-up of its own); throws std::runtime_error
  // when the zygote does not answer or the worker does not connect in time.
  Child spawn(const std::string& log_path, const std::string& mode = "serve");

  // How a forked worker ended, once the zygote has reported it (blocks until then, or until
  // the zygote itself is gone).
  ExitStatus wait(int pid);
  bool ended(int pid);

 private:
  void dispatch_loop();

  Worker control_;  // the zygote itself: spawn requests out, replies and exit reports in
  std::chrono::milliseconds timeout_;
  std::filesystem::path fifo_dir_;
  nlohmann::json hello_;
  bool ready_ = false;
  std::mutex spawn_mutex_;  // one spawn request in flight: the next reply is its
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<int> spawned_;
  std::map<int, ExitStatus> ended_;
  bool gone_ = false;
  int fifos_ = 0;
  std::thread dispatcher_;
};

}  // namespace conform
