// Benchmark: resolving 100,000 planned cases against 5,000 skip-list entries (target: under a
// second). Prints the load and resolve times; a measurement, not a test.
#include "expect/Skiplist.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

int main() {
  namespace fs = std::filesystem;
  using Clock = std::chrono::steady_clock;
  constexpr int kEntries = 5000, kSubjects = 2500, kCases = 100000;
  const char* dtypes[] = {"float32", "bfloat16", "float16", "int32",
                          "int64",   "float64",  "bool",    "uint8"};
  const char* checks[] = {"forward", "out", "inplace", "backward", "forward_ad"};

  nlohmann::json entries = nlohmann::json::array();
  for (int i = 0; i < kEntries; ++i) {
    const bool wildcard_subject = i % 100 == 0;  // a few "any subject" entries, as real lists have
    entries.push_back(
        {{"suite", "ops"},
         {"subject", wildcard_subject ? std::string("*") : fmt::format("op{}", i % kSubjects)},
         {"dtype", wildcard_subject ? std::string("complex") + std::to_string(i) : dtypes[i % 8]},
         {"check", checks[(i / kSubjects) % 5]},
         {"mode", conform::name(conform::Mode::kXfail)},
         {"category", conform::name(conform::Category::kPrecision)},
         {"reason", "generated"}});
  }
  const fs::path file = fs::temp_directory_path() / "bench-skiplist.json";
  std::ofstream(file) << nlohmann::json{{"entries", entries}}.dump(1);

  auto start = Clock::now();
  const auto lists = conform::load_skiplists({file.string()}, "2.13.0");
  const double load = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<conform::CaseId> cases;
  for (int i = 0; i < kCases; ++i) {
    cases.push_back(
        {"ops", fmt::format("op{}", i % (kSubjects * 2)), dtypes[i % 8], checks[(i / 8) % 5]});
  }
  start = Clock::now();
  const conform::Expectations x(lists.entries);
  std::size_t decided = 0;
  for (const auto& c : cases) decided += x.decide(c) != nullptr;
  const double resolve = std::chrono::duration<double>(Clock::now() - start).count();
  fmt::print("{} entries loaded and linted in {:.3f} s ({} problems)\n", lists.entries.size(), load,
             lists.problems.size());
  fmt::print("{} cases resolved in {:.3f} s ({} decided by an entry); target < 1 s\n", kCases,
             resolve, decided);
  fs::remove(file);
  return 0;
}
