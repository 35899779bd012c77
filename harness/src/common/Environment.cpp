#include "common/Environment.h"

#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace conform {

namespace fs = std::filesystem;

namespace {

constexpr const char* kWorkerScript = "harness/worker/worker.py";

std::string find_data_root() {
  std::error_code ec;
  const fs::path executable = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this executable (/proc/self/exe): " + ec.message());
  for (fs::path dir = executable.parent_path(); dir.has_relative_path(); dir = dir.parent_path())
    if (fs::is_regular_file(dir / kWorkerScript, ec)) return dir.string();
  throw std::runtime_error(
      fmt::format("the installation is incomplete: no {} in any folder above {} (reinstall the "
                  "neuron_conform wheel, or rebuild the checkout)",
                  kWorkerScript, executable.string()));
}

}  // namespace

std::string data_root() {
  static const std::string root = find_data_root();
  return root;
}

std::string python_executable() {
  if (const char* python = std::getenv("NEURON_CONFORM_PYTHON"); python != nullptr && *python)
    return python;
  std::error_code ec;
  const fs::path checkout = fs::path(data_root()) / ".venv" / "bin" / "python";
  return fs::is_regular_file(checkout, ec) ? checkout.string() : "python3";
}

void check_python_executable() {
  const std::string python = python_executable();
  const fs::path path(python);
  // A bare name (python3) is looked up on PATH when a worker starts, as a shell would.
  if (!path.has_parent_path()) return;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0)
    throw std::runtime_error(fmt::format(
        "the workers' Python {} is not an executable file (--python, or NEURON_CONFORM_PYTHON)",
        python));
}

std::string harness_version() {
  return NEURON_CONFORM_VERSION;
}

std::string run_dir(const std::string& db_path, const std::string& run_id) {
  const fs::path parent = fs::absolute(db_path).parent_path();
  return (parent / "runs" / run_id).string();
}

void ensure_parent_dir(const std::string& path) {
  const fs::path parent = fs::absolute(path).parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));
}

ScratchLog::ScratchLog(const std::string& purpose) {
  static std::atomic<int> count{0};
  path_ = (fs::temp_directory_path() /
           fmt::format("neuron-conform-{}-{}-{}.log", purpose, getpid(), count++))
              .string();
}

ScratchLog::~ScratchLog() {
  std::error_code ignored;
  fs::remove(path_, ignored);
}

}  // namespace conform
