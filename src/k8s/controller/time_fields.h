// The fields of time in Kubernetes mode (docs/kubernetes.md, "Time"): what a live Pod, batch Job,
// PodGroup or Volcano PodGroup says about how long its workload runs, how long it may wait, and
// how it may be preempted, read as the manifest loader reads them (src/config/time_fields.cc,
// durations by tessera::ParseDuration), and the rules that make one gang's values of its group
// object and its pods.
//
// A value that cannot be used is left out and said (a problem, for a log line and a Warning
// Event); it never drops the object.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/workload.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

inline constexpr const char* kRuntimeEstimateAnnotation = "tessera.dev/runtime-estimate";
inline constexpr const char* kMaxWaitAnnotation = "tessera.dev/max-wait";
inline constexpr const char* kMinRuntimeAnnotation = "tessera.dev/min-runtime";
inline constexpr const char* kCheckpointIntervalAnnotation = "tessera.dev/checkpoint-interval";
// Volcano's sla plugin: the longest a job may wait (a Go duration).
inline constexpr const char* kSlaWaitingTimeAnnotation = "sla-waiting-time";
// Kueue's hard limit on a run, integer seconds; a label.
inline constexpr const char* kMaxExecTimeLabel = "kueue.x-k8s.io/max-exec-time-seconds";

// One object's values, in seconds (Workload's fields of the same names); absent stays absent.
struct TimeFields {
  std::optional<double> runtime_estimate;     // > 0
  std::optional<double> active_deadline;      // > 0: activeDeadlineSeconds, max-exec-time label
  std::optional<double> max_wait;             // >= 0: tessera.dev/max-wait, else sla-waiting-time
  std::optional<double> min_runtime;          // >= 0
  std::optional<double> checkpoint_interval;  // > 0

  bool empty() const {
    return !runtime_estimate && !active_deadline && !max_wait && !min_runtime &&
           !checkpoint_interval;
  }
  bool operator==(const TimeFields&) const = default;
};

// Reads the time annotations and Kueue's label of an object's metadata, and `active_deadline`
// (the object's spec.activeDeadlineSeconds; null when it has none). Each value that cannot be
// used is left out and appended to `problems` as "FIELD: why", the field named as in the object
// ("metadata.annotations.tessera.dev/max-wait: ...", "spec.activeDeadlineSeconds: ...").
// A deadline longer than kMaxDurationSeconds (10 years) is no deadline, without a problem: the
// API server accepts such values, and they are never reached.
TimeFields ReadTimeFields(const std::map<std::string, std::string>& labels,
                          const std::map<std::string, std::string>& annotations,
                          const nlohmann::json& active_deadline,
                          std::vector<std::string>* problems);

// The gang's values are its group object's (a PodGroup's, a Volcano PodGroup's, a Job's), else
// its first pod's that has one, field by field; the active deadline is the smallest of all.
// Call with the group object's values first (into an empty `gang`), then each pod's in order.
void MergeTime(const TimeFields& from, TimeFields& gang);

// Sets the workload's fields of time from `t`.
void ApplyTime(const TimeFields& t, Workload& w);

// The Event reason for a problem of ReadTimeFields: InvalidAnnotation, InvalidLabel or
// InvalidField, by where the field is.
const char* TimeProblemReason(const std::string& problem);

// "estimate=60 deadline=- maxWait=- minRuntime=- checkpoint=-": for Describe and logs.
std::string DescribeTime(const TimeFields& t);

}  // namespace tessera::k8s
