// The manifest loader's driver: splits the input into documents, parses each one with yaml-cpp,
// dispatches on apiVersion/kind to the readers in nodes.cc and queues.cc and to the job kinds'
// plugins (kinds/registry.h), and commits what a document produced only when it had no error.
#include "config/loader.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <utility>

#include "config/dra_objects.h"
#include "config/foreign_queues.h"
#include "config/groups.h"
#include "config/kinds.h"
#include "config/kinds/registry.h"
#include "config/pod_template_probe.h"
#include "config/workload_meta.h"
#include "config/yaml_events.h"
#include "config/yaml_util.h"
#include "fmt/format.h"
#include "model/bounded_read.h"
#include "model/limits.h"
#include "model/printable.h"

namespace tessera {

using config_internal::Child;
using config_internal::DocContext;
using config_internal::GroupPod;
using config_internal::IsNullish;
using config_internal::ObjectMeta;
using config_internal::Staged;

std::string Diagnostic::ToString() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": ";
  }
  switch (severity) {
    case Severity::kNotice:
      out += "notice: ";
      break;
    case Severity::kWarning:
      out += "warning: ";
      break;
    case Severity::kError:
      out += "error: ";
      break;
  }
  if (!path.empty()) out += path + ": ";
  out += message;
  // Names and values come from the input as written; a terminal must not interpret them.
  return EscapeNonPrintable(out);
}

bool LoadResult::ok() const { return count(Diagnostic::Severity::kError) == 0; }

int LoadResult::count(Diagnostic::Severity s) const {
  return static_cast<int>(std::count_if(diagnostics.begin(), diagnostics.end(),
                                        [s](const Diagnostic& d) { return d.severity == s; }));
}

