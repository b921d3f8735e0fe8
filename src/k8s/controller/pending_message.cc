#include "k8s/controller/pending_message.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string_view>

#include "engine/time/span.h"
#include "fmt/format.h"

namespace tessera::k8s {
namespace {

// The engine's phrase (engine/time/reservations.cc): "expected to start in 12m (t=860s)".
constexpr std::string_view kEnginePhrase = "expected to start in ";
// What stands for the expected start in PendingMessage::key.
constexpr std::string_view kKeyPhrase = "expected to start at <time>";

WallClock::time_point ToWall(WallClock::time_point wall_zero, double t) {
  return wall_zero +
         std::chrono::duration_cast<WallClock::duration>(std::chrono::duration<double>(t));
}

}  // namespace

double PendingMessage::Tolerance(double start, double now) {
  return std::max(60.0, 0.1 * std::max(0.0, start - now));
}

bool PendingMessage::Same(const PendingMessage& next, double now) const {
  if (key != next.key) return false;
  if (start < 0 || next.start < 0) return start < 0 && next.start < 0;
  return std::abs(next.start - start) <= Tolerance(start, now);
}

std::string FormatWallClock(WallClock::time_point t, WallClock::time_point today) {
  auto seconds = [](WallClock::time_point p) {
    const double s = std::chrono::duration<double>(p.time_since_epoch()).count();
    return static_cast<std::time_t>(std::ceil(s));
  };
  const std::time_t at = seconds(t), now = seconds(today);
  std::tm a{}, n{};
  if (!gmtime_r(&at, &a) || !gmtime_r(&now, &n)) return "?";
  if (a.tm_year == n.tm_year && a.tm_yday == n.tm_yday)
    return fmt::format("{:02}:{:02}:{:02}Z", a.tm_hour, a.tm_min, a.tm_sec);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", a.tm_year + 1900, a.tm_mon + 1,
                     a.tm_mday, a.tm_hour, a.tm_min, a.tm_sec);
}

PendingMessage ComposePendingMessage(const std::string& reason, double expected_start, double now,
                                     WallClock::time_point wall_zero) {
  PendingMessage m;
  m.text = reason;
  m.key = reason;
  if (expected_start < 0) return m;
  m.start = expected_start;
  const double left = expected_start - now;
  const std::string said =
      fmt::format("expected to start at {} ({})",
                  FormatWallClock(ToWall(wall_zero, expected_start), ToWall(wall_zero, now)),
                  left < 1 ? std::string("now") : "in " + FormatSpan(left));
  const size_t pos = reason.find(kEnginePhrase);
  if (pos == std::string::npos) {
    m.text = fmt::format("{}; {}", said, reason);
    m.key = fmt::format("{}; {}", kKeyPhrase, reason);
    return m;
  }
  // The phrase ends after the span ("12m"), and after " (t=860s)" where that follows.
  size_t end = reason.find(' ', pos + kEnginePhrase.size());
  if (end == std::string::npos) end = reason.size();
  if (reason.compare(end, 4, " (t=") == 0) {
    const size_t close = reason.find(')', end);
    if (close != std::string::npos) end = close + 1;
  }
  m.text = reason.substr(0, pos) + said + reason.substr(end);
  m.key = reason.substr(0, pos) + std::string(kKeyPhrase) + reason.substr(end);
  return m;
}

}  // namespace tessera::k8s
