// Runs one scenario file through the simulator and compares the decisions with the expected
// ones in the .expect file beside it.
//
//   scenario_runner SCENARIO.yaml SCENARIO.expect     compare; exit 1 on any difference
//   scenario_runner SCENARIO.yaml --print             print the actual outcome in .expect form
//
// .expect lines (blank lines and # comments are ignored):
//   event TIME TYPE NAMESPACE/NAME [queue=Q] [nodes=N1,N2,...] [gpus=G,G+G,...]
//         [preemptor=NS/NAME] [grace=SECONDS] [reason~"..."]
// (gpus= lists each pod's GPU device indices on its node, joined by '+', in the order of
// nodes=; '-' for a pod without GPUs; present when some pod has GPUs. A MIG instance on a node
// whose layout Tessera chooses shows as DEVICE@FIRST_SLICE. devices= lists each pod's DRA
// devices by name the same way, present when some pod has DRA claims.)
//   state NAMESPACE/NAME STATE [queue=Q] [reason~"..."]
//   cost ROLLUP NAME [gpuHours=H] [allocatedDollars=D] [dollars=D]
//   pool NAME [nodeHours=H] [idleNodeHours=H] [peakNodes=N] [nodesAtEnd=N] [cost=D] [idleCost=D]
//   pool - waitingGangGpuHours=H
// (NodePools, docs/autoscaling.md; node events read `event TIME node-added NODE [pool=P]
// [reason~"..."]`, likewise node-removed and node-interrupted.)
// (with SchedulerConfig spec.pricing, docs/cost.md: ROLLUP is clusterQueue, cohort, namespace,
// localQueue, workload or label:KEY with its row's NAME; `cost idle -` and `cost total -`;
// figures rounded to a millionth.)
// Every `event` line must match the simulation's events one to one, in order; `state` lines
// check the final state of the workloads they name, `cost` lines the rows they name. Keys left out
// are not checked.
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/loader.h"
#include "engine/dra_state.h"
#include "fmt/format.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

// Splits on spaces, keeping "quoted strings" whole (quotes removed).
std::vector<std::string> Tokenize(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

struct Actual {
  std::string head;  // "event 0 admitted ns/name" or "state ns/name running"
  std::map<std::string, std::string> keys;
};

std::vector<Actual> ActualEvents(const Simulator& sim) {
  const Model& m = sim.scheduler().model();
  std::vector<Actual> out;
  for (const auto& e : sim.events()) {
    Actual a;
    if (e.node >= 0) {
      const Node& node = m.nodes[e.node];
      a.head = fmt::format("event {} {} {}", e.time, SimEventTypeName(e.type), node.name);
      if (node.pool >= 0) a.keys["pool"] = m.node_pools[node.pool].name;
      if (!e.reason.empty()) a.keys["reason"] = e.reason;
      out.push_back(std::move(a));
      continue;
    }
    a.head = fmt::format("event {} {} {}", e.time, SimEventTypeName(e.type),
                         m.workloads[e.workload].Key());
    if (e.cluster_queue >= 0) a.keys["queue"] = m.cluster_queues[e.cluster_queue].name;
    std::string nodes;
    for (const auto& p : e.pods) nodes += (nodes.empty() ? "" : ",") + m.nodes[p.node].name;
    if (!e.pods.empty()) a.keys["nodes"] = nodes;
    std::string gpus;
    bool any_gpu = false;
    for (const auto& p : e.pods) {
      std::string one;
      for (size_t i = 0; i < p.gpus.size(); ++i) {
        one += fmt::format("{}{}", one.empty() ? "" : "+", p.gpus[i]);
        if (i < p.mig_starts.size()) one += fmt::format("@{}", p.mig_starts[i]);
      }
      any_gpu = any_gpu || !one.empty();
      gpus += fmt::format("{}{}", gpus.empty() ? "" : ",", one.empty() ? "-" : one);
    }
    if (any_gpu) a.keys["gpus"] = gpus;
    std::string devices;
    bool any_device = false;
    for (const auto& p : e.pods) {
      std::string one;
      for (const DraAllocation& claim : p.dra)
        for (int32_t d : claim.devices)
          one += (one.empty() ? "" : "+") + DraDevices(m)[d].second->name;
      any_device = any_device || !one.empty();
      devices += fmt::format("{}{}", devices.empty() ? "" : ",", one.empty() ? "-" : one);
    }
    if (any_device) a.keys["devices"] = devices;
    if (e.preemptor >= 0) a.keys["preemptor"] = m.workloads[e.preemptor].Key();
    if (e.grace_seconds > 0) a.keys["grace"] = fmt::format("{}", e.grace_seconds);
    if (!e.reason.empty()) a.keys["reason"] = e.reason;
    out.push_back(std::move(a));
  }
  return out;
}

std::map<std::string, Actual> ActualStates(const Simulator& sim) {
  const Scheduler& s = sim.scheduler();
  const Model& m = s.model();
  std::map<std::string, Actual> out;
  for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
    const auto& st = s.status(id);
    Actual a;
    a.head = fmt::format("state {} {}", m.workloads[id].Key(), WorkloadStateName(st.state));
    if (st.cluster_queue >= 0) a.keys["queue"] = m.cluster_queues[st.cluster_queue].name;
    if (!st.reason.empty()) a.keys["reason"] = st.reason;
    out[m.workloads[id].Key()] = std::move(a);
  }
  return out;
}

