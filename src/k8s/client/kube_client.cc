#include "k8s/client/kube_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "absl/strings/escaping.h"
#include "fmt/format.h"
#include "k8s/client/proto.h"
#include "model/bounded_read.h"
#include "model/limits.h"
#include "spdlog/spdlog.h"
#include "yaml-cpp/yaml.h"

namespace tessera::k8s {
namespace {

// curl_global_init is not thread-safe; run it once before the first handle.
void GlobalInit() {
  static const bool done = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return true;
  }();
  (void)done;
}

// The kubeconfig and the files it names (tokens, certificates) are a few KiB; a path to
// /dev/zero or a huge file is refused at kMaxKubeconfigBytes instead of read until memory ends.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return ReadFileBounded(path, kMaxKubeconfigBytes, "a kubeconfig or a file it names (4 MiB)");
}

// Finds the entry named `name` in a kubeconfig list (`clusters`, `users`, `contexts`).
YAML::Node FindNamed(const YAML::Node& list, const std::string& name) {
  if (!list || !list.IsSequence()) return YAML::Node();  // a null node: IsMap() is false
  for (const auto& e : list) {
    if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].as<std::string>("") == name)
      return e;
  }
  return YAML::Node();
}

std::string Str(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap() || !n[key] || !n[key].IsScalar()) return "";
  return n[key].as<std::string>("");
}

absl::StatusOr<std::string> Decode(std::string_view b64, std::string_view where) {
  std::string out;
  if (!absl::Base64Unescape(absl::string_view(b64.data(), b64.size()), &out))
    return absl::InvalidArgumentError(fmt::format("{}: not valid base64", where));
  return out;
}

std::string ContentType(CURL* c) {
  char* ct = nullptr;
  curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
  return ct ? std::string(ct) : std::string();
}

// An answer larger than this is refused rather than held: a page of 500 objects of etcd's
// 1.5 MB limit is 750 MB, and real pages are a few MB.
constexpr size_t kMaxResponseBytes = size_t{1} << 30;

struct BoundedBody {
  std::string* body;
  bool too_large = false;
};

size_t WriteToString(char* data, size_t size, size_t n, void* user) {
  auto* b = static_cast<BoundedBody*>(user);
  if (b->body->size() + size * n > kMaxResponseBytes) {
    b->too_large = true;
    return 0;  // aborts the transfer
  }
  b->body->append(data, size * n);
  return size * n;
}

}  // namespace

// The kubeconfig in `root`; may throw YAML::Exception on a node of an unexpected kind.
static absl::StatusOr<KubeConfig> KubeconfigFrom(const YAML::Node& root, std::string_view source,
                                                 const std::string& context);

absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text, std::string_view source,
                                           const std::string& context) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  try {
    return KubeconfigFrom(root, source, context);
  } catch (const YAML::Exception& e) {
    // A node of an unexpected kind somewhere (yaml-cpp throws where a map was expected).
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: not a kubeconfig: {}", source, e.mark.line + 1, e.msg));
  }
}

