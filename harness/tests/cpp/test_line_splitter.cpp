#include "execute/LineSplitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace conform {
namespace {

std::vector<ProtocolLine> split(LineSplitter& s, const std::vector<std::string>& chunks) {
  std::vector<ProtocolLine> lines;
  for (const auto& c : chunks) s.feed(c, lines);
  return lines;
}

TEST(LineSplitter, JoinsLinesAcrossChunksOfAnySize) {
  const std::string stream = "{\"a\": 1}\n\n{\"case\": \"x\"}\nunfinished";
  for (std::size_t size = 1; size <= stream.size(); ++size) {
    LineSplitter s;
    std::vector<std::string> chunks;
    for (std::size_t i = 0; i < stream.size(); i += size) chunks.push_back(stream.substr(i, size));
    const auto lines = split(s, chunks);
    ASSERT_EQ(lines.size(), 3u) << "chunks of " << size;
    EXPECT_EQ(lines[0].text, "{\"a\": 1}");
    EXPECT_EQ(lines[1].text, "");
    EXPECT_EQ(lines[2].text, "{\"case\": \"x\"}");
    EXPECT_FALSE(lines[0].too_long || lines[1].too_long || lines[2].too_long);
    EXPECT_EQ(s.pending(), std::string("unfinished").size());
  }
}

TEST(LineSplitter, CutsALineOverTheLimitKeepsItsStartAndGoesOnAfterItsNewline) {
  LineSplitter s(1000);
  std::vector<ProtocolLine> lines;
  for (int i = 0; i < 100; ++i) {
    s.feed(std::string(64, static_cast<char>('a' + i % 26)), lines);
    EXPECT_LE(s.pending(), 1000u);  // never more than the limit held
  }
  s.feed("tail\nnext\n", lines);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].too_long);
  EXPECT_EQ(lines[0].text.size(), LineSplitter::kKeptOfLongLine);
  EXPECT_EQ(lines[0].text.substr(0, 3), "aaa");
  EXPECT_FALSE(lines[1].too_long);
  EXPECT_EQ(lines[1].text, "next");
}

TEST(LineSplitter, ALineOfExactlyTheLimitIsWhole) {
  LineSplitter s(10);
  const auto lines = split(s, {std::string(10, 'z') + "\n" + std::string(11, 'y') + "\n"});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_FALSE(lines[0].too_long);
  EXPECT_EQ(lines[0].text, std::string(10, 'z'));
  EXPECT_TRUE(lines[1].too_long);
  EXPECT_EQ(lines[1].text, std::string(10, 'y'));
}

}  // namespace
}  // namespace conform
