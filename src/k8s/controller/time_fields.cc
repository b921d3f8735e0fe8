#include "k8s/controller/time_fields.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "config/duration.h"
#include "fmt/format.h"
#include "model/json_text.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

enum class Bound { kNonNegative, kPositive };

// Annotation `key` as a duration; absent: nullopt without a problem.
std::optional<double> AnnotationDuration(const std::map<std::string, std::string>& annotations,
                                         const char* key, Bound bound,
                                         std::vector<std::string>* problems) {
  auto it = annotations.find(key);
  if (it == annotations.end()) return std::nullopt;
  const std::string field = fmt::format("metadata.annotations.{}", key);
  absl::StatusOr<double> d = ParseDuration(it->second);
  if (!d.ok()) {
    if (problems)
      problems->push_back(fmt::format("{}: {}", field, std::string(d.status().message())));
    return std::nullopt;
  }
  if (bound == Bound::kPositive && *d <= 0) {
    if (problems)
      problems->push_back(fmt::format("{}: must be greater than 0, got \"{}\"", field, it->second));
    return std::nullopt;
  }
  return *d;
}

// Kubernetes' integer seconds written as text (Kueue's label): digits, > 0.
std::optional<double> SecondsText(std::string_view text, const std::string& field,
                                  std::vector<std::string>* problems) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  const bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  if (!all_digits || digits == "0") {
    if (problems)
      problems->push_back(fmt::format(
          "{}: expected a positive integer number of seconds, got \"{}\"", field, text));
    return std::nullopt;
  }
  // kMaxDurationSeconds has 9 digits: a longer number is beyond it (and never overflows here).
  if (digits.size() > 9) return std::nullopt;
  const double seconds = std::stod(std::string(digits));
  if (seconds > kMaxDurationSeconds) return std::nullopt;
  return seconds;
}

// spec.activeDeadlineSeconds: a JSON integer > 0.
std::optional<double> DeadlineValue(const json& v, std::vector<std::string>* problems) {
  if (v.is_null()) return std::nullopt;
  const char* field = "spec.activeDeadlineSeconds";
  if (v.is_number_unsigned()) {
    const uint64_t s = v.get<uint64_t>();
    if (s > 0) {
      if (static_cast<double>(s) > kMaxDurationSeconds) return std::nullopt;
      return static_cast<double>(s);
    }
  } else if (v.is_number_integer() && v.get<int64_t>() > 0) {
    const auto s = static_cast<double>(v.get<int64_t>());
    return s > kMaxDurationSeconds ? std::nullopt : std::optional<double>(s);
  }
  if (problems)
    problems->push_back(
        fmt::format("{}: expected a positive integer number of seconds, got {}", field,
                    DumpJson(v)));
  return std::nullopt;
}

void SetSmaller(std::optional<double>& into, std::optional<double> value) {
  if (value) into = into ? std::min(*into, *value) : *value;
}

}  // namespace

TimeFields ReadTimeFields(const std::map<std::string, std::string>& labels,
                          const std::map<std::string, std::string>& annotations,
                          const json& active_deadline, std::vector<std::string>* problems) {
  TimeFields t;
  t.runtime_estimate =
      AnnotationDuration(annotations, kRuntimeEstimateAnnotation, Bound::kPositive, problems);
  t.max_wait = AnnotationDuration(annotations, kMaxWaitAnnotation, Bound::kNonNegative, problems);
  // Volcano's limit counts where Tessera's is not given; a bad one is said even then.
  std::optional<double> sla =
      AnnotationDuration(annotations, kSlaWaitingTimeAnnotation, Bound::kNonNegative, problems);
  if (!annotations.contains(kMaxWaitAnnotation)) t.max_wait = sla;
  t.min_runtime =
      AnnotationDuration(annotations, kMinRuntimeAnnotation, Bound::kNonNegative, problems);
  t.checkpoint_interval =
      AnnotationDuration(annotations, kCheckpointIntervalAnnotation, Bound::kPositive, problems);
  SetSmaller(t.active_deadline, DeadlineValue(active_deadline, problems));
  if (auto it = labels.find(kMaxExecTimeLabel); it != labels.end())
    SetSmaller(
        t.active_deadline,
        SecondsText(it->second, fmt::format("metadata.labels.{}", kMaxExecTimeLabel), problems));
  return t;
}

void MergeTime(const TimeFields& from, TimeFields& gang) {
  for (auto field : {&TimeFields::runtime_estimate, &TimeFields::max_wait, &TimeFields::min_runtime,
                     &TimeFields::checkpoint_interval})
    if (!(gang.*field)) gang.*field = from.*field;
  SetSmaller(gang.active_deadline, from.active_deadline);
}

void ApplyTime(const TimeFields& t, Workload& w) {
  w.runtime_estimate = t.runtime_estimate;
  w.active_deadline = t.active_deadline;
  w.max_wait = t.max_wait;
  w.min_runtime = t.min_runtime;
  w.checkpoint_interval = t.checkpoint_interval;
}

const char* TimeProblemReason(const std::string& problem) {
  if (problem.rfind("metadata.annotations.", 0) == 0) return "InvalidAnnotation";
  if (problem.rfind("metadata.labels.", 0) == 0) return "InvalidLabel";
  return "InvalidField";
}

std::string DescribeTime(const TimeFields& t) {
  auto v = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : "-"; };
  return fmt::format("estimate={} deadline={} maxWait={} minRuntime={} checkpoint={}",
                     v(t.runtime_estimate), v(t.active_deadline), v(t.max_wait), v(t.min_runtime),
                     v(t.checkpoint_interval));
}

}  // namespace tessera::k8s