static absl::StatusOr<KubeConfig> KubeconfigFrom(const YAML::Node& root, std::string_view source,
                                                 const std::string& context) {
  if (!root.IsMap()) return absl::InvalidArgumentError(fmt::format("{}: not a kubeconfig", source));
  std::string ctx_name = context.empty() ? Str(root, "current-context") : context;
  YAML::Node ctx;
  if (!ctx_name.empty()) {
    YAML::Node named = FindNamed(root["contexts"], ctx_name);
    if (named.IsMap()) ctx = named["context"];
    if (!ctx.IsMap())
      return absl::InvalidArgumentError(
          fmt::format("{}: contexts: no context named '{}'", source, ctx_name));
  }
  // Without a context, a kubeconfig with one cluster and at most one user is still usable.
  std::string cluster_name = Str(ctx, "cluster");
  std::string user_name = Str(ctx, "user");
  YAML::Node cluster =
      cluster_name.empty() ? YAML::Node() : FindNamed(root["clusters"], cluster_name);
  if (!cluster.IsMap() && root["clusters"] && root["clusters"].IsSequence() &&
      root["clusters"].size() == 1)
    cluster = root["clusters"][0];
  if (!cluster.IsMap() || !cluster["cluster"] || !cluster["cluster"].IsMap())
    return absl::InvalidArgumentError(
        fmt::format("{}: clusters: no cluster '{}'", source, cluster_name));
  YAML::Node c = cluster["cluster"];
  KubeConfig kc;
  kc.server = Str(c, "server");
  while (!kc.server.empty() && kc.server.back() == '/') kc.server.pop_back();
  if (kc.server.empty())
    return absl::InvalidArgumentError(
        fmt::format("{}: clusters[{}].cluster.server: missing", source, cluster_name));
  kc.ca_file = Str(c, "certificate-authority");
  if (auto d = Str(c, "certificate-authority-data"); !d.empty()) {
    auto dec = Decode(d, fmt::format("{}: certificate-authority-data", source));
    if (!dec.ok()) return dec.status();
    kc.ca_data = *dec;
  }
  kc.insecure_skip_tls_verify = Str(c, "insecure-skip-tls-verify") == "true";
  YAML::Node user = user_name.empty() ? YAML::Node() : FindNamed(root["users"], user_name);
  if (!user.IsMap() && root["users"] && root["users"].IsSequence() && root["users"].size() == 1)
    user = root["users"][0];
  if (user.IsMap() && user["user"] && user["user"].IsMap()) {
    YAML::Node u = user["user"];
    kc.token = Str(u, "token");
    if (auto tf = Str(u, "tokenFile"); kc.token.empty() && !tf.empty()) {
      auto t = ReadFile(tf);
      if (!t.ok()) return t.status();
      kc.token = *t;
      while (!kc.token.empty() && (kc.token.back() == '\n' || kc.token.back() == '\r'))
        kc.token.pop_back();
    }
    kc.client_cert_file = Str(u, "client-certificate");
    kc.client_key_file = Str(u, "client-key");
    if (auto d = Str(u, "client-certificate-data"); !d.empty()) {
      auto dec = Decode(d, fmt::format("{}: client-certificate-data", source));
      if (!dec.ok()) return dec.status();
      kc.client_cert_data = *dec;
    }
    if (auto d = Str(u, "client-key-data"); !d.empty()) {
      auto dec = Decode(d, fmt::format("{}: client-key-data", source));
      if (!dec.ok()) return dec.status();
      kc.client_key_data = *dec;
    }
  }
  return kc;
}

absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseKubeconfig(*text, path, context);
}

absl::StatusOr<KubeConfig> InClusterConfig() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port)
    return absl::FailedPreconditionError(
        "not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set (use --kubeconfig)");
  const std::string dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  auto token = ReadFile(dir + "/token");
  if (!token.ok()) return token.status();
  KubeConfig kc;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  kc.server = fmt::format("https://{}:{}", h, port);
  kc.token = *token;
  kc.ca_file = dir + "/ca.crt";
  return kc;
}

std::string UrlEncode(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

struct KubeClient::Handle {
  CURL* curl = nullptr;
  curl_slist* headers = nullptr;
  ~Handle() {
    if (headers) curl_slist_free_all(headers);
    if (curl) curl_easy_cleanup(curl);
  }
};

KubeClient::KubeClient(KubeConfig config) : config_(std::move(config)) { GlobalInit(); }

KubeClient::~KubeClient() = default;

std::unique_ptr<KubeClient::Handle> KubeClient::Borrow() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!idle_.empty()) {
      auto h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  auto h = std::make_unique<Handle>();
  h->curl = curl_easy_init();
  return h;
}

void KubeClient::Return(std::unique_ptr<Handle> h) {
  std::lock_guard<std::mutex> l(mu_);
  idle_.push_back(std::move(h));
}

