#include "k8s/client/log_escape.h"

#include <gtest/gtest.h>

#include <sstream>

#include "spdlog/logger.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/ostream_sink.h"

namespace tessera::k8s {
namespace {

std::string Logged(const std::string& name) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("t", sink);
  logger.set_formatter(
      std::make_unique<EscapingFormatter>(std::make_unique<spdlog::pattern_formatter>("[%l] %v")));
  logger.warn("node {}: refused", name);
  return out.str();
}

// A Node name from the API server with a newline and an escape sequence in it must not forge a
// second log line or recolour the terminal that tails serve's log.
TEST(EscapingFormatter, ControlCharactersInAMessageAreEscapedAndThePatternIsKept) {
  EXPECT_EQ(Logged("evil\n[info] fake line\x1b[31m"),
            "[warning] node evil\\x0a[info] fake line\\x1b[31m: refused\n");
}

TEST(EscapingFormatter, PrintableAndUtf8MessagesPassUnchanged) {
  EXPECT_EQ(Logged("gpu-node-\xc3\xa9t\xc3\xa9"),
            "[warning] node gpu-node-\xc3\xa9t\xc3\xa9: refused\n");
}

TEST(EscapingFormatter, ClonesKeepTheInnerPattern) {
  EscapingFormatter f(std::make_unique<spdlog::pattern_formatter>("<%v>"));
  auto c = f.clone();
  spdlog::details::log_msg msg("t", spdlog::level::info, "a\tb");
  spdlog::memory_buf_t buf;
  c->format(msg, buf);
  EXPECT_EQ(std::string(buf.data(), buf.size()), "<a\\x09b>\n");
}

}  // namespace
}  // namespace tessera::k8s
