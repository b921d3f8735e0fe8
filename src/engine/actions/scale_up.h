// The `scale-up` action: workloads admitted with fewer than all their pods (minCount reached,
// more pods wanted) place more as quota and nodes allow, each batch a kScaleUp decision.
//
// Thread-safety: none; part of one engine.
#pragma once

#include "engine/actions/action.h"
#include "engine/engine_state.h"

namespace tessera {

class ScaleUpAction : public Action {
 public:
  explicit ScaleUpAction(Engine& e);
  std::string_view name() const override { return "scale-up"; }
  void Execute(double now, std::vector<Decision>& out) override;

 private:
  Engine& e_;
  EngineState& s_;
};

}  // namespace tessera
