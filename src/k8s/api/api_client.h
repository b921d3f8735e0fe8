// The client side of serve's JSON API (api_routes.h), for `tessera get` and `tessera explain`:
// one GET, its answer as JSON or an error a person can act on (server down, 401, an answer that
// is not JSON, an unknown workload).
//
// Thread-safety: pure functions (each call opens its own connection).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "model/limits.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

struct ApiClientOptions {
  std::string server = "http://127.0.0.1:10259";  // http://HOST:PORT of serve's metrics port
  std::string token;                              // bearer token; empty: none sent
  // The whole request, connecting to the last byte: a deadline, not a per-read timeout (a server
  // that sends a byte a second would never meet the latter).
  double timeout_s = 10;
  int64_t max_body_bytes = kMaxApiAnswerBytes;  // a longer answer is refused, not read
};

// GET `path` (with its query) from the server. Errors: InvalidArgument for a server URL that is
// not http://HOST[:PORT]; Unavailable when the server cannot be reached or says 503;
// Unauthenticated for 401; NotFound for 404 (the server's message); DataLoss for an answer that
// is not a JSON object (or nests deeper than kMaxJsonDepth); OutOfRange for an answer longer
// than `max_body_bytes` (by its Content-Length, or as it arrives); DeadlineExceeded when the
// whole request takes longer than `timeout_s`; Unknown for any other status. Every message names
// the URL.
absl::StatusOr<nlohmann::json> ApiGet(const ApiClientOptions& options, const std::string& path);

// The token in `file`, without surrounding white space; InvalidArgument naming the flag (e.g.
// "--token-file") and the file when it cannot be read, holds no token or is longer than
// kMaxTokenFileBytes (/dev/zero is refused at that bound).
absl::StatusOr<std::string> ReadTokenFile(const std::string& flag, const std::string& file);

}  // namespace tessera::k8s
