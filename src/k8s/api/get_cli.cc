// `tessera get queues|workloads|nodes` and `tessera explain NS/NAME`: a running serve's state
// through its read-only JSON API (docs/observability.md, "The CLI").
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>

#include "cli/command.h"
#include "cli/flag_range.h"
#include "fmt/format.h"
#include "k8s/api/api_client.h"
#include "k8s/api/get_format.h"
#include "model/json_text.h"
#include "model/printable.h"

namespace tessera::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void OnInterrupt(int) { g_interrupted = true; }

struct ClientFlags {
  std::string server = "http://127.0.0.1:10259";
  std::string token_file;
  std::string output = "table";
};

void AddClientFlags(CLI::App* c, ClientFlags& f) {
  c->add_option("--server", f.server, "serve's metrics port (env TESSERA_SERVER)")
      ->envname("TESSERA_SERVER")
      ->capture_default_str();
  c->add_option("--token-file", f.token_file,
                "a file with the bearer token serve was given (--api-token-file)");
  c->add_option("-o,--output", f.output, "table or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
}

absl::StatusOr<k8s::ApiClientOptions> ClientOptions(const ClientFlags& f) {
  k8s::ApiClientOptions o;
  o.server = f.server;
  if (!f.token_file.empty()) {
    absl::StatusOr<std::string> t = k8s::ReadTokenFile("--token-file", f.token_file);
    if (!t.ok()) return t.status();
    o.token = *t;
  }
  return o;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "a b" -> "a%20b": namespaces and names are DNS labels, but a typo must not break the URL.
std::string Escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_')
      out.push_back(static_cast<char>(c));
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

struct GetFlags {
  ClientFlags client;
  std::string what;
  std::string ns;
  bool all_namespaces = false;
  bool watch = false;
  double watch_interval = 2;
};

// One fetch and print; false (with the message on stderr) on an error.
bool GetOnce(const GetFlags& f, const k8s::ApiClientOptions& o) {
  std::string path;
  if (f.what == "queues") path = "/api/v1/queues";
  if (f.what == "nodes") path = "/api/v1/nodes";
  if (f.what == "workloads")
    path = "/api/v1/workloads" + (f.ns.empty() ? "" : "?namespace=" + Escape(f.ns));
  absl::StatusOr<nlohmann::json> j = k8s::ApiGet(o, path);
  if (!j.ok()) {
    std::cerr << "tessera get: " << EscapeNonPrintable(std::string(j.status().message())) << "\n";
    return false;
  }
  if (f.client.output == "json") {
    std::cout << DumpJson(*j, 2) << "\n";
    return true;
  }
  absl::StatusOr<std::string> text = f.what == "queues" ? k8s::FormatQueues(*j)
                                     : f.what == "nodes"
                                         ? k8s::FormatNodes(*j)
                                         : k8s::FormatWorkloads(*j, f.ns.empty(), Now());
  if (!text.ok()) {
    std::cerr << "tessera get: "
              << EscapeNonPrintable(std::string(text.status().message())) << "\n";
    return false;
  }
  std::cout << TerminalText(*text) << std::flush;
  return true;
}

int RunGet(const GetFlags& f) {
  absl::StatusOr<k8s::ApiClientOptions> o = ClientOptions(f.client);
  if (!o.ok()) {
    std::cerr << "tessera get: " << o.status().message() << "\n";
    return 1;
  }
  if (!f.watch) return GetOnce(f, *o) ? 0 : 1;
  // --watch: the list again every interval until interrupted (or the server goes away).
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  while (!g_interrupted) {
    if (!GetOnce(f, *o)) return 1;
    std::cout << "\n" << std::flush;
    for (double waited = 0; waited < f.watch_interval && !g_interrupted; waited += 0.1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

int RunExplain(const ClientFlags& flags, const std::string& target) {
  auto slash = target.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == target.size() ||
      target.find('/', slash + 1) != std::string::npos) {
    std::cerr << fmt::format("tessera explain: {}: expected NAMESPACE/NAME\n", target);
    return 1;
  }
  absl::StatusOr<k8s::ApiClientOptions> o = ClientOptions(flags);
  if (!o.ok()) {
    std::cerr << "tessera explain: " << o.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<nlohmann::json> j =
      k8s::ApiGet(*o, "/api/v1/workloads/" + Escape(target.substr(0, slash)) + "/" +
                          Escape(target.substr(slash + 1)));
  if (!j.ok()) {
    if (absl::IsNotFound(j.status()))
      std::cerr << fmt::format("tessera explain: no workload {} in tessera serve ({})\n",
                               EscapeNonPrintable(target),
                               EscapeNonPrintable(std::string(j.status().message())));
    else
      std::cerr << "tessera explain: "
                << EscapeNonPrintable(std::string(j.status().message())) << "\n";
    return 1;
  }
  if (flags.output == "json") {
    std::cout << DumpJson(*j, 2) << "\n";
    return 0;
  }
  absl::StatusOr<std::string> text = k8s::FormatExplain(*j, Now());
  if (!text.ok()) {
    std::cerr << "tessera explain: "
              << EscapeNonPrintable(std::string(text.status().message())) << "\n";
    return 1;
  }
  std::cout << TerminalText(*text);
  return 0;
}

}  // namespace

Command AddGetCommand(CLI::App& app) {
  auto f = std::make_shared<GetFlags>();
  Command c;
  c.app = app.add_subcommand(
      "get", "List a running tessera serve's queues, workloads or nodes (its JSON API)");
  c.app->add_option("what", f->what, "queues, workloads or nodes")
      ->required()
      ->check(CLI::IsMember({"queues", "workloads", "nodes"}));
  c.app->add_option("-n,--namespace", f->ns, "workloads of this namespace only");
  c.app->add_flag("-w,--watch", f->watch, "print the list again every --watch-interval seconds");
  c.app->add_option("--watch-interval", f->watch_interval, "seconds between lists")
      ->capture_default_str()
      ->check(Range(0.1, 3600, false, "a finite number of seconds from 0.1 to 3600"));
  AddClientFlags(c.app, f->client);
  c.run = [f] { return RunGet(*f); };
  return c;
}

Command AddExplainCommand(CLI::App& app) {
  auto flags = std::make_shared<ClientFlags>();
  auto target = std::make_shared<std::string>();
  Command c;
  c.app = app.add_subcommand("explain",
                             "Why a workload waits, when it is expected to start and what would "
                             "make it fit (a running tessera serve's JSON API)");
  c.app->add_option("workload", *target, "NAMESPACE/NAME")->required();
  AddClientFlags(c.app, *flags);
  c.run = [flags, target] { return RunExplain(*flags, *target); };
  return c;
}

}  // namespace tessera::cli
