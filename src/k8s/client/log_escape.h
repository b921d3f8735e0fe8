// Log lines of `tessera serve` made safe for a terminal and for line-based log collectors: names
// and messages that come from the API server (a Node or Pod name, a refused object's field, an
// error body) can hold control characters, and a newline or an escape sequence in a log line
// would forge a second line or recolour the terminal that tails the log. Every message goes
// through model/printable.h's EscapeNonPrintable before spdlog's pattern is applied.
//
// Thread-safety: the formatter is cloned per sink by spdlog; Install() once at start-up.
#pragma once

#include <memory>

#include "spdlog/formatter.h"

namespace tessera::k8s {

// A spdlog formatter that escapes the message (not the pattern's own fields) and hands it to
// `inner` (spdlog's default pattern formatter when null).
class EscapingFormatter : public spdlog::formatter {
 public:
  explicit EscapingFormatter(std::unique_ptr<spdlog::formatter> inner = nullptr);
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;

 private:
  std::unique_ptr<spdlog::formatter> inner_;
};

// Makes every registered logger (and the default one) format through EscapingFormatter.
void InstallEscapingLogFormatter();

}  // namespace tessera::k8s
