// Every JSON document Tessera writes goes through DumpJson: names, label values and trace fields
// come from the user's input and need not be UTF-8 (a trace's CSV is bytes), and nlohmann::json's
// plain dump() throws type_error 316 on such a string, which ended `sim -o json`, the accounting
// store, the replay report and `report cost -o json` with SIGABRT. Here a byte that is not UTF-8
// becomes U+FFFD instead; every other character is written as it was.
//
// Header-only like printable.h, for the libraries that already link nlohmann_json.
// Thread-safety: pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tessera {

// `doc` as JSON text, never throwing on text that is not UTF-8. indent < 0: one line.
inline std::string DumpJson(const nlohmann::json& doc, int indent = -1) {
  return doc.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tessera