// The cost rows, keyed "ROLLUP NAME", when the scenario has prices.
std::map<std::string, Actual> ActualCosts(const Simulator& sim) {
  std::map<std::string, Actual> out;
  if (!sim.summary().cost) return out;
  const cost::CostReport& c = *sim.summary().cost;
  auto num = [](double x) { return fmt::format("{}", std::round(x * 1e6) / 1e6); };
  auto add = [&](const std::string& rollup, const std::string& name, double gpu_hours,
                 const char* key, double dollars) {
    Actual a;
    a.head = fmt::format("cost {} {}", rollup, name);
    a.keys["gpuHours"] = num(gpu_hours);
    a.keys[key] = num(dollars);
    out[rollup + " " + name] = std::move(a);
  };
  auto rows = [&](const std::string& rollup, const cost::CostRows& r) {
    for (const auto& [name, l] : r)
      add(rollup, name, l.gpu_hours, "allocatedDollars", l.allocated_dollars());
  };
  rows("clusterQueue", c.by_cluster_queue);
  rows("cohort", c.by_cohort);
  rows("namespace", c.by_namespace);
  rows("localQueue", c.by_local_queue);
  rows("workload", c.by_workload);
  for (const auto& [key, r] : c.by_label) rows("label:" + key, r);
  add("idle", "-", c.idle.gpu_hours, "dollars", c.idle.dollars);
  add("total", "-", c.allocated.gpu_hours + c.idle.gpu_hours, "dollars", c.total_dollars());
  return out;
}

// Node-hours per NodePool (docs/autoscaling.md), keyed by pool name; "-" for the run's figures.
std::map<std::string, Actual> ActualPools(const Simulator& sim) {
  std::map<std::string, Actual> out;
  const SimSummary& sum = sim.summary();
  auto num = [](double x) { return fmt::format("{}", std::round(x * 1e6) / 1e6); };
  for (const PoolUsage& u : sum.node_pools) {
    Actual a;
    a.head = "pool " + u.pool;
    a.keys["nodeHours"] = num(u.node_hours);
    a.keys["idleNodeHours"] = num(u.idle_node_hours);
    a.keys["peakNodes"] = fmt::format("{}", u.peak_nodes);
    a.keys["nodesAtEnd"] = fmt::format("{}", u.nodes_at_end);
    if (u.cost) {
      a.keys["cost"] = num(*u.cost);
      a.keys["idleCost"] = num(*u.idle_cost);
    }
    out[u.pool] = std::move(a);
  }
  if (sum.elastic) {
    Actual a;
    a.head = "pool -";
    a.keys["waitingGangGpuHours"] = num(sum.waiting_gang_gpu_hours);
    out["-"] = std::move(a);
  }
  return out;
}

std::string Print(const Actual& a) {
  std::string s = a.head;
  for (const auto& [k, v] : a.keys) {
    if (k == "reason")
      s += fmt::format(" reason~\"{}\"", v);
    else
      s += fmt::format(" {}={}", k, v);
  }
  return s;
}

