#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace conform {

// The longest line a worker may write on its protocol stream. A result line carries one case's
// evidence (kilobytes); the longest legitimate lines are listings' hello lines (about 100 KB).
inline constexpr std::size_t kMaxLineBytes = std::size_t{8} << 20;

// One line of a worker's protocol stream, without its newline. A line over the limit keeps only
// its first kKeptOfLongLine bytes and says so.
struct ProtocolLine {
  std::string text;
  bool too_long = false;
};

// Cuts a byte stream, arriving in chunks of any size, into lines. Holds at most `max_line`
// bytes of an unfinished line: beyond that it keeps the line's start, drops the rest up to its
// newline, and yields the line marked too_long. What a worker writes cannot make it hold more.
class LineSplitter {
 public:
  static constexpr std::size_t kKeptOfLongLine = 500;

  explicit LineSplitter(std::size_t max_line = kMaxLineBytes) : max_line_(max_line) {}

  // Appends the lines `chunk` completes to `lines`.
  void feed(std::string_view chunk, std::vector<ProtocolLine>& lines);
  // The bytes of the unfinished line it holds.
  std::size_t pending() const { return pending_.size(); }

 private:
  std::size_t max_line_;
  std::string pending_;
  bool discarding_ = false;  // inside a line over the limit: dropping bytes up to its newline
};

}  // namespace conform
