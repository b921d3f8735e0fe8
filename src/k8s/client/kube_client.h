// A small Kubernetes REST client on libcurl: kubeconfig / in-cluster credentials, plain requests
// and streaming watches. Bodies are strings: JSON, or protobuf where a caller offered it (proto.h).
//
// Thread-safety: KubeClient is thread-safe. Each call borrows a curl handle from a pool, so that
// connections (and TLS sessions) are reused across calls and many requests can be in flight from
// several threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::k8s {

// Where the API server is and how to authenticate. Inline data (`*_data`) is already decoded.
struct KubeConfig {
  std::string server;  // https://host:port, no trailing slash
  std::string token;
  std::string ca_file, ca_data;
  std::string client_cert_file, client_cert_data;
  std::string client_key_file, client_key_data;
  bool insecure_skip_tls_verify = false;
  // Not from the kubeconfig: the client's choice. HTTP/2 (over TLS) instead of HTTP/1.1.
  bool http2 = false;
};

// Reads a kubeconfig file; `context` empty means its current-context. Errors name the file and
// the field that is missing or malformed.
[[nodiscard]] absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path,
                                                        const std::string& context = "");
// Parses kubeconfig text (YAML); `source` names it in errors.
[[nodiscard]] absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text,
                                                         std::string_view source,
                                                         const std::string& context = "");
// The service account credentials a pod gets (KUBERNETES_SERVICE_HOST/PORT, token and CA under
// /var/run/secrets/kubernetes.io/serviceaccount).
[[nodiscard]] absl::StatusOr<KubeConfig> InClusterConfig();

struct HttpResponse {
  long status = 0;  // HTTP status code
  std::string body;
  std::string content_type;  // the response's Content-Type, as sent
};

enum class PatchType { kMerge, kStrategicMerge, kJson };

// Per-request limits: a transfer ends (an Unavailable status) when `*cancel` becomes true or
// after `timeout`, whichever comes first. The cancel flag is looked at by libcurl's progress
// callback: within about a second even while the server sends nothing.
struct RequestLimits {
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::milliseconds timeout{60000};
};

class KubeClient {
 public:
  explicit KubeClient(KubeConfig config);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  const KubeConfig& config() const { return config_; }

  // One request; a transport failure is an Unavailable status, any HTTP status is a response.
  // `accept` may offer protobuf (proto::kAccept); the server picks, so look at the answer's
  // content_type.
  [[nodiscard]] absl::StatusOr<HttpResponse> Request(
      std::string_view method, std::string_view path, std::string_view body = "",
      std::string_view content_type = "application/json",
      std::string_view accept = "application/json", RequestLimits limits = {});
  [[nodiscard]] absl::StatusOr<HttpResponse> Get(std::string_view path,
                                                 std::string_view accept = "application/json",
                                                 RequestLimits limits = {}) {
    return Request("GET", path, "", "application/json", accept, limits);
  }
  // A write whose answer is read only on errors may offer protobuf (proto::kAccept): the server
  // encodes the object it returns (a created Event, a patched Pod) for less than as JSON.
  [[nodiscard]] absl::StatusOr<HttpResponse> Post(std::string_view path, std::string_view body,
                                                  std::string_view accept = "application/json",
                                                  RequestLimits limits = {}) {
    return Request("POST", path, body, "application/json", accept, limits);
  }
  [[nodiscard]] absl::StatusOr<HttpResponse> Put(std::string_view path, std::string_view body,
                                                 RequestLimits limits = {}) {
    return Request("PUT", path, body, "application/json", "application/json", limits);
  }
  [[nodiscard]] absl::StatusOr<HttpResponse> Patch(std::string_view path, std::string_view body,
                                                   PatchType type = PatchType::kMerge,
                                                   std::string_view accept = "application/json");
  [[nodiscard]] absl::StatusOr<HttpResponse> Delete(std::string_view path,
                                                    std::string_view body = "") {
    return Request("DELETE", path, body);
  }

  // A long GET whose body is a stream of messages (a watch): newline-separated JSON objects, or,
  // when the server answers protobuf (`accept` offered it), frames of a 4-byte big-endian length
  // and that many bytes. `on_message` gets each complete message, and whether it is a protobuf
  // frame, and returns false to stop.
  // Returns when the server closes the stream, on a transport error, or soon after `*stop`
  // becomes true (checked about every 100 ms even when nothing arrives). The HTTP status and
  // Content-Type are in the response; its body holds what was not a complete message (an error
  // object for non-200 statuses).
  [[nodiscard]] absl::StatusOr<HttpResponse> Stream(
      std::string_view path, const std::function<bool(std::string_view, bool)>& on_message,
      const std::atomic<bool>* stop, std::string_view accept = "application/json");

  // Bounds everything this client does from now on: transfers in flight at `deadline` are cut
  // (within about a second: libcurl's progress callback looks), and requests started after it
  // fail at once. Used by shutdown, so that a stalled API server cannot hold it up for a
  // request timeout. `time_point::max()` lifts the bound.
  void AbortAfter(std::chrono::steady_clock::time_point deadline);
  bool aborted() const;  // the deadline has passed

 private:
  struct Handle;
  std::unique_ptr<Handle> Borrow();
  void Return(std::unique_ptr<Handle> h);
  void Configure(Handle& h, std::string_view method, std::string_view path) const;

  const KubeConfig config_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_;  // GUARDED_BY(mu_)
  // AbortAfter's deadline, steady_clock nanoseconds since its epoch (max: none).
  std::atomic<int64_t> abort_at_ns_{INT64_MAX};
};

// The first contact: GET /version until the server answers 200, backing off exponentially
// (`initial`, doubling, at most `max` between tries) and logging each failure with its reason.
// Returns true once it answered, false when `*stop` became true first.
struct RetryBackoff {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{10000};
};
bool WaitForApiServer(KubeClient& client, const std::atomic<bool>& stop, RetryBackoff backoff = {});

// Percent-encodes a query parameter value.
std::string UrlEncode(std::string_view s);

}  // namespace tessera::k8s
