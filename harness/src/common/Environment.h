#pragma once

#include <string>

namespace conform {

// Where the harness finds its Python side. Defaults are fixed at build time (the source tree
// and the .venv interpreter CMake was configured with); NEURON_CONFORM_PYTHON overrides the
// interpreter.
std::string source_dir();
std::string python_executable();
std::string harness_version();

// The directory for a run's files (worker logs, reports): <dir of db>/runs/<run id>.
std::string run_dir(const std::string& db_path, const std::string& run_id);

// Creates the parent directory of `path` if needed; throws naming it when impossible.
void ensure_parent_dir(const std::string& path);

}  // namespace conform
