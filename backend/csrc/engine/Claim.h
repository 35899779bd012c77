#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

namespace neuronsim::engine {

// What claiming an entry took: whether another process held it (waited) and whether a claim of
// a dead or expired process was broken on the way.
struct ClaimEvents {
  bool waited = false;
  bool broken = false;
};

// Claims the compilation of one cache entry among processes and hosts sharing its directory:
// <entry>.claim, created exclusively and naming its host and pid. Returns true when this process
// holds the claim (`held`: remove it once the entry is published, or given up) and the entry is
// still missing, or when claims cannot be made there (compile unclaimed); false when another
// process published the entry meanwhile (load it). While another process holds the claim, waits
// for it to go; a claim whose process is dead on this host, or older than `expiry`, is broken.
bool claim_entry(const std::filesystem::path& entry, std::chrono::duration<double> expiry,
                 std::optional<std::filesystem::path>& held, ClaimEvents& events);

// Removes a claim this process holds (nothing when `held` is empty).
void release_claim(const std::optional<std::filesystem::path>& held);

}  // namespace neuronsim::engine
