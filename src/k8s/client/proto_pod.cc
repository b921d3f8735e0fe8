// The protobuf decoders of a PodSpec and the parts of it Tessera reads (affinity, topology
// spread, containers' and pod-level resources, tolerations, scheduling gates, the Workload API's
// scheduling group), as proto.cc's decoders of the objects around it.
#include "k8s/client/proto_wire.h"

namespace tessera::k8s::proto::wire {
namespace {

bool Requirement(std::string_view b, json& out, Err& err) {
  return Fields(b, "selector requirement", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["key"] = Str(f);
    if (f.number == 2) out["operator"] = Str(f);
    if (f.number == 3) {
      json& values = out["values"];
      if (!values.is_array()) values = json::array();
      values.push_back(Str(f));
    }
    return true;
  });
}

bool LabelSelector(std::string_view b, json& out, Err& err) {
  return Fields(b, "LabelSelector", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !StringMapEntry(f.bytes, out["matchLabels"], err)) return false;
    if (f.number == 2 && !Append(out, "matchExpressions", f.bytes, err, Requirement)) return false;
    return true;
  });
}

bool PodAffinityTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodAffinityTerm", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) {
      json& sel = out["labelSelector"] = json::object();
      if (!LabelSelector(f.bytes, sel, err)) return false;
    }
    if (f.number == 2) {
      json& ns = out["namespaces"];
      if (!ns.is_array()) ns = json::array();
      ns.push_back(Str(f));
    }
    if (f.number == 3) out["topologyKey"] = Str(f);
    return true;
  });
}

bool WeightedPodAffinityTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "WeightedPodAffinityTerm", err, [&](const Field& f) {
    if (IsVarint(f) && f.number == 1) out["weight"] = static_cast<int32_t>(Int(f));
    if (IsBytes(f) && f.number == 2) {
      json& term = out["podAffinityTerm"] = json::object();
      if (!PodAffinityTerm(f.bytes, term, err)) return false;
    }
    return true;
  });
}

bool PodAntiAffinity(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodAntiAffinity", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !Append(out, "requiredDuringSchedulingIgnoredDuringExecution", f.bytes,
                                 err, PodAffinityTerm))
      return false;
    if (f.number == 2 && !Append(out, "preferredDuringSchedulingIgnoredDuringExecution", f.bytes,
                                 err, WeightedPodAffinityTerm))
      return false;
    return true;
  });
}

bool NodeSelectorTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeSelectorTerm", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !Append(out, "matchExpressions", f.bytes, err, Requirement)) return false;
    if (f.number == 2 && !Append(out, "matchFields", f.bytes, err, Requirement)) return false;
    return true;
  });
}

bool NodeSelector(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeSelector", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 1 &&
        !Append(out, "nodeSelectorTerms", f.bytes, err, NodeSelectorTerm))
      return false;
    return true;
  });
}

bool PreferredSchedulingTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "PreferredSchedulingTerm", err, [&](const Field& f) {
    if (IsVarint(f) && f.number == 1) out["weight"] = static_cast<int32_t>(Int(f));
    if (IsBytes(f) && f.number == 2) {
      json& term = out["preference"] = json::object();
      if (!NodeSelectorTerm(f.bytes, term, err)) return false;
    }
    return true;
  });
}

bool NodeAffinity(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeAffinity", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 1) {
      json& req = out["requiredDuringSchedulingIgnoredDuringExecution"] = json::object();
      if (!NodeSelector(f.bytes, req, err)) return false;
    }
    if (IsBytes(f) && f.number == 2 &&
        !Append(out, "preferredDuringSchedulingIgnoredDuringExecution", f.bytes, err,
                PreferredSchedulingTerm))
      return false;
    return true;
  });
}

bool TopologySpreadConstraint(std::string_view b, json& out, Err& err) {
  return Fields(b, "TopologySpreadConstraint", err, [&](const Field& f) {
    if (IsVarint(f)) {
      if (f.number == 1) out["maxSkew"] = static_cast<int32_t>(Int(f));
      if (f.number == 5) out["minDomains"] = static_cast<int32_t>(Int(f));
      return true;
    }
    if (!IsBytes(f)) return true;
    if (f.number == 2) out["topologyKey"] = Str(f);
    if (f.number == 3) out["whenUnsatisfiable"] = Str(f);
    if (f.number == 4) {
      json& sel = out["labelSelector"] = json::object();
      if (!LabelSelector(f.bytes, sel, err)) return false;
    }
    if (f.number == 6) out["nodeAffinityPolicy"] = Str(f);
    if (f.number == 7) out["nodeTaintsPolicy"] = Str(f);
    if (f.number == 8) {
      json& keys = out["matchLabelKeys"];
      if (!keys.is_array()) keys = json::array();
      keys.push_back(Str(f));
    }
    return true;
  });
}

