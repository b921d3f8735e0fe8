// The metadata every workload kind shares (config/workload_meta.h).
#include "config/workload_meta.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "config/preemption_fields.h"
#include "config/time_fields.h"
#include "model/queue_markers.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kWorkloadPriorityLabel = "kueue.x-k8s.io/priority-class";
constexpr std::string_view kArrival = "tessera.dev/arrival";
constexpr std::string_view kCreated = "tessera.dev/created";
constexpr std::string_view kAdmitted = "tessera.dev/admitted";
constexpr std::string_view kRuntime = "tessera.dev/runtime";
constexpr std::string_view kAdmittedFlavor = "tessera.dev/admitted-flavor";

// Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (Howard Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool LeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// metadata.creationTimestamp, kept as Unix seconds for ResolveCreationTimestamps.
void ReadCreationTimestamp(DocContext& ctx, const ObjectMeta& meta, Workload& w) {
  YAML::Node at = Child(meta.metadata, "creationTimestamp");
  if (IsNullish(at)) return;
  auto text = GetString(ctx, meta.metadata, "creationTimestamp", "metadata.creationTimestamp");
  if (!text) return;
  if (auto t = ParseRfc3339(*text)) {
    w.creation_timestamp = *t;
  } else {
    ctx.Error(at, "metadata.creationTimestamp",
              "expected an RFC 3339 time such as \"2024-01-02T03:04:05Z\", got \"" +
                  text->substr(0, 100) + "\"");
  }
}

// tessera.dev/admitted-flavor: "FLAVOR" (every pod set) or "SET=FLAVOR,SET=FLAVOR" (each pod set
// named once; a pod set not named is not restored).
void ReadAdmittedFlavor(DocContext& ctx, const ObjectMeta& meta, Workload& w) {
  auto it = meta.annotations.find(std::string(kAdmittedFlavor));
  if (it == meta.annotations.end()) return;
  const std::string& text = it->second;
  auto fail = [&](const std::string& why) {
    ctx.Error(AnnotationNode(meta, kAdmittedFlavor), AnnotationPath(kAdmittedFlavor),
              why +
                  "; expected a ResourceFlavor name, or POD_SET=FLAVOR pairs separated by "
                  "commas, got \"" +
                  text.substr(0, 200) + "\"");
  };
  std::vector<std::pair<std::string, std::string>> out;
  if (text.find('=') == std::string::npos) {
    if (text.empty() || text.find(',') != std::string::npos) return fail("not a flavor name");
    out.emplace_back("", text);
  } else {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = std::min(text.find(',', start), text.size());
      std::string item = text.substr(start, end - start);
      size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
        return fail(std::string(1, '"') + item.substr(0, 100) + "\" is not POD_SET=FLAVOR");
      std::string set = item.substr(0, eq);
      for (const auto& [seen, f] : out)
        if (seen == set) return fail("pod set " + set + " is named twice");
      out.emplace_back(set, item.substr(eq + 1));
      start = end + 1;
    }
  }
  if (auto a = meta.annotations.find(std::string(kAdmitted));
      a != meta.annotations.end() && a->second == "false")
    return fail("tessera.dev/admitted is \"false\"");
  w.admitted_flavors = std::move(out);
  w.admitted_at_start = true;
}

}  // namespace

std::string Lookup(const Labels& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? std::string() : it->second;
}

std::string QueueOf(const Labels& labels, const Labels& annotations) {
  return QueueFromMarkers(FindQueueMarkers(labels, annotations), nullptr);
}

std::string QueueOf(DocContext& ctx, const YAML::Node& at, const std::string& path,
                    const Labels& labels, const Labels& annotations) {
  std::string conflict;
  std::string q = QueueFromMarkers(FindQueueMarkers(labels, annotations), &conflict);
  if (!conflict.empty()) ctx.Warning(at, path, conflict);
  return q;
}

void QueueFromTemplate(DocContext& ctx, const YAML::Node& at, const std::string& path,
                       const Labels& labels, const Labels& annotations, Workload& w) {
  std::string q = QueueOf(ctx, at, path, labels, annotations);
  if (q.empty()) return;
  if (w.queue_name.empty()) {
    w.queue_name = q;
  } else if (q != w.queue_name) {
    ctx.Warning(at, path,
                "the pod template names queue " + q + " and the " + w.kind + " names queue " +
                    w.queue_name + "; Tessera uses " + w.queue_name);
  }
}

