#include "config/pod_template_probe.h"

#include <exception>
#include <utility>
#include <vector>

#include "config/yaml_util.h"

namespace tessera::config_internal {
namespace {

bool HasContainerList(const YAML::Node& spec) {
  if (!spec.IsDefined() || !spec.IsMap()) return false;
  YAML::Node c = Child(spec, "containers");
  return c.IsDefined() && c.IsSequence();
}

// The path is kept as a stack of keys (pointers into the document) and indexes and written out
// only for the template found: a long key seen many times through aliases costs nothing.
class Probe {
 public:
  // Depth-first, in document order; `depth` counts maps and lists from the object's root.
  bool Search(const YAML::Node& node, int depth) {
    if (depth > kPodTemplateProbeDepth || ++visits_ > kPodTemplateProbeVisits) return false;
    if (node.IsSequence()) {
      size_t i = 0;
      for (auto it = node.begin(); it != node.end(); ++it, ++i) {
        const YAML::Node item = *it;
        stack_.push_back({nullptr, i});
        if (Search(item, depth + 1)) return true;
        stack_.pop_back();
        if (visits_ > kPodTemplateProbeVisits) return false;
      }
      return false;
    }
    if (!node.IsMap()) return false;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const auto& kv = *it;  // bind the pair (see Child in yaml_util.cc)
      if (!kv.first.IsDefined() || !kv.first.IsScalar()) continue;
      const std::string& key = kv.first.Scalar();
      if (depth == 0 && key == "metadata") continue;
      stack_.push_back({&key, 0});
      if (key == "template" && HasContainerList(Child(kv.second, "spec"))) return true;
      if (key == "spec" && HasContainerList(kv.second)) return true;
      if (Search(kv.second, depth + 1)) return true;
      stack_.pop_back();
      if (visits_ > kPodTemplateProbeVisits) return false;
    }
    return false;
  }

  // The path of what Search found.
  std::string Path() const {
    std::string path;
    for (const auto& [key, index] : stack_)
      path = key != nullptr ? JoinPath(path, *key) : IndexPath(path, index);
    return path;
  }

 private:
  std::vector<std::pair<const std::string*, size_t>> stack_;
  int visits_ = 0;
};

}  // namespace

std::optional<std::string> FindPodTemplate(const YAML::Node& object) {
  try {
    if (!object.IsDefined()) return std::nullopt;
    Probe probe;
    if (probe.Search(object, 0)) return probe.Path();
    return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;  // a probe for a message: never a reason to fail the load
  }
}

std::optional<std::string> SkippedObjectPodTemplate(std::string_view group, std::string_view kind,
                                                    const YAML::Node& object) {
  if (group.empty() && kind == "PodTemplate") return std::nullopt;
  if (group == "apps" && kind == "ControllerRevision") return std::nullopt;
  return FindPodTemplate(object);
}

std::string LenientObjectName(const YAML::Node& object) {
  try {
    YAML::Node name = Child(Child(object, "metadata"), "name");
    if (name.IsDefined() && name.IsScalar()) return name.Scalar();
  } catch (const std::exception&) {
  }
  return "";
}

}  // namespace tessera::config_internal
