// How the commands show the loader's diagnostics: one line each on a stream (validate, sim, sim
// replay --manifests, sim plan --manifests), and as a JSON array for `--output json`
// (docs/manifests.md, "Diagnostics").
//
// Thread-safety: pure functions.
#pragma once

#include <ostream>
#include <vector>

#include "config/loader.h"
#include "nlohmann/json_fwd.hpp"

namespace tessera {

// "error", "warning", "notice".
const char* SeverityName(Diagnostic::Severity s);

// Every diagnostic, one line each (Diagnostic::ToString); notices only when `notices`.
void PrintDiagnostics(const std::vector<Diagnostic>& diags, bool notices, std::ostream& out);

// [{"severity", "file", "line", "path", "message"}, ...], every diagnostic (notices too). Values
// as written in the input: a document dumped with nlohmann::json's error_handler_t::replace
// never fails on bytes that are not UTF-8.
nlohmann::json DiagnosticsJson(const std::vector<Diagnostic>& diags);

}  // namespace tessera
