#include "model/labels.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(LabelsTest, SelectorOperators) {
  Labels l{{"zone", "a"}, {"gpus", "8"}};
  EXPECT_TRUE(Matches(SelectorRequirement{"zone", SelectorOp::kIn, {"a", "b"}}, l));
  EXPECT_FALSE(Matches(SelectorRequirement{"zone", SelectorOp::kNotIn, {"a"}}, l));
  EXPECT_TRUE(Matches(SelectorRequirement{"rack", SelectorOp::kNotIn, {"a"}}, l));
  EXPECT_TRUE(Matches(SelectorRequirement{"zone", SelectorOp::kExists, {}}, l));
  EXPECT_TRUE(Matches(SelectorRequirement{"rack", SelectorOp::kDoesNotExist, {}}, l));
  EXPECT_TRUE(Matches(SelectorRequirement{"gpus", SelectorOp::kGt, {"4"}}, l));
  EXPECT_FALSE(Matches(SelectorRequirement{"gpus", SelectorOp::kLt, {"4"}}, l));
  EXPECT_FALSE(Matches(SelectorRequirement{"zone", SelectorOp::kGt, {"4"}}, l));
}

TEST(LabelsTest, AbsentSelectorMatchesNothingEmptyMatchesAll) {
  LabelSelector absent;
  LabelSelector empty;
  empty.present = true;
  EXPECT_FALSE(Matches(absent, {{"a", "b"}}));
  EXPECT_TRUE(Matches(empty, {{"a", "b"}}));
}

TEST(LabelsTest, AffinityTermsAreOredRequirementsAnded) {
  NodeAffinity aff;
  aff.required_terms.push_back(
      {{{"zone", SelectorOp::kIn, {"a"}}, {"gpu", SelectorOp::kExists, {}}}});
  aff.required_terms.push_back({{{"zone", SelectorOp::kIn, {"c"}}}});
  EXPECT_TRUE(Matches(aff, {{"zone", "a"}, {"gpu", "x"}}));
  EXPECT_FALSE(Matches(aff, {{"zone", "a"}}));
  EXPECT_TRUE(Matches(aff, {{"zone", "c"}}));
}

TEST(LabelsTest, TolerationRules) {
  Taint gpu{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule};
  Taint soft{"x", "", TaintEffect::kPreferNoSchedule};
  EXPECT_FALSE(ToleratesAll({gpu}, {}));
  EXPECT_TRUE(ToleratesAll({soft}, {}));  // PreferNoSchedule never blocks
  EXPECT_TRUE(ToleratesAll({gpu}, {{"nvidia.com/gpu", TolerationOp::kExists, "", {}}}));
  EXPECT_TRUE(ToleratesAll({gpu}, {{"", TolerationOp::kExists, "", {}}}));
  EXPECT_FALSE(ToleratesAll({gpu}, {{"nvidia.com/gpu", TolerationOp::kEqual, "absent", {}}}));
  EXPECT_FALSE(ToleratesAll(
      {gpu}, {{"nvidia.com/gpu", TolerationOp::kExists, "", TaintEffect::kNoExecute}}));
}

}  // namespace
}  // namespace tessera
