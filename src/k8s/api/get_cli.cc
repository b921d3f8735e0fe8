// `tessera get queues|localqueues|workloads|nodes` and `tessera explain NS/NAME`: a running
// serve's state through its read-only JSON API, or a simulation's end state from the output of
// `tessera sim -o json` (--from FILE, k8s/api/sim_document.h) (docs/observability.md, "The CLI").
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "cli/command.h"
#include "cli/flag_range.h"
#include "fmt/format.h"
#include "k8s/api/api_client.h"
#include "k8s/api/get_format.h"
#include "model/json_text.h"
#include "model/printable.h"
#include "k8s/api/get_select.h"
#include "k8s/api/sim_document.h"

namespace tessera::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void OnInterrupt(int) { g_interrupted = true; }

struct ClientFlags {
  std::string server = "http://127.0.0.1:10259";
  std::string token_file;
  std::string output = "table";
  std::string from;  // a `tessera sim -o json` file instead of a server
};

void AddClientFlags(CLI::App* c, ClientFlags& f) {
  c->add_option("--server", f.server, "serve's metrics port (env TESSERA_SERVER)")
      ->envname("TESSERA_SERVER")
      ->capture_default_str();
  c->add_option("--token-file", f.token_file,
                "a file with the bearer token serve was given (--api-token-file)");
  c->add_option("--from", f.from,
                "read a simulation's end state from this file (`tessera sim -o json` output) "
                "instead of a running serve");
  c->add_option("-o,--output", f.output, "table, wide, json or yaml")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "wide", "json", "yaml"}));
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

// -o json / -o yaml of a document.
void PrintDocument(const ClientFlags& f, const nlohmann::json& j) {
  const auto replace = nlohmann::json::error_handler_t::replace;
  if (f.output == "json") std::cout << j.dump(2, ' ', false, replace) << "\n";
  if (f.output == "yaml") std::cout << k8s::ToYaml(nlohmann::json::parse(j.dump(-1, ' ', false, replace)));
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
  std::string what;  // canonical: queues, localqueues, workloads or nodes
  std::string ns;
  bool all_namespaces = false;
  std::string selector;
  bool watch = false;
  double watch_interval = 2;
};

// kubectl's names and short names of the kinds `get` lists; "" when unknown.
std::string Canonical(const std::string& what) {
  static const std::map<std::string, std::string> kNames = {
      {"queues", "queues"},           {"queue", "queues"},           {"clusterqueues", "queues"},
      {"clusterqueue", "queues"},     {"cq", "queues"},              {"localqueues", "localqueues"},
      {"localqueue", "localqueues"},  {"lq", "localqueues"},         {"workloads", "workloads"},
      {"workload", "workloads"},      {"wl", "workloads"},           {"nodes", "nodes"},
      {"node", "nodes"},              {"no", "nodes"}};
  auto it = kNames.find(what);
  return it == kNames.end() ? "" : it->second;
}

// The document of serve's API for `what` (LocalQueues: the workloads), from the server or the
// simulation's file.
absl::StatusOr<nlohmann::json> Fetch(const GetFlags& f, const k8s::ApiClientOptions& o,
                                     const k8s::SimDocument* sim) {
  if (sim != nullptr) {
    if (f.what == "queues") return k8s::SimQueues(*sim);
    if (f.what == "nodes") return k8s::SimNodes(*sim);
    return k8s::SimWorkloads(*sim, f.ns);
  }
  std::string path;
  if (f.what == "queues") path = "/api/v1/queues";
  if (f.what == "nodes") path = "/api/v1/nodes";
  if (f.what == "workloads" || f.what == "localqueues")
    path = "/api/v1/workloads" + (f.ns.empty() ? "" : "?namespace=" + Escape(f.ns));
  return k8s::ApiGet(o, path);
}

// -l: keeps the items whose labels match. serve's documents carry no labels yet.
absl::Status Select(const GetFlags& f, nlohmann::json& doc) {
  if (f.selector.empty()) return absl::OkStatus();
  absl::StatusOr<k8s::Selector> sel = k8s::ParseSelector(f.selector);
  if (!sel.ok()) return sel.status();
  nlohmann::json kept = nlohmann::json::array();
  for (const nlohmann::json& item : doc.at("items")) {
    if (!item.contains("labels"))
      return absl::InvalidArgumentError(
          "-l: tessera serve's API does not give labels yet; -l selects in a simulation's file "
          "(--from)");
    if (k8s::Matches(*sel, item["labels"])) kept.push_back(item);
  }
  doc["items"] = std::move(kept);
  return absl::OkStatus();
}