void KubeClient::Configure(Handle& h, std::string_view method, std::string_view path) const {
  CURL* c = h.curl;
  // Reset drops per-request options but keeps the connection and TLS session caches.
  curl_easy_reset(c);
  std::string url = config_.server + std::string(path);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  // HTTP/1.1 unless asked otherwise: every handle keeps a connection of its own anyway (no
  // streams to multiplex), and the API server spends less per request on HTTP/1.1 (k8s_bench:
  // 10,000 binds cost it 9.6 CPU-s instead of 11.7, and this process 4.2 instead of 5.3).
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION,
                   config_.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!config_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  if (!config_.ca_data.empty()) {
    curl_blob blob{const_cast<char*>(config_.ca_data.data()), config_.ca_data.size(),
                   CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
  }
  if (!config_.client_cert_file.empty())
    curl_easy_setopt(c, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  if (!config_.client_key_file.empty())
    curl_easy_setopt(c, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  if (!config_.client_cert_data.empty()) {
    curl_blob blob{const_cast<char*>(config_.client_cert_data.data()),
                   config_.client_cert_data.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &blob);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (!config_.client_key_data.empty()) {
    curl_blob blob{const_cast<char*>(config_.client_key_data.data()),
                   config_.client_key_data.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &blob);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }
}

absl::StatusOr<HttpResponse> KubeClient::Patch(std::string_view path, std::string_view body,
                                               PatchType type, std::string_view accept) {
  const char* ct = type == PatchType::kMerge            ? "application/merge-patch+json"
                   : type == PatchType::kStrategicMerge ? "application/strategic-merge-patch+json"
                                                        : "application/json-patch+json";
  return Request("PATCH", path, body, ct, accept);
}

namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What a plain request's progress callback looks at.
struct RequestAbort {
  const std::atomic<bool>* cancel;
  const std::atomic<int64_t>* abort_at_ns;
  bool fired = false;
};

int RequestProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* a = static_cast<RequestAbort*>(user);
  if ((a->cancel && a->cancel->load()) || SteadyNowNs() >= a->abort_at_ns->load()) {
    a->fired = true;
    return 1;  // aborts the transfer (CURLE_ABORTED_BY_CALLBACK)
  }
  return 0;
}

}  // namespace

void KubeClient::AbortAfter(std::chrono::steady_clock::time_point deadline) {
  abort_at_ns_ =
      deadline == std::chrono::steady_clock::time_point::max()
          ? INT64_MAX
          : std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch())
                .count();
}

bool KubeClient::aborted() const { return SteadyNowNs() >= abort_at_ns_.load(); }

absl::StatusOr<HttpResponse> KubeClient::Request(std::string_view method, std::string_view path,
                                                 std::string_view body,
                                                 std::string_view content_type,
                                                 std::string_view accept, RequestLimits limits) {
  if (aborted() || (limits.cancel && limits.cancel->load()))
    return absl::UnavailableError(
        fmt::format("{} {}{}: not sent: shutting down", method, config_.server, path));
  auto h = Borrow();
  Configure(*h, method, path);
  CURL* c = h->curl;
  if (h->headers) curl_slist_free_all(h->headers);
  h->headers = nullptr;
  h->headers = curl_slist_append(h->headers, fmt::format("Accept: {}", accept).c_str());
  h->headers = curl_slist_append(h->headers, fmt::format("Content-Type: {}", content_type).c_str());
  if (!config_.token.empty())
    h->headers = curl_slist_append(h->headers,
                                   fmt::format("Authorization: Bearer {}", config_.token).c_str());
  h->headers = curl_slist_append(h->headers, "Expect:");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.timeout.count()));
  RequestAbort abort{limits.cancel, &abort_at_ns_};
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, RequestProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &abort);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  HttpResponse resp;
  BoundedBody bounded{&resp.body};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteToString);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &bounded);
  CURLcode rc = curl_easy_perform(c);
  if (bounded.too_large)
    return absl::ResourceExhaustedError(fmt::format("{} {}{}: the answer is larger than {} bytes",
                                                    method, config_.server, path,
                                                    kMaxResponseBytes));
  if (rc != CURLE_OK) {
    std::string msg =
        fmt::format("{} {}{}: {}", method, config_.server, path,
                    abort.fired ? "cut short: shutting down" : curl_easy_strerror(rc));
    // A handle whose connection failed is dropped, not pooled.
    return absl::UnavailableError(msg);
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  resp.content_type = ContentType(c);
  Return(std::move(h));
  return resp;
}

