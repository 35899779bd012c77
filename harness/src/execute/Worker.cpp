#include "execute/Worker.h"

#include "common/Environment.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/wait.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bp = boost::process;

namespace conform {

WorkerCommand worker_command(const std::string& suite, const std::string& backend_module,
                             const std::string& device, std::int64_t seed) {
  WorkerCommand command;
  command.python = python_executable();
  command.script = source_dir() + "/harness/worker/worker.py";
  command.args = {"--suite",  suite,  "--backend-module", backend_module,
                  "--device", device, "--seed",           std::to_string(seed)};
  return command;
}

std::string ExitStatus::describe() const {
  if (signal) return fmt::format("killed by signal {} ({})", *signal, strsignal(*signal));
  if (exit_code) return fmt::format("exited with code {}", *exit_code);
  return "still running";
}

Worker::Worker(const WorkerCommand& command, const std::string& mode, const std::string& log_path)
    : log_path_(log_path) {
  std::vector<std::string> args{command.script};
  args.insert(args.end(), command.args.begin(), command.args.end());
  args.push_back(mode);
  auto env = boost::this_process::environment();
  bp::environment child_env = env;
  for (const auto& [key, value] : command.env) child_env[key] = value;
  {
    // A worker must not inherit the pipes of workers started before it: it would keep them
    // open, and their crashes would never show as end of file. Our ends are marked
    // close-on-exec right after the spawn, and spawns are serialised so that no other thread
    // forks in between. (bp::limit_handles would do it in the child, but it allocates between
    // fork and exec, which can deadlock a multi-threaded parent.)
    static std::mutex spawn_mutex;
    std::lock_guard lock(spawn_mutex);
    // The pipes too are created under the lock: made outside it, they could leak into a
    // worker another thread is starting at that moment.
    in_ = std::make_unique<bp::opstream>();
    out_ = std::make_unique<bp::ipstream>();
    child_ = bp::child(bp::exe = command.python, bp::args = args, child_env,
                       bp::std_in<*in_, bp::std_out> * out_, bp::std_err > log_path_,
                       DiesWithParent{});
    for (int fd : {in_->pipe().native_sink(), in_->pipe().native_source(),
                   out_->pipe().native_source(), out_->pipe().native_sink()}) {
      if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  pid_ = child_.id();
  reader_ = std::thread([this] { read_loop(); });
}

Worker::~Worker() {
  try {
    if (child_.running()) {
      // Closing stdin asks the worker to finish; give it a moment, then kill it. (Boost 1.74's
      // child::wait_for spins in a signal handler when several threads wait: poll instead.)
      close_input();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (child_.running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (child_.running()) kill();
    }
    if (!status_) wait();
  } catch (...) {
    // Destruction must not throw; the process is gone or will be reaped by init.
  }
  if (reader_.joinable()) reader_.join();
}

void Worker::read_loop() {
  std::string line;
  while (std::getline(*out_, line)) {
    std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
    ready_.notify_all();
  }
  std::lock_guard lock(mutex_);
  eof_ = true;
  ready_.notify_all();
}

Worker::Read Worker::read_line(std::chrono::milliseconds timeout, std::string& line) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [this] { return !lines_.empty() || eof_; }))
    return Read::kTimeout;
  if (lines_.empty()) return Read::kEof;
  line = std::move(lines_.front());
  lines_.pop_front();
  return Read::kLine;
}

void Worker::send(const std::string& line) {
  *in_ << line << '\n';
  in_->flush();
}

void Worker::close_input() {
  in_->pipe().close();
}

void Worker::kill() {
  std::error_code ec;
  child_.terminate(ec);  // SIGKILL
}

ExitStatus Worker::wait() {
  if (status_) return *status_;
  std::error_code ec;
  child_.wait(ec);
  const int raw = child_.native_exit_code();
  ExitStatus status;
  if (WIFSIGNALED(raw)) {
    status.signal = WTERMSIG(raw);
  } else if (WIFEXITED(raw)) {
    status.exit_code = WEXITSTATUS(raw);
  }
  if (reader_.joinable()) reader_.join();
  status_ = status;
  return status;
}

std::string Worker::stderr_tail(std::size_t bytes) const {
  std::ifstream in(log_path_, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::size_t>(in.tellg());
  in.seekg(static_cast<std::streamoff>(size > bytes ? size - bytes : 0));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace conform