// One fetch and print; false (with the message on stderr) on an error.
bool GetOnce(const GetFlags& f, const k8s::ApiClientOptions& o, const k8s::SimDocument* sim) {
  absl::StatusOr<nlohmann::json> j = Fetch(f, o, sim);
  absl::Status st = j.ok() ? absl::OkStatus() : j.status();
  if (st.ok()) {
    try {
      st = Select(f, *j);
    } catch (const nlohmann::json::exception& e) {
      st = absl::InvalidArgumentError(fmt::format("an answer of an unexpected shape: {}", e.what()));
    }
  }
  if (!st.ok()) {
    std::cerr << "tessera get: " << EscapeNonPrintable(std::string(st.message())) << "\n";
    return false;
  }
  if (f.client.output == "json" || f.client.output == "yaml") {
    PrintDocument(f.client, *j);
    return true;
  }
  const double now = sim != nullptr ? sim->end : Now();
  const bool all = f.ns.empty();
  absl::StatusOr<std::string> text =
      f.what == "queues"        ? k8s::FormatQueues(*j)
      : f.what == "nodes"       ? k8s::FormatNodes(*j)
      : f.what == "localqueues" ? k8s::FormatLocalQueues(*j, all)
                                : k8s::FormatWorkloads(*j, all, now, f.client.output == "wide");
  if (!text.ok()) {
    std::cerr << "tessera get: "
              << EscapeNonPrintable(std::string(text.status().message())) << "\n";
    return false;
  }
  std::cout << TerminalText(*text) << std::flush;
  return true;
}

int RunGet(GetFlags f) {
  f.what = Canonical(f.what);
  if (f.all_namespaces && !f.ns.empty()) {
    std::cerr << "tessera get: -A and -n " << f.ns << " together: give one\n";
    return 2;
  }
  if (f.watch && !f.client.from.empty()) {
    std::cerr << "tessera get: --watch lists a running serve again and again; --from reads a "
                 "file once: give one\n";
    return 2;
  }
  std::optional<k8s::SimDocument> sim;
  if (!f.client.from.empty()) {
    absl::StatusOr<k8s::SimDocument> d = k8s::LoadSimDocument(f.client.from);
    if (!d.ok()) {
      std::cerr << "tessera get: " << d.status().message() << "\n";
      return 1;
    }
    sim = std::move(*d);
  }
  absl::StatusOr<k8s::ApiClientOptions> o = ClientOptions(f.client);
  if (!o.ok()) {
    std::cerr << "tessera get: " << o.status().message() << "\n";
    return 1;
  }
  const k8s::SimDocument* from = sim ? &*sim : nullptr;
  if (!f.watch) return GetOnce(f, *o, from) ? 0 : 1;
  // --watch: the list again every interval until interrupted (or the server goes away).
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  while (!g_interrupted) {
    if (!GetOnce(f, *o, from)) return 1;
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
  const std::string ns = target.substr(0, slash), name = target.substr(slash + 1);
  absl::StatusOr<nlohmann::json> j;
  double now = Now();
  std::string where = "tessera serve";
  if (!flags.from.empty()) {
    absl::StatusOr<k8s::SimDocument> d = k8s::LoadSimDocument(flags.from);
    if (!d.ok()) {
      std::cerr << "tessera explain: " << d.status().message() << "\n";
      return 1;
    }
    j = k8s::SimWorkload(*d, ns, name);
    now = d->end;
    where = flags.from;
  } else {
    absl::StatusOr<k8s::ApiClientOptions> o = ClientOptions(flags);
    if (!o.ok()) {
      std::cerr << "tessera explain: " << o.status().message() << "\n";
      return 1;
    }
    j = k8s::ApiGet(*o, "/api/v1/workloads/" + Escape(ns) + "/" + Escape(name));
  }
  if (!j.ok()) {
    if (absl::IsNotFound(j.status()))
      std::cerr << fmt::format("tessera explain: no workload {} in {} ({})\n", EscapeNonPrintable(target), where,
                               EscapeNonPrintable(std::string(j.status().message())));
    else
      std::cerr << "tessera explain: "
                << EscapeNonPrintable(std::string(j.status().message())) << "\n";
    return 1;
  }
  if (flags.output == "json" || flags.output == "yaml") {
    PrintDocument(flags, *j);
    return 0;
  }
  absl::StatusOr<std::string> text = k8s::FormatExplain(*j, now);
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
      "get",
      "List the ClusterQueues, LocalQueues, workloads or nodes of a running tessera serve (its "
      "JSON API) or of a simulation's end state (--from FILE)");
  c.app->add_option("what", f->what,
                    "queues (cq, clusterqueues), localqueues (lq), workloads (wl) or nodes (no)")
      ->required()
      ->check([](const std::string& v) {
        return Canonical(v).empty()
                   ? "expected queues (cq), localqueues (lq), workloads (wl) or nodes (no), got " + v
                   : std::string();
      });
  c.app->add_option("-n,--namespace", f->ns, "workloads of this namespace only");
  c.app->add_flag("-A,--all-namespaces", f->all_namespaces,
                  "workloads of every namespace (the default when -n is not given)");
  c.app->add_option("-l,--selector", f->selector,
                    "only the workloads or nodes whose labels match (key=value, key!=value, key, "
                    "!key, joined by commas)");
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
                             "make it fit (a running tessera serve's JSON API, or a simulation's "
                             "end state with --from FILE)");
  c.app->add_option("workload", *target, "NAMESPACE/NAME")->required();
  AddClientFlags(c.app, *flags);
  c.run = [flags, target] { return RunExplain(*flags, *target); };
  return c;
}

}  // namespace tessera::cli