namespace {

namespace ci = config_internal;

using config_internal::BaseGroups;
using config_internal::GroupSpec;
using config_internal::KindSpec;

// The groups Tessera reads. An unknown kind in one of these is an error (most likely a typo); an
// object of any other group is skipped with a notice. A job kind takes the place of a skipped
// kind of its name.
const std::vector<GroupSpec>& Groups() {
  static const auto* groups = [] {
    std::vector<GroupSpec>* gs = BaseGroups();
    for (const ci::JobKind& jk : ci::JobKinds()) {
      auto g = std::find_if(gs->begin(), gs->end(),
                            [&](const GroupSpec& s) { return s.group == jk.group; });
      if (g == gs->end()) g = gs->insert(gs->end(), GroupSpec{jk.group, jk.versions, {}});
      auto k = std::find_if(g->kinds.begin(), g->kinds.end(),
                            [&](const KindSpec& s) { return s.kind == jk.kind; });
      KindSpec spec{jk.kind, jk.read, jk.namespaced, jk.versions};
      if (k == g->kinds.end()) {
        g->kinds.push_back(std::move(spec));
      } else {
        *k = std::move(spec);
      }
    }
    return gs;
  }();
  return *groups;
}

const GroupSpec* FindGroup(std::string_view group) {
  for (const auto& g : Groups())
    if (g.group == group) return &g;
  return nullptr;
}

// The closest of `candidates` to `word`, when close enough to be a plausible typo.
std::optional<std::string_view> Suggest(std::string_view word,
                                        const std::vector<std::string_view>& candidates) {
  std::optional<std::string_view> best;
  size_t best_d = std::max<size_t>(2, word.size() / 4) + 1;
  for (std::string_view c : candidates) {
    size_t d = ci::EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

// Flow collections nested deeper than this are refused before yaml-cpp sees them: no manifest
// needs it, and yaml-cpp's own guard (depth 500) only says "bad file".
constexpr int kMaxFlowDepth = 100;

// Returns the 0-based line where flow nesting first exceeds kMaxFlowDepth, or -1. Counts brackets
// without understanding quotes or block scalars, so it may over-count only in text that holds
// more than 100 unclosed brackets anyway.
int FindDeepNesting(std::string_view text) {
  int depth = 0, line = 0;
  bool comment = false;
  char prev = '\n';
  for (char c : text) {
    if (c == '\n') {
      ++line;
      comment = false;
    } else if (!comment) {
      if (c == '#' && (prev == ' ' || prev == '\t' || prev == '\n')) {
        comment = true;
      } else if (c == '[' || c == '{') {
        if (++depth > kMaxFlowDepth) return line;
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
    }
    prev = c;
  }
  return -1;
}

// 0-based index of the last line of `text` that is not blank.
int LastTextLine(std::string_view text) {
  int line = 0, last = 0;
  bool blank = true;
  for (char c : text) {
    if (c == '\n') {
      if (!blank) last = line;
      ++line;
      blank = true;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      blank = false;
    }
  }
  if (!blank) last = line;
  return last;
}

struct Chunk {
  std::string text;
  int first_line = 0;  // 0-based line of text's first line in the file
};

bool IsMarker(std::string_view line, std::string_view marker) {
  if (line.substr(0, 3) != marker) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r';
}

// Splits at "---" and "..." lines (column 0), so that a syntax error in one document does not
// take the others with it. Content after "---" on the same line stays in the document, with the
// marker blanked so columns stay right.
std::vector<Chunk> SplitDocuments(std::string_view text) {
  std::vector<Chunk> chunks;
  Chunk cur;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (IsMarker(line, "---") || IsMarker(line, "...")) {
      chunks.push_back(std::move(cur));
      cur = Chunk{};
      cur.first_line = line_no;
      if (line[0] == '-') {
        cur.text.append("   ");
        cur.text.append(line.substr(3));
      }
      cur.text.push_back('\n');
    } else {
      cur.text.append(line);
      cur.text.push_back('\n');
    }
    ++line_no;
    if (end == text.size()) break;
    pos = end + 1;
  }
  chunks.push_back(std::move(cur));
  return chunks;
}

// Kubernetes' rule for object names (IsDNS1123Subdomain; a namespace: IsDNS1123Label): lowercase
// letters, digits and '-' (and '.' between labels of a subdomain), starting and ending with a
// letter or digit, at most 253 (63) characters. "" when `name` follows it, else why not.
std::string CheckObjectName(std::string_view name, bool label) {
  const size_t max = label ? 63 : 253;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok = !name.empty() && name.size() <= max;
  char prev = '.';
  for (size_t i = 0; ok && i < name.size(); ++i) {
    const char c = name[i];
    if (c == '.' && !label) {
      ok = alnum(prev);
    } else if (c == '-') {
      ok = prev != '.';
    } else {
      ok = alnum(c);
    }
    prev = c;
  }
  if (ok && !alnum(prev)) ok = false;
  if (ok) return "";
  return fmt::format(
      "\"{}\" is not a valid {}name: Kubernetes names are lowercase letters, digits{} and '-', "
      "start and end with a letter or digit, and have at most {} characters",
      name.size() > 300 ? std::string(name.substr(0, 300)) + "..." : std::string(name),
      label ? "namespace " : "", label ? "" : ", '.'", max);
}

class Loader {
 public:
  explicit Loader(LoadResult& into) : into_(into) {
    for (const Node& n : into_.model.nodes) gpu_slots_ += n.allocatable[kGpu];
  }

  void LoadText(std::string_view text, std::string_view filename) {
    ci::EventChecks checks;  // the alias budget is per file
    for (Chunk& chunk : SplitDocuments(text)) LoadChunk(chunk, filename, checks);
  }

  void Finish() {
    try {
      ci::ResolvePodGroups(std::move(group_pods_), into_.model, into_.diagnostics);
      ci::ResolveTrainJobs(std::move(train_parts_), into_.model, into_.diagnostics);
      ci::ResolveDra(into_.model, into_.diagnostics);
      LoadForeignQueues(std::exchange(foreign_queues_, {}), into_);
      ci::ResolveCreationTimestamps(into_.model);
    } catch (const std::exception& e) {
      into_.diagnostics.push_back(
          {Diagnostic::Severity::kError, "", 0, "", std::string("internal error: ") + e.what()});
    }
    group_pods_.clear();
    train_parts_.clear();
  }

 private:
  void LoadChunk(const Chunk& chunk, std::string_view filename, ci::EventChecks& checks) {
    DocContext ctx(filename, chunk.first_line, &into_.diagnostics,
                   chunk.first_line + LastTextLine(chunk.text) + 1);
    if (int deep = FindDeepNesting(chunk.text); deep >= 0) {
      ctx.Report(Diagnostic::Severity::kError, chunk.first_line + deep + 1, "",
                 "YAML nested deeper than " + std::to_string(kMaxFlowDepth) + " levels");
      return;
    }
    // Duplicate keys and alias expansion, before yaml-cpp builds a tree (yaml_events.h).
    std::vector<ci::EventChecks::Problem> problems = checks.Check(chunk.text, chunk.first_line);
    for (auto& p : problems) {
      ctx.Report(Diagnostic::Severity::kError, chunk.first_line + p.line + 1, std::move(p.path),
                 std::move(p.message));
    }
    if (!problems.empty()) return;
    YAML::Node root;
    try {
      root = YAML::Load(chunk.text);
    } catch (const YAML::Exception& e) {
      // yaml-cpp reports an unclosed collection at the end of the input; point at the
      // document's last line with text instead of at the next document's marker.
      int last = LastTextLine(chunk.text);
      int line = chunk.first_line + std::min(e.mark.line >= 0 ? e.mark.line : 0, last) + 1;
      std::string msg = e.msg;
      if (msg == "bad file") msg += " (nested too deep?)";
      ctx.Report(Diagnostic::Severity::kError, line, "", "YAML syntax error: " + msg);
      return;
    } catch (const std::exception& e) {
      ctx.Report(Diagnostic::Severity::kError, chunk.first_line + 1, "",
                 std::string("YAML error: ") + e.what());
      return;
    }
    try {
      if (IsNullish(root)) return;
      LoadObject(ctx, root, /*in_list=*/false);
    } catch (const std::exception& e) {
      // yaml-cpp throws on misuse; the readers check types first, so this is a loader bug. It
      // still must not escape: report it against the document.
      ctx.Report(Diagnostic::Severity::kError, chunk.first_line + 1, "",
                 std::string("internal error while reading this document: ") + e.what());
    }
  }

  void LoadObject(DocContext& ctx, const YAML::Node& root, bool in_list) {
    if (!root.IsMap()) {
      ctx.Error(root, "",
                std::string("expected a Kubernetes object (a map with apiVersion and kind), got ") +
                    ci::TypeName(root));
      return;
    }
    auto api_version = ci::RequireString(ctx, root, "apiVersion", "apiVersion");
    auto kind = ci::RequireString(ctx, root, "kind", "kind");
    if (!api_version || !kind) return;

    ObjectMeta meta;
    meta.root = root;
    meta.kind = *kind;
    meta.source = ctx.Source(root);
    if (auto slash = api_version->find('/'); slash != std::string::npos) {
      meta.group = api_version->substr(0, slash);
      meta.version = api_version->substr(slash + 1);
    } else {
      meta.version = *api_version;
    }
    const GroupSpec* group = FindGroup(meta.group);
    if (group == nullptr) {
      std::vector<std::string_view> names;
      for (const auto& g : Groups())
        if (!g.group.empty()) names.push_back(g.group);
      std::string msg = "skipped " + meta.kind + " (" + *api_version + "): not a kind Tessera uses";
      ++into_.skipped_objects;
      if (auto s = Suggest(meta.group, names); s && !meta.group.empty()) {
        ctx.Warning(Child(root, "apiVersion"), "apiVersion",
                    msg + "; did you mean " + std::string(*s) + "/" + meta.version + "?");
      } else if (!SkippedWorkload(ctx, meta, *api_version)) {
        ctx.Notice(root, "", msg);
      }
      return;
    }
    const KindSpec* spec = nullptr;
    for (const auto& k : group->kinds)
      if (k.kind == meta.kind) spec = &k;
    std::string group_name = meta.group.empty() ? "core v1" : meta.group;
    if (spec == nullptr) {
      std::vector<std::string_view> names;
      for (const auto& k : group->kinds) names.push_back(k.kind);
      std::string msg = "unknown kind " + meta.kind + " in " + group_name;
      if (auto s = Suggest(meta.kind, names)) msg += "; did you mean " + std::string(*s) + "?";
      ctx.Error(Child(root, "kind"), "kind", msg);
      return;
    }
    if (meta.kind == "List" && meta.group.empty()) {
      if (in_list) {
        ctx.Error(root, "kind", "a List inside a List is not supported");
        return;
      }
      // Each item is loaded (and dropped on error) on its own, as if it were a document.
      ci::ForEachSeq(ctx, Child(root, "items"), "items",
                     [&](size_t, const YAML::Node& item, const std::string&) {
                       DocContext item_ctx(ctx.file(), ctx.line_offset(), &into_.diagnostics,
                                           ctx.last_line());
                       if (!IsNullish(item)) LoadObject(item_ctx, item, /*in_list=*/true);
                       return true;
                     });
      return;
    }
    const auto& versions = spec->versions.empty() ? group->versions : spec->versions;
    if (std::find(versions.begin(), versions.end(), meta.version) == versions.end()) {
      ctx.Warning(Child(root, "apiVersion"), "apiVersion",
                  "version " + meta.version + " of " + group_name +
                      " is not one Tessera knows; reading it as " + std::string(versions.front()));
    }
    if (spec->reader == nullptr) {
      ++into_.skipped_objects;
      if (SkippedWorkload(ctx, meta, *api_version)) return;
      std::string name;
      if (auto n = ci::GetString(ctx, Child(root, "metadata"), "name", "metadata.name")) name = *n;
      ctx.Notice(
          root, "",
          "skipped " + meta.kind + (name.empty() ? "" : " " + name) + " (" + *api_version +
              "): Tessera does not use this kind" +
              (meta.group.empty() && (meta.kind == "ResourceQuota" || meta.kind == "LimitRange")
                   ? "; the API server's admission enforces it on the pods Kubernetes "
                     "creates, not on what Tessera simulates"
                   : ""));
      return;
    }
    if (!ReadMetadata(ctx, meta, spec->namespaced)) return;

    Staged staged;
    spec->reader(ctx, meta, staged);
    if (ctx.failed()) return;
    // PodGroup has two API groups; one object either way.
    std::string group_key =
        meta.group == "scheduling.sigs.k8s.io" ? "scheduling.x-k8s.io" : meta.group;
    Commit(ctx, group_key + "/" + meta.kind + "/" + meta.ns + "/" + meta.name, meta, staged);
  }

  // A skipped object with pod templates: a warning (true), as its pods will not be scheduled.
  bool SkippedWorkload(DocContext& ctx, const ObjectMeta& meta, const std::string& api_version) {
    auto at = ci::SkippedObjectPodTemplate(meta.group, meta.kind, meta.root);
    if (!at) return false;
    const std::string name = ci::LenientObjectName(meta.root);
    ctx.Warning(meta.root, "",
                fmt::format("skipped {}{} ({}): not a job kind Tessera reads, but it has pod "
                            "templates (at {}): its pods will not be scheduled",
                            meta.kind, name.empty() ? "" : " " + name, api_version, *at));
    return true;
  }

  bool ReadMetadata(DocContext& ctx, ObjectMeta& meta, bool namespaced) {
    YAML::Node md = Child(meta.root, "metadata");
    if (IsNullish(md) && meta.group == "config.kueue.x-k8s.io") {
      meta.name = "kueue-configuration";  // a file of Kueue's manager: no metadata
      return true;
    }
    if (IsNullish(md)) {
      ctx.Error(meta.root, "metadata", "required field is missing");
      return false;
    }
    if (!ci::ExpectMap(ctx, md, "metadata")) return false;
    meta.metadata = md;
    auto name = ci::GetString(ctx, md, "name", "metadata.name");
    if (ctx.failed()) return false;
    if (!name || name->empty()) {
      // kubectl create accepts generateName; give a stable, unique name instead of a random one.
      auto gen = ci::GetString(ctx, md, "generateName", "metadata.generateName");
      if (ctx.failed()) return false;
      if (!gen || gen->empty()) {
        ctx.Error(md, "metadata.name", "required field is missing");
        return false;
      }
      char suffix[16];
      std::snprintf(suffix, sizeof(suffix), "%05d", ++generated_names_);
      name = *gen + suffix;
    }
    const bool label = meta.kind == "Namespace" && meta.group.empty();
    if (std::string why = CheckObjectName(*name, label); !why.empty()) {
      ctx.Error(Child(md, "name").IsDefined() ? Child(md, "name") : md, "metadata.name", why);
      return false;
    }
    meta.name = *name;
    if (namespaced) {
      meta.ns = ci::GetString(ctx, md, "namespace", "metadata.namespace").value_or("");
      if (meta.ns.empty()) meta.ns = "default";
      if (std::string why = CheckObjectName(meta.ns, /*label=*/true); !why.empty()) {
        ctx.Error(Child(md, "namespace"), "metadata.namespace", why);
        return false;
      }
    }
    ci::ReadLabels(ctx, Child(md, "labels"), "metadata.labels", meta.labels);
    ci::ReadLabels(ctx, Child(md, "annotations"), "metadata.annotations", meta.annotations);
    return !ctx.failed();
  }

  // Appends what a clean document produced, unless it redefines an object.
  void Commit(DocContext& ctx, const std::string& key, const ObjectMeta& meta, Staged& staged) {
    auto& seen = into_.object_sources;
    if (auto it = seen.find(key); it != seen.end()) {
      ctx.Error(meta.root, "metadata.name",
                meta.kind + " " + (meta.ns.empty() ? "" : meta.ns + "/") + meta.name +
                    " is already defined at " + it->second);
      return;
    }
    for (const std::string& node : staged.node_names) {
      if (auto it = seen.find("node:" + node); it != seen.end()) {
        ctx.Error(meta.root, "metadata.name",
                  "node " + node + " is already defined at " + it->second);
        return;
      }
    }
    if (staged.has_config) {
      if (auto it = seen.find("#SchedulerConfig"); it != seen.end()) {
        ctx.Error(meta.root, "metadata.name",
                  "only one SchedulerConfig may be given; the first is at " + it->second);
        return;
      }
      seen.emplace("#SchedulerConfig", meta.source);
      into_.model.config = staged.model.config;
    }
    // Counts that become allocations (model/limits.h, docs/robustness.md).
    int64_t slots = 0;
    for (const Node& n : staged.model.nodes) slots += n.allocatable[kGpu];
    if (gpu_slots_ + slots > kMaxClusterGpuSlots) {
      ctx.Error(meta.root, "",
                fmt::format("{} {} would bring the cluster to {} GPU device slots "
                            "(nvidia.com/gpu); at most {} are supported",
                            meta.kind, meta.name, gpu_slots_ + slots, kMaxClusterGpuSlots));
      return;
    }
    for (const Workload& w : staged.model.workloads) {
      int64_t pods = 0;
      for (const PodSet& ps : w.pod_sets) pods += ps.count;
      if (pods > kMaxPodsPerWorkload) {
        ctx.Error(meta.root, "spec",
                  fmt::format("{} {} has {} pods; at most {} pods per workload are supported",
                              meta.kind, meta.name, pods, kMaxPodsPerWorkload));
        return;
      }
    }
    gpu_slots_ += slots;
    seen.emplace(key, meta.source);
    for (const std::string& node : staged.node_names) seen.emplace("node:" + node, meta.source);

    Model& m = into_.model;
    Model& s = staged.model;
    auto append = [](auto& to, auto& from) {
      to.insert(to.end(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
    };
    // A NodePool's nodes and pool index move to where they land in the whole model.
    for (Node& n : s.nodes)
      if (n.pool >= 0) n.pool += static_cast<int32_t>(m.node_pools.size());
    for (NodePoolSpec& p : s.node_pools) p.first_node += static_cast<NodeId>(m.nodes.size());
    append(m.nodes, s.nodes);
    append(m.node_pools, s.node_pools);
    append(m.flavors, s.flavors);
    append(m.topologies, s.topologies);
    append(m.cluster_queues, s.cluster_queues);
    append(m.cohorts, s.cohorts);
    append(m.local_queues, s.local_queues);
    append(m.priority_classes, s.priority_classes);
    append(m.workload_priority_classes, s.workload_priority_classes);
    for (Workload& w : s.workloads) m.workloads.push_back(std::move(w));
    ci::MergeDra(m.dra, s.dra);
    for (auto& [ns, labels] : s.namespace_labels) m.namespace_labels[ns] = std::move(labels);
    append(group_pods_, staged.group_pods);
    append(foreign_queues_, staged.foreign_queues);
    append(train_parts_, staged.train_parts);
  }

  LoadResult& into_;
  std::vector<GroupPod> group_pods_;
  std::vector<ForeignQueue> foreign_queues_;
  std::vector<std::shared_ptr<const ci::TrainPart>> train_parts_;
  int generated_names_ = 0;
  int64_t gpu_slots_ = 0;  // nvidia.com/gpu of the nodes committed so far
};

// A file that yields no object Tessera reads (only skipped kinds, or none at all) is most likely
// the wrong file, or a kind Tessera does not read: said, naming the file. Not when the file has
// errors, which say why already.
void WarnIfNothingRead(LoadResult& result, const std::string& path, size_t objects_before,
                       int skipped_before, size_t diagnostics_before) {
  if (result.object_sources.size() != objects_before) return;  // something was committed
  for (size_t i = diagnostics_before; i < result.diagnostics.size(); ++i)
    if (result.diagnostics[i].severity == Diagnostic::Severity::kError) return;
  const int skipped = result.skipped_objects - skipped_before;
  result.diagnostics.push_back(
      {Diagnostic::Severity::kWarning, path, 0, "",
       skipped == 0 ? "no workload and no cluster object in this file (no objects in it)"
                    : fmt::format("no workload and no cluster object in this file ({} object{} "
                                  "skipped)",
                                  skipped, skipped == 1 ? "" : "s")});
}

}  // namespace

void LoadManifestText(std::string_view text, std::string_view filename, LoadResult& into) {
  Loader loader(into);
  loader.LoadText(text, filename);
  loader.Finish();
}

void LoadManifestTexts(const std::vector<std::pair<std::string, std::string>>& texts,
                       LoadResult& into) {
  Loader loader(into);
  for (const auto& [text, filename] : texts) loader.LoadText(text, filename);
  loader.Finish();
}

LoadResult LoadManifestFiles(const std::vector<std::string>& paths) {
  LoadResult result;
  Loader loader(result);
  auto load_file = [&](const std::string& path) {
    absl::StatusOr<std::string> text =
        ReadFileBounded(path, kMaxManifestFileBytes, "a manifest file (256 MiB)");
    if (!text.ok()) {
      std::string message(text.status().message());
      // The reader names the path first; a Diagnostic prints it already.
      if (message.starts_with(path + ": ")) message.erase(0, path.size() + 2);
      result.diagnostics.push_back({Diagnostic::Severity::kError, path, 0, "", message});
      return;
    }
    const size_t objects = result.object_sources.size();
    const int skipped = result.skipped_objects;
    const size_t first_diag = result.diagnostics.size();
    loader.LoadText(*text, path);
    WarnIfNothingRead(result, path, objects, skipped, first_diag);
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        auto ext = entry.path().extension();
        if (entry.is_regular_file(ec) && (ext == ".yaml" || ext == ".yml"))
          files.push_back(entry.path().string());
      }
      if (ec) {
        result.diagnostics.push_back(
            {Diagnostic::Severity::kError, path, 0, "", "cannot list directory: " + ec.message()});
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) load_file(f);
    } else {
      load_file(path);
    }
  }
  loader.Finish();
  return result;
}

}  // namespace tessera
