#pragma once

#include <string>

namespace conform {

// Where the harness finds its files (the worker, the suites, the report templates, the
// vocabulary): the nearest folder above the executable's own that holds harness/worker/worker.py.
// That is the checkout for a build in it (build/neuron-conform) and the installed package for the
// wheel (site-packages/neuron_conform/bin/neuron-conform), so a moved or copied install works.
// Throws std::runtime_error naming what is missing when there is none (a corrupt install).
std::string data_root();
// The Python that runs the workers: NEURON_CONFORM_PYTHON (the global --python and the installed
// launcher set it), else the .venv of the checkout a build is in (data_root()/.venv, where make
// creates it), else `python3` on PATH. Nothing of the build machine is compiled in, so the CLI a
// checkout builds is the one its wheel ships.
std::string python_executable();

// Throws, naming it, when the workers' Python is a path that is not an executable file.
void check_python_executable();
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