// Compares an expected line (tokens) with an actual record; returns "" or what differs.
std::string Compare(const std::vector<std::string>& want, const Actual& got) {
  size_t head_tokens = want[0] == "event" ? 4 : want[0] == "pool" ? 2 : 3;
  if (want.size() < head_tokens) return "malformed line";
  std::string head;
  for (size_t i = 0; i < head_tokens; ++i) head += (i ? " " : "") + want[i];
  if (head != got.head) return fmt::format("expected `{}`, got `{}`", head, got.head);
  for (size_t i = head_tokens; i < want.size(); ++i) {
    const std::string& t = want[i];
    auto tilde = t.find("~");
    auto eq = t.find('=');
    if (tilde != std::string::npos && (eq == std::string::npos || tilde < eq)) {
      std::string key = t.substr(0, tilde), sub = t.substr(tilde + 1);
      auto it = got.keys.find(key);
      if (it == got.keys.end() || it->second.find(sub) == std::string::npos)
        return fmt::format("{}: expected {} containing \"{}\", got \"{}\"", got.head, key, sub,
                           it == got.keys.end() ? "" : it->second);
    } else if (eq != std::string::npos) {
      std::string key = t.substr(0, eq), val = t.substr(eq + 1);
      auto it = got.keys.find(key);
      std::string have = it == got.keys.end() ? "" : it->second;
      if (have != val)
        return fmt::format("{}: expected {}={}, got {}={}", got.head, key, val, key, have);
    } else {
      return "unknown token " + t;
    }
  }
  return "";
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: scenario_runner SCENARIO.yaml (SCENARIO.expect | --print)\n";
    return 2;
  }
  LoadResult r = LoadManifestFiles({argv[1]});
  for (const auto& d : r.diagnostics)
    if (d.severity != Diagnostic::Severity::kNotice) std::cerr << d.ToString() << "\n";
  if (!r.ok()) return 1;
  auto sim = Simulator::Create(std::move(r.model), SimOptions{});
  if (!sim.ok()) {
    std::cerr << sim.status() << "\n";
    return 1;
  }
  if (auto st = (*sim)->Run(); !st.ok()) {
    // An expect file may say the run fails: a line `error "TEXT"`, TEXT part of the message.
    std::ifstream in(argv[2]);
    for (std::string line; in && std::getline(in, line);) {
      if (line.rfind("error \"", 0) != 0 || line.size() < 8 || line.back() != '"') continue;
      const std::string want = line.substr(7, line.size() - 8);
      if (std::string(st.message()).find(want) != std::string::npos) {
        std::cout << fmt::format("{}: failed as expected: {}\n", argv[1],
                                 std::string(st.message()));
        return 0;
      }
    }
    std::cerr << st << "\n";
    return 1;
  }
  auto events = ActualEvents(**sim);
  auto states = ActualStates(**sim);
  auto costs = ActualCosts(**sim);
  auto pools = ActualPools(**sim);
  if (std::string(argv[2]) == "--print") {
    for (const auto& e : events) std::cout << Print(e) << "\n";
    for (const auto& [k, s] : states) std::cout << Print(s) << "\n";
    for (const auto& [k, c] : costs) std::cout << Print(c) << "\n";
    for (const auto& [k, p] : pools) std::cout << Print(p) << "\n";
    return 0;
  }
  std::ifstream in(argv[2]);
  if (!in) {
    std::cerr << "cannot read " << argv[2] << "\n";
    return 1;
  }
  std::string line;
  int lineno = 0, failures = 0, checks = 0;
  size_t next_event = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto tokens = Tokenize(line);
    if (tokens.empty() || tokens[0][0] == '#') continue;
    ++checks;
    std::string diff;
    if (tokens[0] == "event") {
      if (next_event >= events.size())
        diff = "expected an event, the simulation had no more";
      else
        diff = Compare(tokens, events[next_event++]);
    } else if (tokens[0] == "state" && tokens.size() >= 3) {
      auto it = states.find(tokens[1]);
      diff = it == states.end() ? "no workload " + tokens[1] : Compare(tokens, it->second);
    } else if (tokens[0] == "pool" && tokens.size() >= 2) {
      auto it = pools.find(tokens[1]);
      diff = it == pools.end() ? "no NodePool " + tokens[1] : Compare(tokens, it->second);
    } else if (tokens[0] == "cost" && tokens.size() >= 3) {
      auto it = costs.find(tokens[1] + " " + tokens[2]);
      diff = it == costs.end() ? "no cost row " + tokens[1] + " " + tokens[2]
                               : Compare(tokens, it->second);
    } else {
      diff = "malformed line";
    }
    if (!diff.empty()) {
      ++failures;
      std::cerr << argv[2] << ":" << lineno << ": " << diff << "\n";
    }
  }
  for (; next_event < events.size(); ++next_event) {
    ++failures;
    std::cerr << argv[2] << ": unexpected extra event: " << Print(events[next_event]) << "\n";
  }
  std::cout << fmt::format("{}: {} checks, {} failed\n", argv[1], checks, failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
