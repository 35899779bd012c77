#include "engine/Claim.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <fstream>
#include <string>
#include <thread>

namespace neuronsim::engine {

namespace fs = std::filesystem;

namespace {

std::string this_host() {
  std::array<char, 256> name{};
  ::gethostname(name.data(), name.size() - 1);
  return name.data();
}

fs::path claim_path(const fs::path& entry) {
  return entry.string() + ".claim";
}

// Whether the claim's compiling process is gone: dead on this host, the claim older than `expiry`
// (a process on another host), or never named (killed between making and naming it).
bool stale(const fs::path& claim, std::chrono::duration<double> expiry) {
  std::ifstream in(claim);
  std::string host;
  long pid = 0;
  const bool named = static_cast<bool>(in >> host >> pid);
  if (named && host == this_host() && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
      errno == ESRCH) {
    return true;
  }
  std::error_code ec;
  const auto age = fs::file_time_type::clock::now() - fs::last_write_time(claim, ec);
  // A claim is named the instant it is made: one still unnamed after a second was left by a
  // process killed in between (or one that could not write), and waits for no expiry.
  constexpr std::chrono::seconds kNamingGrace{1};
  return !ec && (age > expiry || (!named && age > kNamingGrace));
}

}  // namespace

bool claim_entry(const fs::path& entry, std::chrono::duration<double> expiry,
                 std::optional<fs::path>& held, ClaimEvents& events) {
  const fs::path claim = claim_path(entry);
  std::error_code ec;
  fs::create_directories(claim.parent_path(), ec);
  // The entry as this lookup missed it (absent, or rejected as corrupt): another process has
  // published one since when it exists and was written after that.
  const auto missed = fs::last_write_time(entry, ec);
  const bool existed = !ec;
  const auto published = [&] {
    std::error_code error;
    const auto written = fs::last_write_time(entry, error);
    return !error && (!existed || written != missed);
  };
  while (true) {
    const int fd = ::open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const std::string owner = this_host() + " " + std::to_string(::getpid()) + "\n";
      // A claim left empty (write failed) still excludes; it expires by age.
      (void)!::write(fd, owner.data(), owner.size());
      ::close(fd);
      held = claim;
      // The holder before may have published the entry and released its claim since this
      // lookup missed: compile only what is still missing.
      return !published();
    }
    if (errno != EEXIST) return true;  // claims cannot be made here (read-only): compile unclaimed
    events.waited = true;
    // Another process compiles the entry: wait for it to publish (or give up) and release.
    while (fs::exists(claim, ec)) {
      if (stale(claim, expiry)) {
        fs::remove(claim, ec);
        events.broken = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (published()) return false;  // the caller loads it
  }
}

void release_claim(const std::optional<fs::path>& held) {
  std::error_code ec;
  if (held) fs::remove(*held, ec);
}

}  // namespace neuronsim::engine
