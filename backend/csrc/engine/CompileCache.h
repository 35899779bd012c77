#pragma once

#include "engine/CallKey.h"
#include "engine/Executable.h"

#include <c10/util/flat_hash_map.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace neuronsim::engine {

struct CacheStats {
  std::int64_t compiles = 0;  // plans built (misses in memory and on disk)
  std::int64_t memory_hits = 0;
  std::int64_t disk_hits = 0;
  std::int64_t disk_rejected = 0;    // unreadable or corrupt entries, recompiled
  std::int64_t failed_compiles = 0;  // compiles that raised (among `compiles`)
  std::int64_t claims_waited = 0;    // lookups that waited for another process compiling the key
  std::int64_t claims_broken = 0;    // claims of a dead or expired compiling process removed
  std::int64_t evicted = 0;          // disk entries removed to keep NEURONSIM_CACHE_SIZE
  std::int64_t failure_hits = 0;     // lookups answered by a kept failure (memory, disk)
  // The ops in the executables compiled and in those loaded from disk: with the compiler's
  // declared latency (declared_compile_latency), what compiling them costs on the real device.
  std::int64_t compiled_ops = 0;
  std::int64_t loaded_ops = 0;
  // Time spent compiling: building plans, and the emulated compiler's latency
  // (NEURONSIM_COMPILE_LATENCY), failed compiles included. Apart from the time ops run.
  double compile_seconds = 0.0;
  // Time lookups waited for another process compiling the same key (claims_waited's time).
  double claim_wait_seconds = 0.0;
  // Compile time under way and not yet counted above: since the oldest lookup still compiling or
  // waiting for a claim began, or since compile or wait time was last counted, whichever is later
  // (0 when no lookup is under way). A long compile shows here before it ends; added to the two
  // counters above, nothing is counted twice (a harness that times its cases by run time reads
  // all three).
  double compiling_seconds = 0.0;
};

// Executables by signature: in memory for the process, and on disk under NEURONSIM_CACHE_DIR
// (unless NEURONSIM_DISABLE_CACHE=1) so that later processes skip compilation, as
// TorchNeuron's NEFF cache does. Entries are written to a temporary file and renamed into
// place, so concurrent processes compiling the same signature never see a partial entry; an
// entry that fails to parse is reported once and recompiled, never trusted. Processes (on one
// host or several sharing the directory) compiling one key at once do it once: the first takes a
// claim beside the entry (<entry>.claim, created exclusively, naming its host and pid) and the
// others wait for its entry instead of compiling; a claim whose process is dead (same host) or
// older than the expiry is broken. The directory is kept under NEURONSIM_CACHE_SIZE by evicting
// the least recently used entries (a hit refreshes an entry's time). A compile that
// fails (a dtype the device refuses) is kept as a failure, as Neuron's cache keeps failed
// compilations: the same signature raises the same error again without compiling, in this
// process and, for c10's errors (the refusals a lowering raises), from disk in every other.
class CompileCache {
 public:
  static CompileCache& instance();

  // `memory_key` identifies the signature within this process (cheap to build); `signature`
  // builds the readable, process-independent key used on disk, only on a memory miss;
  // `compile` builds the plan for it, only when the disk has none either. A hit is served from
  // the calling thread's own map (no lock); the shared map behind it serves other threads.
  std::shared_ptr<const Executable> get_or_compile(
      const MemoryKey& memory_key, const std::function<std::string()>& signature,
      const std::function<Executable(const std::string&)>& compile);
  // The plan compiled for `memory_key`, if the calling thread has it (a memory hit, counted),
  // else null: the unboxed fast path's lookup, which never compiles. The pointer is valid
  // until the thread's next lookup.
  const Executable* find_compiled(const MemoryKey& memory_key);
  CacheStats stats() const;
  void reset_stats();
  // Forget the in-memory entries (the disk cache stays): the next lookups go to disk.
  void clear_memory();

