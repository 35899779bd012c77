#include "execute/Worker.h"

#include "common/Environment.h"
#include "execute/Zygote.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace bp = boost::process;

namespace conform {

WorkerCommand worker_command(const std::string& suite, const std::string& backend_module,
                             const std::string& device, std::int64_t seed,
                             const nlohmann::json& suite_options) {
  WorkerCommand command;
  command.python = python_executable();
  command.script = data_root() + "/harness/worker/worker.py";
  command.args = {"--backend-module", backend_module, "--seed", std::to_string(seed)};
  if (!device.empty()) {  // none: the device the backend names (its PrivateUse1 backend's name)
    command.args.push_back("--device");
    command.args.push_back(device);
  }
  if (!suite.empty()) {  // none: a mode that loads no suite (--overloads, --suites)
    command.args.push_back("--suite");
    command.args.push_back(suite);
  }
  if (!suite_options.empty()) {
    command.args.push_back("--suite-options");
    command.args.push_back(suite_options.dump());
  }
  // Python salts its string hashes per process unless PYTHONHASHSEED is set, and with them the
  // order of a set of strings: a model that iterates one (Gemma 4 its layer types) traces another
  // graph in each worker, which no compile cache serves and no rerun reproduces. The run's seed
  // fixes them; a user's own setting wins.
  if (std::getenv("PYTHONHASHSEED") == nullptr) {
    command.env.emplace_back("PYTHONHASHSEED", std::to_string(static_cast<std::uint32_t>(seed)));
  }
  return command;
}

std::int64_t default_worker_memory(int jobs) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  const std::int64_t total = static_cast<std::int64_t>(pages) * page;
  // A tenth, at least 2 GiB, stays for the harness, the zygote and the system.
  const std::int64_t reserve = std::max<std::int64_t>(total / 10, std::int64_t{2} << 30);
  return std::max<std::int64_t>(total - reserve, std::int64_t{1} << 30) / std::max(1, jobs);
}

