#include "config/diagnostic_output.h"

#include "nlohmann/json.hpp"

namespace tessera {

const char* SeverityName(Diagnostic::Severity s) {
  switch (s) {
    case Diagnostic::Severity::kNotice:
      return "notice";
    case Diagnostic::Severity::kWarning:
      return "warning";
    case Diagnostic::Severity::kError:
      return "error";
  }
  return "error";
}

void PrintDiagnostics(const std::vector<Diagnostic>& diags, bool notices, std::ostream& out) {
  for (const auto& d : diags) {
    if (d.severity == Diagnostic::Severity::kNotice && !notices) continue;
    out << d.ToString() << "\n";
  }
}

nlohmann::json DiagnosticsJson(const std::vector<Diagnostic>& diags) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : diags) {
    out.push_back({{"severity", SeverityName(d.severity)},
                   {"file", d.file},
                   {"line", d.line},
                   {"path", d.path},
                   {"message", d.message}});
  }
  return out;
}

}  // namespace tessera
