#include "engine/CompileCache.h"

#include "engine/Claim.h"
#include "engine/Options.h"
#include "runtime/Config.h"

#include <c10/util/Exception.h>
#include <c10/util/hash.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <tuple>
#include <typeinfo>
#include <vector>

namespace neuronsim::engine {

namespace fs = std::filesystem;

namespace {

// The kinds of c10 error a refusal keeps, by the name of their Python class: what a lowering
// raises (a dtype the device refuses, an op's own check of its arguments). Another kind (out of
// memory, a subclass not listed, an error from outside c10) is not a property of the signature
// alone and stays a failure of the process that met it.
struct RefusalKind {
  const char* name;
  bool (*is)(const c10::Error&);
  std::exception_ptr (*make)(const std::string& message);
};

template <typename E>
constexpr RefusalKind refusal_kind(const char* name) {
  return {name, [](const c10::Error& e) { return typeid(e) == typeid(E); },
          [](const std::string& message) { return std::make_exception_ptr(E(message)); }};
}

constexpr RefusalKind kRefusalKinds[] = {
    refusal_kind<c10::NotImplementedError>("NotImplementedError"),
    refusal_kind<c10::IndexError>("IndexError"),
    refusal_kind<c10::ValueError>("ValueError"),
    refusal_kind<c10::TypeError>("TypeError"),
    refusal_kind<c10::LinAlgError>("LinAlgError"),
    refusal_kind<c10::Error>("Error")};

std::optional<Refusal> refusal_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const c10::Error& e) {
    for (const RefusalKind& kind : kRefusalKinds) {
      if (kind.is(e)) return Refusal{kind.name, e.what_without_backtrace()};
    }
  } catch (...) {
  }
  return std::nullopt;
}

// The error a stored refusal raises: its kind and message, as the compile that refused it raised
// (a kind this build does not know raises as c10::Error).
std::exception_ptr error_of(const Refusal& refusal) {
  for (const RefusalKind& kind : kRefusalKinds) {
    if (refusal.kind == kind.name) return kind.make(refusal.message);
  }
  return std::make_exception_ptr(c10::Error(refusal.message));
}

// Removes the claim file a process holds when the lookup that took it returns, published or not.
struct ClaimRelease {
  std::optional<fs::path>& held;
  ~ClaimRelease() { release_claim(held); }
};

}  // namespace

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

CompileCache::UnderWay::UnderWay(CompileCache& cache) : cache_(cache) {
  std::lock_guard lock(cache_.mutex_);
  began_ = cache_.under_way_.insert(std::chrono::steady_clock::now());
}

CompileCache::UnderWay::~UnderWay() {
  std::lock_guard lock(cache_.mutex_);
  cache_.under_way_.erase(began_);
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
  const UnderWay under_way(*this);
  const std::string key = signature();
  std::shared_ptr<const Executable> found = disk_enabled() ? load(key) : nullptr;
  std::optional<fs::path> held;  // this process's claim on compiling `key`, released at return
  const ClaimRelease release{held};
  // Published by another process meanwhile: load it.
  if (found == nullptr && disk_enabled() && !claim(key, held)) found = load(key);
  if (found == nullptr) {
    const auto start = std::chrono::steady_clock::now();
    // The compiler's time for an executable of `ops` ops (a failed compile counts as one).
    const auto account = [&](std::exception_ptr failure, int ops) {
      emulate_compile(ops);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      std::lock_guard lock(mutex_);
      ++stats_.compiles;
      stats_.compiled_ops += ops;
      stats_.compile_seconds += took.count();
      counted_at_ = std::chrono::steady_clock::now();
      if (failure) {
        ++stats_.failed_compiles;
        failures_.emplace(memory_key, failure);
      }
    };
    std::shared_ptr<const Executable> compiled;
    try {
      compiled = std::make_shared<const Executable>(compile(key));
    } catch (...) {
      const std::exception_ptr failure = std::current_exception();
      account(failure, 1);
      if (auto refusal = refusal_of(failure); refusal && disk_enabled()) {
        Executable refused;
        refused.key = key;
        refused.op = key.substr(0, key.find('|'));
        refused.refusal = std::move(refusal);
        store(refused);
      }
      throw;
    }
    account(nullptr, compiled->ops);
    if (disk_enabled()) store(*compiled);
    found = compiled;
  }
  std::lock_guard lock(mutex_);
  if (found->refusal) {  // refused by another process's compile: refused here without one
    ++stats_.failure_hits;
    const std::exception_ptr failure = error_of(*found->refusal);
    failures_.emplace(memory_key, failure);
    std::rethrow_exception(failure);
  }
  return entries_.emplace(memory_key, found).first->second;
}

bool CompileCache::claim(const std::string& key, std::optional<fs::path>& held) {
  // A compile takes the emulated latency; a claim far older than that was left behind.
  const std::chrono::duration<double> expiry(60.0 + 3 * compile_latency().seconds_for(1));
  ClaimEvents events;
  const auto start = std::chrono::steady_clock::now();
  const bool compile = claim_entry(entry_path(key), expiry, held, events);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::lock_guard lock(mutex_);
  stats_.claims_waited += events.waited ? 1 : 0;
  if (events.waited) {
    stats_.claim_wait_seconds += took.count();
    counted_at_ = std::chrono::steady_clock::now();
  }
  stats_.claims_broken += events.broken ? 1 : 0;
  return compile;
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
  stats_.loaded_ops += parsed->ops;
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used: evicted last
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
  if (ec) {
    fs::remove(tmp, ec);
    return;
  }
  evict_past_limit(path.parent_path(), fs::file_size(path, ec));
}

void CompileCache::evict_past_limit(const fs::path& directory, std::uintmax_t written) {
  const std::uintmax_t limit = config().cache_size;
  std::lock_guard lock(mutex_);
  disk_bytes_ += written;
  if (disk_bytes_known_ && disk_bytes_ <= limit) return;
  // Count the directory (other processes write to it too), then remove the least recently
  // used entries down to nine tenths of the limit, so that a full cache is not counted per store.
  std::vector<std::tuple<fs::file_time_type, std::uintmax_t, fs::path>> entries;
  std::uintmax_t total = 0;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(directory, ec)) {
    if (item.path().extension() != ".neff") continue;
    const auto size = item.file_size(ec);
    const auto when = item.last_write_time(ec);
    if (ec) continue;  // removed meanwhile
    entries.emplace_back(when, size, item.path());
    total += size;
  }
  disk_bytes_known_ = true;
  disk_bytes_ = total;
  if (total <= limit) return;
  std::sort(entries.begin(), entries.end());
  for (const auto& [when, size, path] : entries) {
    if (disk_bytes_ <= limit / 10 * 9) break;
    if (fs::remove(path, ec)) {
      disk_bytes_ -= size;
      ++stats_.evicted;
    }
  }
}

CacheStats CompileCache::stats() const {
  std::scoped_lock lock(mutex_, thread_hits_->mutex);
  CacheStats stats = stats_;
  stats.memory_hits += thread_hits_->total() - thread_hits_at_reset_;
  // Wall time, not a sum over the threads compiling at once: since the oldest lookup under way
  // began, something has been; what was counted meanwhile is not counted again.
  if (!under_way_.empty()) {
    const auto since = std::max(*under_way_.begin(), counted_at_);
    stats.compiling_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  }
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