std::string ExitStatus::describe() const {
  if (signal) return fmt::format("killed by signal {} ({})", *signal, strsignal(*signal));
  if (exit_code) return fmt::format("exited with code {}", *exit_code);
  return "ended, how is unknown";
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

namespace {

// A process we started with Boost.Process.
class ChildProcess : public Process {
 public:
  explicit ChildProcess(bp::child child) : child_(std::move(child)) {}
  int pid() const override { return child_.id(); }
  bool running() override {
    std::error_code ec;
    return child_.running(ec);
  }
  void kill() override {
    std::error_code ec;
    child_.terminate(ec);  // SIGKILL
  }
  ExitStatus wait() override {
    std::error_code ec;
    child_.wait(ec);
    const int raw = child_.native_exit_code();
    ExitStatus status;
    if (WIFSIGNALED(raw)) {
      status.signal = WTERMSIG(raw);
    } else if (WIFEXITED(raw)) {
      status.exit_code = WEXITSTATUS(raw);
    }
    return status;
  }

 private:
  bp::child child_;
};

// A duplicate of `fd` that is close-on-exec, so no later worker inherits it.
Fd private_copy(int fd) {
  return Fd(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
}

}  // namespace

Worker::Worker(const WorkerCommand& command, const std::string& mode, const std::string& log_path)
    : log_path_(log_path) {
  std::vector<std::string> args{command.script};
  args.insert(args.end(), command.args.begin(), command.args.end());
  if (command.max_memory_bytes > 0) {
    args.push_back("--max-memory");
    args.push_back(std::to_string(command.max_memory_bytes));
  }
  args.push_back(mode);
  bp::environment child_env = boost::this_process::environment();
  for (const auto& [key, value] : command.env) child_env[key] = value;
  {
    // A worker must not inherit the pipes of workers started before it: it would keep them
    // open, and their crashes would never show as end of file. Our ends are close-on-exec
    // copies, and the pipes exist only under this lock, so no other thread forks while they
    // are inheritable. (bp::limit_handles would do it in the child, but it allocates between
    // fork and exec, which can deadlock a multi-threaded parent.)
    static std::mutex spawn_mutex;
    std::lock_guard lock(spawn_mutex);
    bp::pipe requests, results;
    bp::child child(bp::exe = command.python, bp::args = args, child_env,
                    bp::std_in<requests, bp::std_out> results, bp::std_err > log_path_,
                    DiesWithParent{});
    in_ = private_copy(requests.native_sink());
    out_ = private_copy(results.native_source());
    process_ = std::make_unique<ChildProcess>(std::move(child));
  }  // the pipes' other ends close here: the worker's exit shows as end of file
  start_reader();
}

Worker::Worker(Zygote& zygote, const std::string& log_path, const std::string& mode)
    : log_path_(log_path) {
  Zygote::Child child = zygote.spawn(log_path, mode);
  in_ = std::move(child.requests);
  out_ = std::move(child.results);
  process_ = std::move(child.process);
  start_reader();
}

void Worker::start_reader() {
  ::fcntl(out_.get(), F_SETFL, ::fcntl(out_.get(), F_GETFL) | O_NONBLOCK);
  reader_ = std::thread([this] { read_loop(); });
}

Worker::~Worker() {
  try {
    if (process_->running()) {
      // Closing stdin asks the worker to finish; give it a moment, then kill it. (Boost 1.74's
      // child::wait_for spins in a signal handler when several threads wait: poll instead.)
      close_input();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (process_->running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (process_->running()) kill();
    }
    if (!status_) wait();
  } catch (...) {
    // Destruction must not throw; the process is gone or will be reaped by init.
  }
  stop_reading_ = true;
  if (reader_.joinable()) reader_.join();
}

void Worker::read_loop() {
  // Polled with a timeout, so a worker that never connects its stream (a fork that died first)
  // cannot keep the reader forever. A FIFO nobody has written to yet polls as nothing.
  LineSplitter splitter;
  std::vector<ProtocolLine> complete;
  char buffer[65536];
  bool ended = false;
  while (!ended && !stop_reading_) {
    {
      std::unique_lock lock(mutex_);
      if (queued_bytes_ >= kMaxLineBytes) {  // back-pressure: let the pipe fill, the worker block
        ready_.wait_for(lock, std::chrono::milliseconds(200));
        continue;
      }
    }
    pollfd p{out_.get(), POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = ::read(out_.get(), buffer, sizeof buffer);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    ended = n <= 0;
    if (n > 0) splitter.feed(std::string_view(buffer, static_cast<std::size_t>(n)), complete);
    if (complete.empty()) continue;
    std::lock_guard lock(mutex_);
    for (auto& line : complete) {
      queued_bytes_ += line.text.size();
      lines_.push_back(std::move(line));
    }
    complete.clear();
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
  ProtocolLine next = std::move(lines_.front());
  lines_.pop_front();
  queued_bytes_ -= next.text.size();
  ready_.notify_all();  // the reader may be waiting for room
  line = std::move(next.text);
  return next.too_long ? Read::kTooLong : Read::kLine;
}

void Worker::send(const std::string& line) {
  // A worker that died makes this fail (EPIPE; SIGPIPE is ignored): its end of file says so.
  const std::string text = line + '\n';
  std::size_t written = 0;
  while (written < text.size() && in_.get() >= 0) {
    const ssize_t n = ::write(in_.get(), text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

void Worker::close_input() {
  in_.reset();
}

void Worker::kill() {
  process_->kill();
}

ExitStatus Worker::wait() {
  if (status_) return *status_;
  status_ = process_->wait();
  stop_reading_ = true;
  if (reader_.joinable()) reader_.join();
  return *status_;
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

nlohmann::json run_helper(const std::string& script, const std::vector<std::string>& args,
                          const std::string& input) {
  std::vector<std::string> argv{data_root() + "/harness/worker/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  bp::opstream in;
  bp::ipstream out;
  bp::child child(bp::exe = python_executable(), bp::args = argv, bp::std_in < in, bp::std_out > out,
                  DiesWithParent{});
  in << input;
  in.flush();
  in.pipe().close();
  std::ostringstream text;
  text << out.rdbuf();
  child.wait();
  const auto document = nlohmann::json::parse(text.str(), nullptr, false);
  if (document.is_discarded() || !document.is_object())
    throw std::runtime_error(
        fmt::format("the helper {} exited {} without a result", script, child.exit_code()));
  if (document.contains("fatal")) throw std::invalid_argument(document["fatal"].get<std::string>());
  return document;
}

}  // namespace conform
