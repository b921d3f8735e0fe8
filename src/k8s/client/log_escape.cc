#include "k8s/client/log_escape.h"

#include <string>
#include <string_view>

#include "model/printable.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {

EscapingFormatter::EscapingFormatter(std::unique_ptr<spdlog::formatter> inner)
    : inner_(inner ? std::move(inner) : std::make_unique<spdlog::pattern_formatter>()) {}

void EscapingFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const std::string_view payload(msg.payload.data(), msg.payload.size());
  std::string escaped = EscapeNonPrintable(payload);
  if (escaped == payload) {
    inner_->format(msg, dest);
    return;
  }
  spdlog::details::log_msg copy = msg;
  copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
  inner_->format(copy, dest);
}

std::unique_ptr<spdlog::formatter> EscapingFormatter::clone() const {
  return std::make_unique<EscapingFormatter>(inner_->clone());
}

void InstallEscapingLogFormatter() { spdlog::set_formatter(std::make_unique<EscapingFormatter>()); }

}  // namespace tessera::k8s