namespace {

struct StreamState {
  const std::function<bool(std::string_view, bool)>* on_message;
  const std::atomic<bool>* stop;
  const std::atomic<int64_t>* abort_at_ns;
  std::string buffer;
  long status = 0;
  bool framed = false;  // protobuf: length-prefixed frames instead of lines
  CURL* curl = nullptr;
  bool stopped = false;
  bool bad_frame = false;
  size_t scanned = 0;  // JSON lines: bytes of `buffer` known to hold no newline
};

// A watch event larger than this is not one (a Pod is at most about 1.5 MB, etcd's limit): a
// frame that says it is longer, a JSON line that runs on past it, or an error body beyond it end
// the watch.
constexpr uint32_t kMaxFrame = 64u << 20;

size_t StreamWrite(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<StreamState*>(user);
  const size_t len = size * n;
  if (s->status == 0) {
    curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &s->status);
    s->framed = proto::IsProtobuf(ContentType(s->curl));
  }
  if (s->buffer.size() + len > size_t{kMaxFrame} + 4) {
    // An error body, or one message, larger than any the server sends: not an API server.
    s->bad_frame = true;
    return 0;  // aborts the transfer
  }
  s->buffer.append(data, len);
  if (s->status != 200) return len;  // an error body: kept whole for the caller
  size_t start = 0;
  for (;;) {
    std::string_view message;
    if (s->framed) {
      if (s->buffer.size() - start < 4) break;
      const auto* p = reinterpret_cast<const unsigned char*>(s->buffer.data() + start);
      const uint32_t frame =
          uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
      if (frame > kMaxFrame) {
        s->bad_frame = true;
        return 0;  // not a frame boundary: the stream cannot be followed; aborts the transfer
      }
      if (s->buffer.size() - start - 4 < frame) break;
      message = std::string_view(s->buffer.data() + start + 4, frame);
      start += 4 + frame;
    } else {
      // Searched from where the last search ended, not from the line's start: a long line
      // arriving in many pieces is scanned once, not once per piece.
      size_t nl = s->buffer.find('\n', std::max(start, s->scanned));
      if (nl == std::string::npos) {
        s->scanned = s->buffer.size();
        break;
      }
      message = std::string_view(s->buffer.data() + start, nl - start);
      start = nl + 1;
      if (message.empty()) continue;
    }
    if (!(*s->on_message)(message, s->framed)) {
      s->stopped = true;
      return 0;  // aborts the transfer
    }
  }
  s->buffer.erase(0, start);
  s->scanned = s->scanned > start ? s->scanned - start : 0;
  if (s->stop && s->stop->load()) {
    s->stopped = true;
    return 0;
  }
  return len;
}

int StreamProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* s = static_cast<StreamState*>(user);
  if ((s->stop && s->stop->load()) || SteadyNowNs() >= s->abort_at_ns->load()) {
    s->stopped = true;
    return 1;
  }
  return 0;
}

}  // namespace

absl::StatusOr<HttpResponse> KubeClient::Stream(
    std::string_view path, const std::function<bool(std::string_view, bool)>& on_message,
    const std::atomic<bool>* stop, std::string_view accept) {
  // Watches get their own handle, never pooled: it may be cut at any point.
  Handle h;
  h.curl = curl_easy_init();
  Configure(h, "GET", path);
  CURL* c = h.curl;
  h.headers = curl_slist_append(h.headers, fmt::format("Accept: {}", accept).c_str());
  if (!config_.token.empty())
    h.headers = curl_slist_append(h.headers,
                                  fmt::format("Authorization: Bearer {}", config_.token).c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h.headers);
  StreamState st;
  st.on_message = &on_message;
  st.stop = stop;
  st.abort_at_ns = &abort_at_ns_;
  st.curl = c;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, StreamWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, StreamProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &st);
  // A watch with no traffic for this long is presumed dead (the server sends bookmarks and
  // closes watches itself well before).
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 600L);
  CURLcode rc = curl_easy_perform(c);
  HttpResponse resp;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  resp.content_type = ContentType(c);
  resp.body = std::move(st.buffer);
  if (st.bad_frame)
    return absl::DataLossError(
        fmt::format("watch {}{}: a message longer than {} bytes", config_.server, path, kMaxFrame));
  if (st.stopped && !(stop && stop->load()) && aborted())
    return absl::UnavailableError(
        fmt::format("watch {}{}: cut short: shutting down", config_.server, path));
  if (st.stopped) return resp;
  if (rc != CURLE_OK)
    return absl::UnavailableError(
        fmt::format("watch {}{}: {}", config_.server, path, curl_easy_strerror(rc)));
  return resp;
}

bool WaitForApiServer(KubeClient& client, const std::atomic<bool>& stop, RetryBackoff backoff) {
  auto wait = backoff.initial;
  for (int attempt = 1;; ++attempt) {
    RequestLimits limits;
    limits.cancel = &stop;
    limits.timeout = std::chrono::milliseconds(10000);
    auto version = client.Get("/version", "application/json", limits);
    if (stop) return false;
    if (version.ok() && version->status == 200) {
      if (attempt > 1)
        spdlog::info("tessera: the API server at {} answered (try {})", client.config().server,
                     attempt);
      return true;
    }
    spdlog::warn("tessera: cannot reach the API server at {} (try {}): {}; retrying in {} ms",
                 client.config().server, attempt,
                 version.ok() ? fmt::format("HTTP {}", version->status)
                              : std::string(version.status().message()),
                 wait.count());
    for (auto waited = std::chrono::milliseconds(0); waited < wait && !stop;
         waited += std::chrono::milliseconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (stop) return false;
    wait = std::min(wait * 2, backoff.max);
  }
}

}  // namespace tessera::k8s
