#include "engine/CompileCache.h"

#include "engine/Options.h"
#include "runtime/Config.h"

#include <c10/util/Exception.h>
#include <c10/util/hash.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>

namespace neuronsim::engine {

namespace fs = std::filesystem;

CompileCache& CompileCache::instance() {
  static CompileCache cache;
  return cache;
}

bool CompileCache::disk_enabled() const {
  return !config().cache_disabled;
}

fs::path CompileCache::entry_path(const std::string& key) const {
  return fs::path(config().cache_dir) / ("v" + std::to_string(Executable::kFormatVersion)) /
         (c10::sha1(key).str() + ".neff");
}

CompileCache::ThreadEntries::ThreadEntries(std::shared_ptr<HitCounts> shared)
    : counts(std::move(shared)) {
  std::lock_guard lock(counts->mutex);
  counts->live.push_back(this);
}

CompileCache::ThreadEntries::~ThreadEntries() {
  std::lock_guard lock(counts->mutex);
  counts->exited += hits.load(std::memory_order_relaxed);
  std::erase(counts->live, this);
}

std::int64_t CompileCache::HitCounts::total() const {
  std::int64_t sum = exited;
  for (const ThreadEntries* thread : live) sum += thread->hits.load(std::memory_order_relaxed);
  return sum;
}

CompileCache::ThreadEntries& CompileCache::thread_entries() {
  // A constant-initialised pointer reads without the guard a constructed thread_local needs.
  thread_local ThreadEntries* mine = nullptr;
  if (mine == nullptr) {
    thread_local ThreadEntries owned(thread_hits_);
    mine = &owned;
  }
  if (const auto generation = generation_.load(std::memory_order_acquire);
      mine->generation != generation) {
    mine->entries.clear();
    mine->generation = generation;
  }
  return *mine;
}

const std::shared_ptr<const Executable>* CompileCache::find_local(const MemoryKey& memory_key) {
  ThreadEntries& mine = thread_entries();
  const auto it = mine.entries.find(memory_key);
  if (it == mine.entries.end()) return nullptr;
  // This thread is the count's only writer: no locked read-modify-write needed.
  mine.hits.store(mine.hits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return &it->second;
}

const Executable* CompileCache::find_compiled(const MemoryKey& memory_key) {
  const auto* found = find_local(memory_key);
  return found == nullptr ? nullptr : found->get();
}

std::shared_ptr<const Executable> CompileCache::get_or_compile(
    const MemoryKey& memory_key, const std::function<std::string()>& signature,
    const std::function<Executable(const std::string&)>& compile) {
  if (const auto* found = find_local(memory_key)) return *found;
  const MemoryKey key = memory_key;  // the caller's buffer may be reused while compiling
  auto found = get_or_compile_shared(key, signature, compile);
  thread_entries().entries.emplace(key, found);
  return found;
}

std::shared_ptr<const Executable> CompileCache::get_or_compile_shared(
    const MemoryKey& memory_key, const std::function<std::string()>& signature,
    const std::function<Executable(const std::string&)>& compile) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(memory_key); it != entries_.end()) {
      ++stats_.memory_hits;
      return it->second;
    }
    if (auto it = failures_.find(memory_key); it != failures_.end()) {
      ++stats_.failure_hits;
      std::rethrow_exception(it->second);
    }
  }
  const std::string key = signature();
  std::shared_ptr<const Executable> found = disk_enabled() ? load(key) : nullptr;
  if (found == nullptr) {
    const auto start = std::chrono::steady_clock::now();
    const auto account = [&](std::exception_ptr failure) {
      emulate_compile(1);  // the compiler's time, for an executable of the one op
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      std::lock_guard lock(mutex_);
      ++stats_.compiles;
      stats_.compile_seconds += took.count();
      if (failure) {
        ++stats_.failed_compiles;
        failures_.emplace(memory_key, failure);
      }
    };
    std::shared_ptr<const Executable> compiled;
    try {
      compiled = std::make_shared<const Executable>(compile(key));
    } catch (...) {
      account(std::current_exception());
      throw;
    }
    account(nullptr);
    if (disk_enabled()) store(*compiled);
    found = compiled;
  }
  std::lock_guard lock(mutex_);
  return entries_.emplace(memory_key, found).first->second;
}

std::shared_ptr<const Executable> CompileCache::load(const std::string& key) {
  const fs::path path = entry_path(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;  // not cached yet
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  auto parsed = Executable::parse(text.str(), why);
  if (parsed && parsed->key != key) {
    parsed.reset();
    why = "entry belongs to another signature";
  }
  std::lock_guard lock(mutex_);
  if (!parsed) {
    ++stats_.disk_rejected;
    TORCH_WARN("torch_neuronsim: ignoring compile-cache entry ", path.string(), " (", why,
               "); recompiling it");
    return nullptr;
  }
  ++stats_.disk_hits;
  return std::make_shared<const Executable>(std::move(*parsed));
}

void CompileCache::store(const Executable& executable) {
  static std::atomic<std::uint64_t> counter{0};
  const fs::path path = entry_path(executable.key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  // A unique temporary name per process and call, renamed atomically over the entry.
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." +
                       std::to_string(counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << executable.serialize();
    if (!out.flush()) {
      fs::remove(tmp, ec);
      TORCH_WARN_ONCE("torch_neuronsim: cannot write the compile cache under ",
                      path.parent_path().string(), "; continuing with the in-memory cache only");
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

CacheStats CompileCache::stats() const {
  std::scoped_lock lock(mutex_, thread_hits_->mutex);
  CacheStats stats = stats_;
  stats.memory_hits += thread_hits_->total() - thread_hits_at_reset_;
  return stats;
}

void CompileCache::reset_stats() {
  std::scoped_lock lock(mutex_, thread_hits_->mutex);
  stats_ = {};
  thread_hits_at_reset_ = thread_hits_->total();
}

void CompileCache::clear_memory() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  failures_.clear();
  generation_.fetch_add(1, std::memory_order_release);
}

}  // namespace neuronsim::engine
