#include "k8s/api/get_select.h"

#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "k8s/api/table.h"

namespace tessera::k8s {
namespace {

using nlohmann::json;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void Yaml(const json& j, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      absl::StrAppend(&out, pad, json(it.key()).dump(), ":");
      const json& v = it.value();
      if ((v.is_object() || v.is_array()) && !v.empty()) {
        out += "\n";
        Yaml(v, indent + 2, out);
      } else {
        absl::StrAppend(&out, " ", v.is_object() ? "{}" : v.is_array() ? "[]" : v.dump(), "\n");
      }
    }
  } else if (j.is_array()) {
    for (const json& v : j) {
      if ((v.is_object() || v.is_array()) && !v.empty()) {
        // "- " then the first line of the nested block on the same line.
        std::string inner;
        Yaml(v, indent + 2, inner);
        absl::StrAppend(&out, pad, "- ", inner.substr(static_cast<size_t>(indent) + 2));
      } else {
        absl::StrAppend(&out, pad, "- ", v.is_object() ? "{}" : v.is_array() ? "[]" : v.dump(), "\n");
      }
    }
  } else {
    absl::StrAppend(&out, pad, j.dump(), "\n");
  }
}

}  // namespace

absl::StatusOr<Selector> ParseSelector(const std::string& text) {
  Selector s;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string term = Trim(text.substr(start, comma - start));
    start = comma + 1;
    auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(fmt::format("-l {}: {}: {}", text, term, why));
    };
    if (term.empty()) return bad("an empty term (expected key=value, key!=value, key or !key)");
    if (term.find(" in ") != std::string::npos || term.find(" notin ") != std::string::npos ||
        term.find('(') != std::string::npos)
      return bad("set-based terms (in, notin) are not supported; use key=value terms");
    SelectorTerm t;
    size_t op = term.find("!=");
    if (op != std::string::npos) {
      t.op = SelectorTerm::Op::kNe;
      t.key = Trim(term.substr(0, op));
      t.value = Trim(term.substr(op + 2));
    } else if ((op = term.find('=')) != std::string::npos) {
      t.op = SelectorTerm::Op::kEq;
      t.key = Trim(term.substr(0, op));
      const size_t skip = term.compare(op, 2, "==") == 0 ? 2 : 1;
      t.value = Trim(term.substr(op + skip));
    } else if (term[0] == '!') {
      t.op = SelectorTerm::Op::kAbsent;
      t.key = Trim(term.substr(1));
    } else {
      t.op = SelectorTerm::Op::kExists;
      t.key = term;
    }
    if (t.key.empty()) return bad("no label key");
    if (t.key.find_first_of("=! ") != std::string::npos) return bad("not a label key");
    s.push_back(std::move(t));
    if (comma == text.size()) break;
  }
  return s;
}

bool Matches(const Selector& s, const json& labels) {
  for (const SelectorTerm& t : s) {
    const bool has = labels.is_object() && labels.contains(t.key) && labels[t.key].is_string();
    const std::string v = has ? labels[t.key].get<std::string>() : "";
    switch (t.op) {
      case SelectorTerm::Op::kEq:
        if (!has || v != t.value) return false;
        break;
      case SelectorTerm::Op::kNe:
        if (has && v == t.value) return false;
        break;
      case SelectorTerm::Op::kExists:
        if (!has) return false;
        break;
      case SelectorTerm::Op::kAbsent:
        if (has) return false;
        break;
    }
  }
  return true;
}

std::string ToYaml(const json& j) {
  std::string out;
  Yaml(j, 0, out);
  return out;
}

absl::StatusOr<std::string> FormatLocalQueues(const json& workloads, bool with_namespace) {
  try {
    struct Row {
      std::string cq;
      int64_t pending = 0, admitted = 0;
    };
    std::map<std::pair<std::string, std::string>, Row> rows;
    for (const json& w : workloads.at("items")) {
      const json& lq = w.at("localQueue");
      if (!lq.is_string()) continue;
      Row& r = rows[{w.at("namespace").get<std::string>(), lq.get<std::string>()}];
      if (const json& cq = w.at("clusterQueue"); cq.is_string()) r.cq = cq.get<std::string>();
      const std::string state = w.at("state").get<std::string>();
      if (state == "pending") ++r.pending;
      if (state == "admitted" || state == "terminating") ++r.admitted;
    }
    std::vector<std::string> header = {"NAME", "CLUSTERQUEUE", "PENDING", "ADMITTED"};
    if (with_namespace) header.insert(header.begin(), "NAMESPACE");
    Table t(header);
    for (const auto& [key, r] : rows) {
      std::vector<std::string> row = {key.second, r.cq.empty() ? "-" : r.cq,
                                      std::to_string(r.pending), std::to_string(r.admitted)};
      if (with_namespace) row.insert(row.begin(), key.first);
      t.AddRow(std::move(row));
    }
    return t.rows() == 0 ? std::string("No LocalQueues found.\n") : t.Render();
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("the workloads answer has an unexpected shape: {}", e.what()));
  }
}

}  // namespace tessera::k8s
