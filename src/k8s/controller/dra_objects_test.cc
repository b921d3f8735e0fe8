#include "k8s/controller/dra_objects.h"

#include "gtest/gtest.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

// As a list of a built-in kind comes from the API server: items without apiVersion and kind.
json Slice() {
  return json::parse(R"({"metadata": {"name": "n0-gpus", "resourceVersion": "7"},
    "spec": {"driver": "gpu.example.com", "nodeName": "n0",
             "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})");
}

json Claim() {
  return json::parse(R"({"metadata": {"name": "c", "namespace": "team", "uid": "u-1",
                                      "resourceVersion": "3"},
    "spec": {"devices": {"requests": [{"name": "gpu",
             "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    "status": {"allocation": {"devices": {"results": [{"request": "gpu",
                 "driver": "gpu.example.com", "pool": "n0", "device": "gpu-1"}]},
               "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}},
               "reservedFor": [{"resource": "pods", "name": "p", "uid": "pu"}]}})");
}

WatchEvent Replace(const std::string& resource, std::vector<json> objects) {
  WatchEvent ev;
  ev.type = WatchEvent::Type::kReplace;
  ev.resource = resource;
  ev.objects = std::move(objects);
  return ev;
}

TEST(DraObjects, ListsOfBuiltInKindsLoadWithTheirClaimsAllocations) {
  DraObjects d;
  EXPECT_TRUE(d.Apply(Replace("resourceslices", {Slice()})));
  EXPECT_TRUE(d.Apply(Replace("resourceclaims", {Claim()})));
  EXPECT_TRUE(
      d.Apply(Replace("deviceclasses", {json::parse(R"({"metadata": {"name": "gpu.example.com"},
        "spec": {"config": [{"opaque": {"driver": "gpu.example.com",
                                         "parameters": {"sharing": "none"}}}]}})")})));
  dra::DraModel m = d.Load();
  ASSERT_EQ(m.nodes.count("n0"), 1u);
  EXPECT_EQ(m.nodes.at("n0").devices.size(), 2u);
  ASSERT_EQ(m.claims.size(), 1u);
  EXPECT_EQ(m.claims[0].uid, "u-1");
  ASSERT_TRUE(m.claims[0].allocation.has_value());
  EXPECT_EQ(m.claims[0].allocation->node, "n0");
  ASSERT_EQ(m.claims[0].allocation->devices.size(), 1u);
  EXPECT_EQ(m.claims[0].allocation->devices[0].device, "gpu-1");
  EXPECT_EQ(m.claims[0].reserved_for, std::vector<std::string>{"p"});
  EXPECT_TRUE(d.ClassConfig("gpu.example.com").is_array());
  EXPECT_TRUE(d.ClassConfig("other").is_null());
}

TEST(DraObjects, OnlyChangesThatMatterRebuild) {
  DraObjects d;
  d.Apply(Replace("resourceclaims", {Claim()}));
  WatchEvent ev;
  ev.type = WatchEvent::Type::kModified;
  ev.resource = "resourceclaims";
  ev.object = Claim();
  ev.object["metadata"]["resourceVersion"] = "4";  // nothing the engine reads
  EXPECT_FALSE(d.Apply(ev));
  ev.object["status"].erase("allocation");  // the ResourceClaim controller freed it
  EXPECT_TRUE(d.Apply(ev));
  EXPECT_FALSE(d.Load().claims[0].allocation.has_value());
  ev.type = WatchEvent::Type::kDeleted;
  EXPECT_TRUE(d.Apply(ev));
  EXPECT_TRUE(d.Load().claims.empty());
}

TEST(DraObjects, AllocationNamesTheNodeAndCarriesClassAndClaimConfigs) {
  ClaimReservation r;
  r.ns = "team";
  r.name = "c";
  r.node = "n0";
  r.devices = {{"gpu", "gpu.example.com", "n0", "gpu-1", {}, ""}};
  r.class_configs = json::parse(R"([{"requests": ["gpu"], "opaque": {"driver": "d"}}])");
  json claim = json::parse(R"({"spec": {"devices": {"config": [
      {"requests": ["gpu"], "opaque": {"driver": "d", "parameters": {}}}]}}})");
  json a = AllocationJson(r, claim);
  EXPECT_EQ(a["devices"]["results"][0]["device"], "gpu-1");
  EXPECT_EQ(a["devices"]["results"][0]["pool"], "n0");
  ASSERT_EQ(a["devices"]["config"].size(), 2u);
  EXPECT_EQ(a["devices"]["config"][0]["source"], "FromClass");
  EXPECT_EQ(a["devices"]["config"][1]["source"], "FromClaim");
  EXPECT_EQ(a["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["key"], "metadata.name");
  EXPECT_EQ(a["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0], "n0");
}

TEST(DraObjects, AShareOfADeviceCarriesItsShareIdAndConsumedCapacity) {
  ClaimReservation r;
  r.ns = "team";
  r.name = "c";
  r.node = "n0";
  dra::AllocatedDevice whole, share;
  whole.request = share.request = "gpu";
  whole.driver = share.driver = "gpu.example.com";
  whole.pool = share.pool = "n0";
  whole.device = "gpu-0";
  share.device = "gpu-1";
  share.consumed = {{"memory", (int64_t{40} << 30) * 1000}, {"cores", 500}};
  share.share_id = NewShareId();
  r.devices = {whole, share};
  json a = AllocationJson(r, json::object());
  const json& results = a["devices"]["results"];
  EXPECT_FALSE(results[0].contains("shareID"));
  EXPECT_FALSE(results[0].contains("consumedCapacity"));
  EXPECT_EQ(results[1]["shareID"], share.share_id);
  EXPECT_EQ(results[1]["consumedCapacity"]["memory"], "42949672960");
  EXPECT_EQ(results[1]["consumedCapacity"]["cores"], "500m");
  // A UUID, version 4, new for each share.
  EXPECT_EQ(share.share_id.size(), 36u);
  EXPECT_EQ(share.share_id[14], '4');
  EXPECT_NE(NewShareId(), share.share_id);

  // Read back as a restart does: the share's consumption comes with it.
  DraObjects d;
  json claim = Claim();
  claim["status"]["allocation"] = a;
  d.Apply(Replace("resourceclaims", {claim}));
  dra::DraModel m = d.Load();
  ASSERT_EQ(m.claims.size(), 1u);
  ASSERT_EQ(m.claims[0].allocation->devices.size(), 2u);
  EXPECT_EQ(m.claims[0].allocation->devices[1].consumed.at("memory"), (int64_t{40} << 30) * 1000);
  EXPECT_EQ(m.claims[0].allocation->devices[1].share_id, share.share_id);
}

}  // namespace
}  // namespace tessera::k8s
