#pragma once

#include "execute/LineSplitter.h"

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <nlohmann/json.hpp>

#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace conform {

class Zygote;

// How to start a worker: `python script args... <mode>`, stderr appended to `log_path`.
struct WorkerCommand {
  std::string python;
  std::string script;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  // The address space each serving worker may use (RLIMIT_AS, set by the worker itself);
  // 0: unlimited. A case that exceeds it ends its worker with kExitMemoryLimit.
  std::int64_t max_memory_bytes = 0;
};

// The default of run --max-worker-memory: the machine's memory less a reserve for the harness
// and the system, shared by `jobs` workers; 0 when the machine's memory cannot be read.
std::int64_t default_worker_memory(int jobs);

// The command that starts a worker (harness/worker/worker.py) of `suite` against
// `backend_module` on `device`; `suite_options` (an object of texts) go to the suite's configure().
WorkerCommand worker_command(const std::string& suite, const std::string& backend_module,
                             const std::string& device, std::int64_t seed,
                             const nlohmann::json& suite_options = nlohmann::json::object());

// Runs a helper of the worker's folder (`python <data root>/harness/worker/<script> args...`:
// check_model.py, which runs the package model_check/; pytorch_configs.py), writing `input` to
// its stdin, and returns the one JSON document it prints on stdout (protocol.py's stream). A
// {"fatal": WHY} document is bad input (std::invalid_argument); no document at all,
// std::runtime_error.
nlohmann::json run_helper(const std::string& script, const std::vector<std::string>& args,
                          const std::string& input = "");

// A Boost.Process handler that ties a child's life to ours: in the child, between fork and
// exec, it asks the kernel for SIGKILL when the parent dies (PR_SET_PDEATHSIG, kept across
// exec), then exits if the parent is already gone. So no worker outlives the harness, however
// the harness dies (kill -9 included) and whatever the worker is doing (a kernel hanging in C).
// The signal follows the thread that spawned the child: spawn from a thread that outlives it.
struct DiesWithParent : boost::process::extend::handler {
  pid_t parent = ::getpid();
  template <typename Executor>
  void on_exec_setup(Executor&) const {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
  }
};

// How a worker process ended.
struct ExitStatus {
  std::optional<int> exit_code;  // when it exited
  std::optional<int> signal;     // when a signal killed it
  std::string describe() const;
};

// A file descriptor, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset();

 private:
  int fd_ = -1;
};

// The process behind a worker: one we started, or one a zygote forked for us.
class Process {
 public:
  virtual ~Process() = default;
  virtual int pid() const = 0;
  virtual bool running() = 0;
  virtual void kill() = 0;
  // Blocks until the process has ended.
  virtual ExitStatus wait() = 0;
};

// One worker process and its line protocol. A reader thread turns its stdout into lines, so
// that reading can time out; a process that ends (or is killed) ends the reader with an end of
// file. Lines are cut at kMaxLineBytes (LineSplitter), and the reader stops reading while that
// much waits unread: a worker that floods its stream blocks in write() instead of filling the
// harness's memory, which stays within about twice the limit per worker.
class Worker {
 public:
  // kTooLong: the worker wrote a line over kMaxLineBytes; `line` holds its first bytes.
  enum class Read { kLine, kEof, kTimeout, kTooLong };

  // Starts `python script args... mode` with stderr appended to `log_path`.
  Worker(const WorkerCommand& command, const std::string& mode, const std::string& log_path);
  // A worker forked by `zygote` in `mode` (Zygote::spawn): a fork, not a Python start-up.
  Worker(Zygote& zygote, const std::string& log_path, const std::string& mode = "serve");
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  Read read_line(std::chrono::milliseconds timeout, std::string& line);
  void send(const std::string& line);
  void close_input();
  void kill();
  // Waits for the process to end (after end of file or kill()).
  ExitStatus wait();
  int pid() const { return process_->pid(); }
  const std::string& log_path() const { return log_path_; }
  // The last `bytes` of what the worker wrote to stderr.
  std::string stderr_tail(std::size_t bytes = 2000) const;

 private:
  void start_reader();
  void read_loop();

  std::string log_path_;
  Fd in_, out_;  // its stdin (we write), its protocol stream (we read; non-blocking)
  std::unique_ptr<Process> process_;
  std::thread reader_;
  std::atomic<bool> stop_reading_{false};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<ProtocolLine> lines_;
  std::size_t queued_bytes_ = 0;
  bool eof_ = false;
  std::optional<ExitStatus> status_;
};

}  // namespace conform
