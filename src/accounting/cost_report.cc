#include "accounting/cost_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "fmt/format.h"
#include "model/bounded_json.h"
#include "nlohmann/json.hpp"

namespace tessera::accounting {
namespace {

const std::string kNone = "(none)";

std::string GroupOf(const RunRecord& r, const ReportQuery& q) {
  switch (q.by) {
    case GroupBy::kNamespace:
      return r.ns;
    case GroupBy::kClusterQueue:
      return r.cluster_queue.empty() ? kNone : r.cluster_queue;
    case GroupBy::kLocalQueue:
      return r.local_queue.empty() ? kNone : r.ns + "/" + r.local_queue;
    case GroupBy::kLabel: {
      auto labels = ParseJsonOrDiscarded(r.labels);
      if (!labels.is_object()) return kNone;
      auto it = labels.find(q.label);
      return it != labels.end() && it->is_string() ? it->get<std::string>() : kNone;
    }
  }
  return kNone;
}

// Costliest first: dollars (unpriced last), GPU-hours, then the name.
template <typename T>
bool Costlier(const T& a, const T& b, const std::string& an, const std::string& bn) {
  const double ad = a.dollars.value_or(-1), bd = b.dollars.value_or(-1);
  if (ad != bd) return ad > bd;
  if (a.gpu_hours != b.gpu_hours) return a.gpu_hours > b.gpu_hours;
  return an < bn;
}

void AddDollars(std::optional<double>& sum, const std::optional<double>& v) {
  if (v) sum = sum.value_or(0) + *v;
}

// One group being summed.
struct Acc {
  GroupCost row;
  std::map<std::string, JobCost> jobs;
  double util_weighted = 0, util_hours = 0;

  void Add(const RunRecord& r) {
    row.gpu_hours += r.gpu_hours;
    AddDollars(row.dollars, r.allocated_dollars);
    AddDollars(row.effective_dollars, r.effective_dollars);
    ++row.runs;
    JobCost& j = jobs[r.ns + "/" + r.name];
    j.gpu_hours += r.gpu_hours;
    AddDollars(j.dollars, r.allocated_dollars);
    ++j.runs;
    if (r.utilization) {
      util_weighted += *r.utilization * r.gpu_hours;
      util_hours += r.gpu_hours;
    }
  }
  GroupCost Finish() {
    row.jobs = static_cast<int64_t>(jobs.size());
    std::vector<JobCost> all;
    all.reserve(jobs.size());
    for (auto& [name, j] : jobs) {
      j.job = name;
      all.push_back(j);
    }
    std::sort(all.begin(), all.end(),
              [](const JobCost& a, const JobCost& b) { return Costlier(a, b, a.job, b.job); });
    if (all.size() > kTopJobs) all.resize(kTopJobs);
    row.top_jobs = std::move(all);
    if (util_hours > 0) row.utilization = util_weighted / util_hours;
    return row;
  }
};

bool ReadInt(std::string_view s, size_t pos, size_t len, int& out) {
  if (pos + len > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + len; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

absl::Status ParseGroupBy(std::string_view text, ReportQuery& query) {
  if (text == "namespace") {
    query.by = GroupBy::kNamespace;
  } else if (text == "cluster-queue") {
    query.by = GroupBy::kClusterQueue;
  } else if (text == "local-queue") {
    query.by = GroupBy::kLocalQueue;
  } else if (text.starts_with("label:") && text.size() > 6) {
    query.by = GroupBy::kLabel;
    query.label = std::string(text.substr(6));
  } else {
    return absl::InvalidArgumentError(fmt::format(
        "--by \"{}\": expected namespace, cluster-queue, local-queue or label:KEY", text));
  }
  return absl::OkStatus();
}

std::string GroupByName(const ReportQuery& query) {
  switch (query.by) {
    case GroupBy::kNamespace:
      return "namespace";
    case GroupBy::kClusterQueue:
      return "cluster-queue";
    case GroupBy::kLocalQueue:
      return "local-queue";
    case GroupBy::kLabel:
      return "label:" + query.label;
  }
  return "?";
}

absl::StatusOr<double> ParseDate(std::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(fmt::format(
        "\"{}\" is not a date: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)", text));
  };
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!ReadInt(text, 0, 4, y) || text.size() < 10 || text[4] != '-' || !ReadInt(text, 5, 2, mo) ||
      text[7] != '-' || !ReadInt(text, 8, 2, d))
    return bad();
  size_t pos = 10;
  if (text.size() > pos) {
    if ((text[pos] != 'T' && text[pos] != ' ') || !ReadInt(text, 11, 2, h) || text.size() < 19 ||
        text[13] != ':' || !ReadInt(text, 14, 2, mi) || text[16] != ':' || !ReadInt(text, 17, 2, s))
      return bad();
    pos = 19;
    if (text.size() > pos && !(text.size() == pos + 1 && text[pos] == 'Z')) return bad();
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return bad();
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  const time_t t = timegm(&tm);
  // timegm normalizes 2026-02-31 into March; a date that moved was not a date.
  if (tm.tm_mday != d || tm.tm_mon != mo - 1) return bad();
  return static_cast<double>(t);
}

std::string FormatDate(double seconds) {
  if (!std::isfinite(seconds)) return seconds > 0 ? "end" : "start";
  const time_t t = static_cast<time_t>(std::floor(seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

CostSummary BuildCostReport(const std::vector<RunRecord>& records, const ReportQuery& query) {
  std::map<std::string, Acc> groups;
  Acc total;
  for (const RunRecord& r : records) {
    if (!(r.end >= query.from && r.end < query.to)) continue;
    groups[GroupOf(r, query)].Add(r);
    total.Add(r);
  }
  CostSummary out;
  out.query = query;
  for (auto& [name, acc] : groups) {
    acc.row.group = name;
    out.groups.push_back(acc.Finish());
  }
  std::sort(out.groups.begin(), out.groups.end(), [](const GroupCost& a, const GroupCost& b) {
    return Costlier(a, b, a.group, b.group);
  });
  total.row.group = "total";
  out.total = total.Finish();
  return out;
}

}  // namespace tessera::accounting