  // Where the entry for `key` lives on disk (whether or not it exists).
  std::filesystem::path entry_path(const std::string& key) const;
  bool disk_enabled() const;

 private:
  CompileCache() = default;
  struct ThreadEntries;
  // Every thread's hit count: the live threads' maps, and what exited threads counted. Shared
  // with the threads' maps, so a thread that exits after the cache is destroyed (at process
  // exit) still finds it.
  struct HitCounts {
    std::int64_t total() const;  // under mutex
    std::mutex mutex;
    std::vector<const ThreadEntries*> live;
    std::int64_t exited = 0;
  };
  struct ThreadEntries {
    explicit ThreadEntries(std::shared_ptr<HitCounts> counts);
    ~ThreadEntries();  // its hits move to the exited threads' count
    ThreadEntries(const ThreadEntries&) = delete;
    ThreadEntries& operator=(const ThreadEntries&) = delete;
    const std::shared_ptr<HitCounts> counts;
    std::uint64_t generation = 0;
    // Written by its own thread only, so a hit adds without a locked instruction; stats()
    // reads it from any thread.
    std::atomic<std::int64_t> hits{0};
    // Open addressing, power-of-two buckets: a hit costs a hash and one compare.
    ska::flat_hash_map<MemoryKey, std::shared_ptr<const Executable>, MemoryKey::Hash> entries;
  };
  // The calling thread's own map, emptied when clear_memory has run since its last use.
  ThreadEntries& thread_entries();
  // The entry for `memory_key` in that map (a memory hit, counted), or null.
  const std::shared_ptr<const Executable>* find_local(const MemoryKey& memory_key);
  std::shared_ptr<const Executable> load(const std::string& key);
  void store(const Executable& executable);
  // Until this process holds the claim on compiling `key` (true), or another process published
  // the entry (false: load() it), or claims cannot be made here (true: compile unclaimed).
  bool claim(const std::string& key, std::optional<std::filesystem::path>& held);
  // Past NEURONSIM_CACHE_SIZE (by this process's estimate, then counted): the oldest entries go.
  void evict_past_limit(const std::filesystem::path& directory, std::uintmax_t written);
  std::uintmax_t disk_bytes_ = 0;  // this process's estimate of the directory's size; under mutex_
  bool disk_bytes_known_ = false;

  std::shared_ptr<const Executable> get_or_compile_shared(
      const MemoryKey& memory_key, const std::function<std::string()>& signature,
      const std::function<Executable(const std::string&)>& compile);

  // A lookup under way (compiling, or waiting for another process's claim) while it lives: what
  // stats() counts as compiling_seconds.
  class UnderWay {
   public:
    explicit UnderWay(CompileCache& cache);
    ~UnderWay();
    UnderWay(const UnderWay&) = delete;
    UnderWay& operator=(const UnderWay&) = delete;

   private:
    CompileCache& cache_;
    std::multiset<std::chrono::steady_clock::time_point>::iterator began_;
  };

  mutable std::mutex mutex_;
  // When each lookup now compiling, or waiting for a claim, began; when compile or wait time was
  // last counted. Under mutex_.
  std::multiset<std::chrono::steady_clock::time_point> under_way_;
  std::chrono::steady_clock::time_point counted_at_{};
  std::unordered_map<MemoryKey, std::shared_ptr<const Executable>, MemoryKey::Hash> entries_;
  std::unordered_map<MemoryKey, std::exception_ptr, MemoryKey::Hash> failures_;
  CacheStats stats_;  // hits in the shared map among them; under mutex_
  const std::shared_ptr<HitCounts> thread_hits_ = std::make_shared<HitCounts>();
  std::int64_t thread_hits_at_reset_ = 0;  // thread_hits_->total() when reset_stats ran
  // Bumped by clear_memory: threads drop their own maps when they see a new generation.
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace neuronsim::engine
