// The metadata every workload kind shares, as the manifest loader reads it: the queue, the
// priority labels, tessera.dev/arrival, tessera.dev/runtime, tessera.dev/created,
// metadata.creationTimestamp and tessera.dev/admitted. docs/manifests.md lists the fields.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/kinds.h"
#include "model/model.h"

namespace tessera::config_internal {

// The annotation key `key` of `meta`, as a value; "" when absent.
std::string Lookup(const Labels& m, std::string_view key);

// The queue a job names: Kueue's label, then Kueue's annotation, then Tessera's own label, then
// KAI's label, then Volcano's annotation (model/queue_markers.h).
std::string QueueOf(const Labels& labels, const Labels& annotations);
// The same, with a warning at `at` (`path`) when two markers name different queues.
std::string QueueOf(DocContext& ctx, const YAML::Node& at, const std::string& path,
                    const Labels& labels, const Labels& annotations);
// A pod template's markers (`path`: the template's metadata): the queue of `w` when it names
// none itself; a warning when both name one and they differ.
void QueueFromTemplate(DocContext& ctx, const YAML::Node& at, const std::string& path,
                       const Labels& labels, const Labels& annotations, Workload& w);

YAML::Node AnnotationNode(const ObjectMeta& meta, std::string_view key);
std::string AnnotationPath(std::string_view key);

// A workload of `kind` with what its metadata says: name, namespace, queue, priority classes,
// arrival, runtime, created (tessera.dev/created; metadata.creationTimestamp is kept in
// creation_timestamp and mapped by ResolveCreationTimestamps), admitted at start, and the fields
// of time (config/time_fields.h).
Workload NewWorkload(DocContext& ctx, const ObjectMeta& meta, std::string kind);

// RFC 3339 as Kubernetes writes metadata.creationTimestamp ("2024-01-02T03:04:05Z"; a fraction
// of a second and a numeric offset "+01:00" are accepted too): seconds since the Unix epoch.
// std::nullopt when `text` is not such a time.
std::optional<double> ParseRfc3339(std::string_view text);

// After every document: a workload with a creationTimestamp and no tessera.dev/created is
// created at its creationTimestamp minus the earliest creationTimestamp of the input's
// workloads (so the earliest is created at 0).
void ResolveCreationTimestamps(Model& model);

}  // namespace tessera::config_internal
