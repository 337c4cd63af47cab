// fclazydisk's Overlay (nemesis/disk/overlay.h) against a plain byte array: writes merge
// with what they overlap or touch (appends keep one extent), the newest write wins, a read
// copies only what the overlay holds, truncate drops bytes at and past the new size.
#include "nemesis/disk/overlay.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace fencecheck::lazydisk {
namespace {

TEST(LazydiskOverlay, AppendsKeepOneExtent) {
  Overlay o;
  std::string all;
  for (int i = 0; i < 1000; ++i) {
    std::string chunk(100, char('a' + i % 26));
    o.write(off_t(all.size()), chunk.data(), chunk.size());
    all += chunk;
  }
  EXPECT_EQ(o.extent_count(), 1u);
  EXPECT_EQ(o.end(), off_t(all.size()));
  EXPECT_EQ(o.bytes(), all.size());
  std::string out(all.size(), '?');
  o.read(0, out.size(), out.data());
  EXPECT_EQ(out, all);
}

TEST(LazydiskOverlay, ReadLeavesWhatItDoesNotHold) {
  Overlay o;
  o.write(10, "xyz", 3);
  o.write(20, "uv", 2);
  EXPECT_EQ(o.extent_count(), 2u);
  std::string out(25, '.');
  o.read(0, out.size(), out.data());
  EXPECT_EQ(out, "..........xyz.......uv...");
  o.write(13, "1234567", 7);  // touches both: one extent
  EXPECT_EQ(o.extent_count(), 1u);
  o.read(0, out.size(), out.data());
  EXPECT_EQ(out, "..........xyz1234567uv...");
}

TEST(LazydiskOverlay, TruncateCutsAndDrops) {
  Overlay o;
  o.write(0, "abcdef", 6);
  o.write(10, "ghij", 4);
  o.truncate(3);
  EXPECT_EQ(o.end(), 3);
  EXPECT_EQ(o.extent_count(), 1u);
  o.truncate(0);
  EXPECT_TRUE(o.empty());
}

// Random writes and truncates against a model: every byte the overlay holds is the
// newest one written there, and it holds exactly the bytes written since (not cut).
TEST(LazydiskOverlay, MatchesAModelUnderRandomWrites) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    Overlay o;
    std::vector<int> model(300, -1);  // -1: not held
    for (int step = 0; step < 60; ++step) {
      if (rng() % 10 == 0) {
        std::size_t size = rng() % 300;
        o.truncate(off_t(size));
        for (std::size_t i = size; i < model.size(); ++i) model[i] = -1;
        continue;
      }
      std::size_t off = rng() % 250, len = 1 + rng() % 50;
      std::string data;
      for (std::size_t i = 0; i < len; ++i) data += char('A' + rng() % 26);
      o.write(off_t(off), data.data(), len);
      for (std::size_t i = 0; i < len; ++i) model[off + i] = data[i];
    }
    std::string out(model.size(), '\0');
    o.read(0, out.size(), out.data());
    std::size_t held = 0;
    off_t end = 0;
    for (std::size_t i = 0; i < model.size(); ++i) {
      if (model[i] < 0) {
        EXPECT_EQ(out[i], '\0') << "round " << round << " byte " << i;
      } else {
        EXPECT_EQ(out[i], char(model[i])) << "round " << round << " byte " << i;
        ++held;
        end = off_t(i + 1);
      }
    }
    EXPECT_EQ(o.bytes(), held);
    EXPECT_EQ(o.end(), end);
    off_t last_end = -1;  // extents never overlap nor touch
    for (const auto& [off, buf] : o.extents()) {
      EXPECT_GT(off, last_end);
      last_end = off + off_t(buf.size());
    }
  }
}

}  // namespace
}  // namespace fencecheck::lazydisk
