#include "engine/actions/action.h"

#include "engine/actions/admit.h"
#include "engine/actions/consolidate.h"
#include "engine/actions/scale_up.h"

namespace tessera {

std::unique_ptr<Action> MakeAction(std::string_view name, Engine& e) {
  if (name == "admit") return std::make_unique<AdmitAction>(e);
  if (name == "consolidate") return std::make_unique<ConsolidateAction>(e, /*listed=*/true);
  if (name == "scale-up") return std::make_unique<ScaleUpAction>(e);
  return nullptr;
}

const std::vector<std::string_view>& ActionNames() {
  static const std::vector<std::string_view> names = {"admit", "preempt", "consolidate",
                                                      "scale-up"};
  return names;
}

}  // namespace tessera
