#include "execute/Zygote.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace conform {

namespace {

// A worker the zygote forked: signalled directly, its end reported by the zygote. It leads its
// own process group (zygote.py), so killing it takes what its cases forked along (a child left
// writing to the protocol stream, a rank); the pid alone covers a worker killed before it got
// that far.
class ForkedProcess : public Process {
 public:
  ForkedProcess(Zygote& zygote, int pid) : zygote_(zygote), pid_(pid) {}
  int pid() const override { return pid_; }
  bool running() override { return !zygote_.ended(pid_); }
  void kill() override {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
  ExitStatus wait() override { return zygote_.wait(pid_); }

 private:
  Zygote& zygote_;
  int pid_;
};

std::filesystem::path private_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "neuron-conform-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error(
        fmt::format("cannot create a folder for worker FIFOs: {}", std::strerror(errno)));
  return pattern;
}

}  // namespace

Zygote::Zygote(const WorkerCommand& command, const std::string& log_path,
               std::chrono::milliseconds startup_timeout)
    : control_(command, "--zygote", log_path), timeout_(startup_timeout) {}

const nlohmann::json& Zygote::ready() {
  if (ready_) return hello_;
  std::string line;
  switch (control_.read_line(timeout_, line)) {
    case Worker::Read::kTooLong:
    case Worker::Read::kLine:
      hello_ = nlohmann::json::parse(line, nullptr, false);
      if (hello_.is_object() && hello_.value("ready", false)) break;
      throw std::runtime_error(hello_.is_object() && hello_.contains("fatal")
                                   ? hello_["fatal"].get<std::string>()
                                   : "unexpected first line from the zygote: " + line);
    case Worker::Read::kTimeout:
      control_.kill();
      throw std::runtime_error("the worker zygote did not start within the start-up timeout");
    case Worker::Read::kEof:
      throw std::runtime_error(fmt::format("the worker zygote {} while starting: {}",
                                           control_.wait().describe(), control_.stderr_tail(500)));
  }
  fifo_dir_ = private_folder();
  dispatcher_ = std::thread([this] { dispatch_loop(); });
  ready_ = true;
  return hello_;
}

Zygote::~Zygote() {
  if (!ready_) {
    control_.kill();  // still importing, or never came up: nothing of it is wanted
  } else {
    control_.close_input();  // the zygote ends; workers still running end with their requests
  }
  control_.wait();
  if (dispatcher_.joinable()) dispatcher_.join();
  std::error_code ec;
  if (!fifo_dir_.empty()) std::filesystem::remove_all(fifo_dir_, ec);
}

void Zygote::dispatch_loop() {
  std::string line;
  while (true) {
    const auto read = control_.read_line(std::chrono::hours(24), line);
    if (read == Worker::Read::kTimeout) continue;
    std::lock_guard lock(mutex_);
    if (read == Worker::Read::kEof) {
      gone_ = true;
      changed_.notify_all();
      return;
    }
    const auto message = nlohmann::json::parse(line, nullptr, false);
    if (read != Worker::Read::kLine || !message.is_object()) continue;  // not the zygote's word
    if (message.contains("spawned") && message["spawned"].is_number_integer()) {
      // A pid is reused once its process was reaped, and the zygote reported that end before
      // this fork: an end recorded under this pid belongs to an earlier worker.
      const int pid = message["spawned"].get<int>();
      ended_.erase(pid);
      spawned_.push_back(pid);
    } else if (message.contains("exited") && message["exited"].is_number_integer()) {
      ExitStatus status;
      if (message.value("signal", nlohmann::json()).is_number_integer())
        status.signal = message["signal"].get<int>();
      if (message.value("code", nlohmann::json()).is_number_integer())
        status.exit_code = message["code"].get<int>();
      ended_[message["exited"].get<int>()] = status;
    }
    changed_.notify_all();
  }
}

Zygote::Child Zygote::spawn(const std::string& log_path, const std::string& mode) {
  std::lock_guard spawning(spawn_mutex_);
  const int n = fifos_++;
  const auto requests_path = fifo_dir_ / fmt::format("{}.in", n);
  const auto results_path = fifo_dir_ / fmt::format("{}.out", n);
  for (const auto& path : {requests_path, results_path}) {
    if (::mkfifo(path.c_str(), 0600) != 0)
      throw std::runtime_error(
          fmt::format("cannot create the FIFO {}: {}", path.string(), std::strerror(errno)));
  }
  // The FIFOs are unlinked once both ends are open (or the attempt failed).
  struct Unlink {
    std::filesystem::path a, b;
    ~Unlink() {
      std::error_code ec;
      std::filesystem::remove(a, ec), std::filesystem::remove(b, ec);
    }
  } unlink{requests_path, results_path};
  Child child;
  // Our read end first, without waiting for the writer: the worker opens its stdin, then this.
  child.results = Fd(::open(results_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  control_.send(nlohmann::json{{"spawn",
                                {{"stdin", requests_path.string()},
                                 {"stdout", results_path.string()},
                                 {"stderr", log_path},
                                 {"mode", mode}}}}
                    .dump());
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  int pid = -1;
  {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_until(lock, deadline, [this] { return !spawned_.empty() || gone_; }) ||
        spawned_.empty())
      throw std::runtime_error("the worker zygote did not fork a worker");
    pid = spawned_.front();
    spawned_.pop_front();
  }
  child.process = std::make_unique<ForkedProcess>(*this, pid);
  // The write end opens once the worker has opened its stdin; until then ENXIO.
  while (true) {
    const int fd = ::open(requests_path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      child.requests = Fd(fd);
      break;
    }
    if (errno != ENXIO || ended(pid) || std::chrono::steady_clock::now() > deadline) {
      child.process->kill();
      throw std::runtime_error(fmt::format("the forked worker {} did not connect: {}", pid,
                                           ended(pid) ? "it ended" : std::strerror(errno)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The worker opens its results FIFO right after its stdin and says hello at once: wait for
  // the hello before the names go. (A FIFO whose writer never came may poll as hung up.)
  while (true) {
    pollfd hello{child.results.get(), POLLIN, 0};
    if (::poll(&hello, 1, 5) > 0 && (hello.revents & POLLIN)) break;
    if (ended(pid) || std::chrono::steady_clock::now() > deadline) {
      child.process->kill();
      throw std::runtime_error(
          fmt::format("the forked worker {} did not say hello: {}", pid,
                      ended(pid) ? "it ended (its log says why)" : "no answer in time"));
    }
  }
  return child;
}

bool Zygote::ended(int pid) {
  std::lock_guard lock(mutex_);
  return gone_ || ended_.contains(pid);
}

ExitStatus Zygote::wait(int pid) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return gone_ || ended_.contains(pid); });
  const auto it = ended_.find(pid);
  return it == ended_.end() ? ExitStatus{} : it->second;
}

}  // namespace conform
