// The waiting pod's message with the engine's expected start said in wall-clock terms, and when a
// new message is worth writing over the last.
#include "k8s/controller/pending_message.h"

#include "gtest/gtest.h"

namespace tessera::k8s {
namespace {

// 2026-11-23T13:53:00Z, the engine's 0.
WallClock::time_point Zero() { return WallClock::from_time_t(1795441980); }

TEST(PendingMessage, TheEnginesExpectedStartIsSaidInWallClockTermsKeepingTheNote) {
  const std::string reason =
      "insufficient nvidia.com/gpu on every node; expected to start in 12m (t=860s) when 3 "
      "running workload(s) of team end; held: 16 GPU(s) on node-1, node-2";
  PendingMessage m = ComposePendingMessage(reason, 860, 140, Zero());
  EXPECT_EQ(m.text,
            "insufficient nvidia.com/gpu on every node; expected to start at 14:07:20Z (in 12m) "
            "when 3 running workload(s) of team end; held: 16 GPU(s) on node-1, node-2");
  EXPECT_EQ(m.start, 860);
  // The key has no clock in it: a minute later the engine says "in 11m", the key is the same.
  PendingMessage later = ComposePendingMessage(
      "insufficient nvidia.com/gpu on every node; expected to start in 11m (t=860s) when 3 "
      "running workload(s) of team end; held: 16 GPU(s) on node-1, node-2",
      860, 200, Zero());
  EXPECT_EQ(later.key, m.key);
  EXPECT_NE(later.text, m.text);
  EXPECT_TRUE(m.Same(later, 200));
  EXPECT_EQ(m.key.find("14:07"), std::string::npos) << m.key;
}

TEST(PendingMessage, WithoutAnExpectedStartTheReasonIsTheMessage) {
  PendingMessage m = ComposePendingMessage(
      "no expected start: 2 running workload(s) have no "
      "runtime estimate",
      -1, 100, Zero());
  EXPECT_EQ(m.text, m.key);
  EXPECT_EQ(m.text, "no expected start: 2 running workload(s) have no runtime estimate");
  EXPECT_EQ(m.start, -1);
}

TEST(PendingMessage, AReasonWithoutTheEnginesPhraseGetsTheExpectedStartInFront) {
  PendingMessage m = ComposePendingMessage(
      "reserved: starts as soon as capacity frees up; held: 8 GPU(s) on n1", 100, 100, Zero());
  EXPECT_EQ(m.text,
            "expected to start at 13:54:40Z (now); reserved: starts as soon as capacity frees "
            "up; held: 8 GPU(s) on n1");
  EXPECT_EQ(m.key,
            "expected to start at <time>; reserved: starts as soon as capacity frees up; held: 8 "
            "GPU(s) on n1");
}

TEST(PendingMessage, AStartOnAnotherDayCarriesTheDate) {
  PendingMessage m = ComposePendingMessage("expected to start in 1d (t=86400s)", 86400, 0, Zero());
  EXPECT_EQ(m.text, "expected to start at 2026-11-24T13:53:00Z (in 1d)");
  EXPECT_EQ(FormatWallClock(Zero() + std::chrono::milliseconds(200), Zero()), "13:53:01Z");
}

TEST(PendingMessage, NewWhenTheWordsChangeOrTheStartMovesBeyondTheTolerance) {
  auto at = [](double start, const std::string& who) {
    return ComposePendingMessage(
        "expected to start in 1h (t=" + std::to_string(static_cast<int>(start)) + "s) when " + who +
            " end",
        start, 0, Zero());
  };
  const PendingMessage published = at(3600, "3 running workload(s) of team");
  // A tenth of the hour left: 6 minutes either way is the same message.
  EXPECT_DOUBLE_EQ(PendingMessage::Tolerance(3600, 0), 360);
  EXPECT_TRUE(published.Same(at(3900, "3 running workload(s) of team"), 0));
  EXPECT_FALSE(published.Same(at(4000, "3 running workload(s) of team"), 0));
  EXPECT_FALSE(published.Same(at(3600, "2 running workload(s) of team"), 0));
  // Close to the start, a minute.
  EXPECT_DOUBLE_EQ(PendingMessage::Tolerance(3600, 3590), 60);
  EXPECT_TRUE(published.Same(at(3650, "3 running workload(s) of team"), 3590));
  EXPECT_FALSE(published.Same(at(3700, "3 running workload(s) of team"), 3590));
  // An expected start that appears or goes away is new.
  PendingMessage none = ComposePendingMessage(
      "expected to start in 1h (t=3600s) when 3 running "
      "workload(s) of team end",
      -1, 0, Zero());
  EXPECT_FALSE(published.Same(none, 0));
  EXPECT_FALSE(none.Same(published, 0));
  EXPECT_TRUE(none.Same(none, 0));
}

}  // namespace
}  // namespace tessera::k8s
