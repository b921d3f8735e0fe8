// Reading fields of API objects as the server sends them: a missing key, a null or a value of
// another type reads as absent, never as an exception. Shared by the parsers of controller/.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>

#include "nlohmann/json.hpp"

namespace tessera::k8s::json_fields {

using json = nlohmann::json;

// obj[key], or null when obj is not an object or has no such key.
inline const json& At(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// obj[key] when it is a string, else "".
inline std::string Str(const json& obj, const char* key) {
  const json& v = At(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

// The string values of an object (labels, annotations); other values are left out.
inline std::map<std::string, std::string> StrMap(const json& obj) {
  std::map<std::string, std::string> out;
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (it.value().is_string()) out.emplace(it.key(), it.value().get<std::string>());
  return out;
}

// Keeps what the manifest loader reads of an API object: everything but status and the
// server's metadata (resourceVersion, managedFields, ... would only be noise).
inline json StripForLoader(const json& obj) {
  json out = obj;
  out.erase("status");
  json md;
  const json& in_md = At(obj, "metadata");
  for (const char* k : {"name", "namespace", "labels", "annotations"})
    if (in_md.contains(k)) md[k] = in_md[k];
  out["metadata"] = md;
  return out;
}

}  // namespace tessera::k8s::json_fields
