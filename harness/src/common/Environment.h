#pragma once

#include <string>

namespace conform {

// Where the harness finds its Python side. Defaults are fixed at build time (the source tree
// and the .venv interpreter CMake was configured with); NEURON_CONFORM_PYTHON overrides the
// interpreter.
std::string data_root();
std::string python_executable();
std::string harness_version();

// The directory for a run's files (worker logs, reports): <dir of db>/runs/<run id>.
std::string run_dir(const std::string& db_path, const std::string& run_id);

// Creates the parent directory of `path` if needed; throws naming it when impossible.
void ensure_parent_dir(const std::string& path);

// The log of a worker whose log nobody keeps (the listings of `skiplist lint`, `suites` and
// `ledger`): a file of its own in the temporary folder, removed when this goes out of scope. A
// worker that fails says why in the error itself (its stderr's tail).
class ScratchLog {
 public:
  explicit ScratchLog(const std::string& purpose);
  ~ScratchLog();
  ScratchLog(const ScratchLog&) = delete;
  ScratchLog& operator=(const ScratchLog&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace conform