bool Affinity(std::string_view b, json& out, Err& err) {
  return Fields(b, "Affinity", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) {
      json& na = out["nodeAffinity"] = json::object();
      if (!NodeAffinity(f.bytes, na, err)) return false;
    }
    if (f.number == 3) {
      json& anti = out["podAntiAffinity"] = json::object();
      if (!PodAntiAffinity(f.bytes, anti, err)) return false;
    }
    return true;
  });
}

bool Resources(std::string_view b, json& out, Err& err) {
  return Fields(b, "ResourceRequirements", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !QuantityMapEntry(f.bytes, out["limits"], err)) return false;
    if (f.number == 2 && !QuantityMapEntry(f.bytes, out["requests"], err)) return false;
    return true;
  });
}

bool Container(std::string_view b, json& out, Err& err) {
  return Fields(b, "Container", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["name"] = Str(f);
    if (f.number == 8) {
      json& res = out["resources"] = json::object();
      if (!Resources(f.bytes, res, err)) return false;
    }
    if (f.number == 24) out["restartPolicy"] = Str(f);  // sidecars (Kubernetes 1.28+)
    return true;
  });
}

bool Toleration(std::string_view b, json& out, Err& err) {
  return Fields(b, "Toleration", err, [&](const Field& f) {
    if (IsBytes(f)) {
      if (f.number == 1) out["key"] = Str(f);
      if (f.number == 2) out["operator"] = Str(f);
      if (f.number == 3) out["value"] = Str(f);
      if (f.number == 4) out["effect"] = Str(f);
    } else if (IsVarint(f) && f.number == 5) {
      out["tolerationSeconds"] = Int(f);
    }
    return true;
  });
}

// PodSchedulingGroup {podGroupName = 1}: the Workload API's PodGroup of the pod.
bool SchedulingGroup(std::string_view b, json& out, Err& err) {
  out = json::object();
  return Fields(b, "PodSchedulingGroup", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 1) out["podGroupName"] = Str(f);
    return true;
  });
}

// A PodResourceClaim (spec.resourceClaims[], DRA): its name and the claim or template it names.
bool ResourceClaim(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodResourceClaim", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["name"] = Str(f);
    if (f.number == 3) out["resourceClaimName"] = Str(f);
    if (f.number == 4) out["resourceClaimTemplateName"] = Str(f);
    return true;
  });
}

bool SchedulingGate(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodSchedulingGate", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 1) out["name"] = Str(f);
    return true;
  });
}

}  // namespace

bool PodSpec(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodSpec", err, [&](const Field& f) {
    if (IsVarint(f)) {
      if (f.number == 4) out["terminationGracePeriodSeconds"] = Int(f);
      if (f.number == 5) out["activeDeadlineSeconds"] = Int(f);
      if (f.number == 25) out["priority"] = static_cast<int32_t>(Int(f));
      return true;
    }
    if (!IsBytes(f)) return true;
    switch (f.number) {
      case 2:
        if (!Append(out, "containers", f.bytes, err, Container)) return false;
        break;
      case 20:
        if (!Append(out, "initContainers", f.bytes, err, Container)) return false;
        break;
      case 7:
        if (!StringMapEntry(f.bytes, out["nodeSelector"], err)) return false;
        break;
      case 10:
        out["nodeName"] = Str(f);
        break;
      case 18: {
        json& aff = out["affinity"] = json::object();
        if (!Affinity(f.bytes, aff, err)) return false;
        break;
      }
      case 19:
        out["schedulerName"] = Str(f);
        break;
      case 22:
        if (!Append(out, "tolerations", f.bytes, err, Toleration)) return false;
        break;
      case 24:
        out["priorityClassName"] = Str(f);
        break;
      case 33:
        if (!Append(out, "topologySpreadConstraints", f.bytes, err, TopologySpreadConstraint))
          return false;
        break;
      case 32:
        if (!QuantityMapEntry(f.bytes, out["overhead"], err)) return false;
        break;
      case 43:  // schedulingGroup (Kubernetes 1.36+; 42, the 1.35 workloadRef, is retired)
        if (!SchedulingGroup(f.bytes, out["schedulingGroup"], err)) return false;
        break;
      case 38:
        if (!Append(out, "schedulingGates", f.bytes, err, SchedulingGate)) return false;
        break;
      case 39:
        if (!Append(out, "resourceClaims", f.bytes, err, ResourceClaim)) return false;
        break;
      case 40: {  // pod-level resources (Kubernetes 1.34+)
        json& res = out["resources"] = json::object();
        if (!Resources(f.bytes, res, err)) return false;
        break;
      }
      default:
        break;
    }
    return true;
  });
}

}  // namespace tessera::k8s::proto::wire
