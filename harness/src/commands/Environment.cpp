#include "commands/Environment.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace conform {

namespace fs = std::filesystem;

std::string source_dir() {
  return NEURON_CONFORM_SOURCE_DIR;
}

std::string python_executable() {
  if (const char* python = std::getenv("NEURON_CONFORM_PYTHON"); python != nullptr && *python)
    return python;
  return NEURON_CONFORM_PYTHON;
}

std::string harness_version() {
  return NEURON_CONFORM_VERSION;
}

WorkerCommand worker_command(const std::string& suite, const std::string& backend_module,
                             const std::string& device, std::int64_t seed) {
  WorkerCommand command;
  command.python = python_executable();
  command.script = source_dir() + "/harness/worker/worker.py";
  command.args = {"--suite",  suite,  "--backend-module", backend_module,
                  "--device", device, "--seed",           std::to_string(seed)};
  return command;
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

std::string shell_quote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,") ==
          std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace conform