YAML::Node AnnotationNode(const ObjectMeta& meta, std::string_view key) {
  return Child(Child(meta.metadata, "annotations"), key);
}

std::string AnnotationPath(std::string_view key) { return JoinPath("metadata.annotations", key); }

Workload NewWorkload(DocContext& ctx, const ObjectMeta& meta, std::string kind) {
  Workload w;
  w.ns = meta.ns;
  w.name = meta.name;
  w.kind = std::move(kind);
  w.source = meta.source;
  w.labels = meta.labels;
  w.queue_name = QueueOf(ctx, meta.metadata, "metadata", meta.labels, meta.annotations);
  w.workload_priority_class = Lookup(meta.labels, kWorkloadPriorityLabel);
  for (std::string_view key : {kArrival, kRuntime, kCreated}) {
    auto it = meta.annotations.find(std::string(key));
    if (it == meta.annotations.end()) continue;
    auto v = ParseNonNegativeNumber(it->second);
    if (!v) {
      ctx.Error(AnnotationNode(meta, key), AnnotationPath(key),
                "expected a non-negative number of seconds, got \"" + it->second + "\"");
      continue;
    }
    if (key == kArrival) {
      w.arrival = *v;
    } else if (key == kCreated) {
      w.created = *v;
    } else {
      w.runtime = *v;
    }
  }
  ReadCreationTimestamp(ctx, meta, w);
  if (auto it = meta.annotations.find(std::string(kAdmitted)); it != meta.annotations.end()) {
    if (it->second == "true" || it->second == "false") {
      w.admitted_at_start = it->second == "true";
    } else {
      ctx.Error(AnnotationNode(meta, kAdmitted), AnnotationPath(kAdmitted),
                "expected \"true\" or \"false\", got \"" + it->second + "\"");
    }
  }
  ReadAdmittedFlavor(ctx, meta, w);
  ReadWorkloadTimeMetadata(ctx, meta, w);
  w.non_preemptible = ReadPreemptibility(ctx, meta);
  return w;
}

std::optional<double> ParseRfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM); 't' and 'z' as RFC 3339 allows.
  auto digits = [&](size_t pos, size_t n) -> std::optional<int64_t> {
    if (pos + n > s.size()) return std::nullopt;
    int64_t v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto at = [&](size_t pos, std::string_view any) {
    return pos < s.size() && any.find(s[pos]) != std::string_view::npos;
  };
  auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2),
       sec = digits(17, 2);
  if (!y || !mo || !d || !h || !mi || !sec || !at(4, "-") || !at(7, "-") || !at(10, "Tt") ||
      !at(13, ":") || !at(16, ":"))
    return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (*mo < 1 || *mo > 12 || *d < 1 || *h > 23 || *mi > 59 || *sec > 60) return std::nullopt;
  if (*d > kDays[*mo - 1] + (*mo == 2 && LeapYear(*y) ? 1 : 0)) return std::nullopt;
  size_t pos = 19;
  double frac = 0;
  if (at(pos, ".")) {
    double scale = 0.1;
    size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  int64_t offset = 0;
  if (at(pos, "Zz")) {
    ++pos;
  } else if (at(pos, "+-")) {
    auto oh = digits(pos + 1, 2), om = digits(pos + 4, 2);
    if (!oh || !om || !at(pos + 3, ":") || *oh > 23 || *om > 59) return std::nullopt;
    offset = (s[pos] == '-' ? -1 : 1) * (*oh * 3600 + *om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const int64_t secs = DaysFromCivil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *sec - offset;
  return static_cast<double>(secs) + frac;
}

void ResolveCreationTimestamps(Model& model) {
  double earliest = std::numeric_limits<double>::infinity();
  for (const Workload& w : model.workloads)
    if (w.creation_timestamp) earliest = std::min(earliest, *w.creation_timestamp);
  if (!std::isfinite(earliest)) return;
  for (Workload& w : model.workloads)
    if (w.creation_timestamp && !w.created) w.created = *w.creation_timestamp - earliest;
}

}  // namespace tessera::config_internal
