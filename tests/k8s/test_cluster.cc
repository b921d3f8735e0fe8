#include "tests/k8s/test_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace tessera::k8s::testing {
namespace {

json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : n) out[kv.first.as<std::string>()] = ToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& e : n) out.push_back(ToJson(e));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true") return true;
      if (s == "false") return false;
      if (s == "null" || s == "~") return nullptr;
      int64_t i;
      if (absl::SimpleAtoi(s, &i)) return i;
      double d;
      if (!s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') &&
          absl::SimpleAtod(s, &d))
        return d;
      return s;
    }
    default:
      return nullptr;
  }
}

std::string Plural(const std::string& kind) {
  std::string k;
  for (char c : kind) k.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (!k.empty() && k.back() == 's') return k + "es";
  if (!k.empty() && k.back() == 'y') return k.substr(0, k.size() - 1) + "ies";
  return k + "s";
}

}  // namespace

std::vector<json> YamlToJson(const std::string& text) {
  std::vector<json> out;
  for (const auto& doc : YAML::LoadAll(text))
    if (doc.IsMap()) out.push_back(ToJson(doc));
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TestCluster::RepoRoot() {
  if (const char* d = std::getenv("TESSERA_SOURCE_DIR")) return d;
  return std::filesystem::current_path().string();
}

std::string TestCluster::CacheDir() {
  // As scripts/k8s/*.sh: $TESSERA_K8S_CACHE, else ~/.cache/tessera-k8s, else .cache/k8s.
  if (const char* c = std::getenv("TESSERA_K8S_CACHE"); c && *c) return c;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tessera-k8s";
  return RepoRoot() + "/.cache/k8s";
}

std::string TestCluster::Version() {
  std::string v = "1.37";
  if (const char* e = std::getenv("TESSERA_K8S_VERSION"); e && *e) v = e;
  if (!v.empty() && v[0] == 'v') v.erase(0, 1);
  // "1.34.4" -> "1.34", as scripts/k8s/build-apiserver.sh keys its cache.
  if (auto dot = v.find('.'); dot != std::string::npos)
    if (auto dot2 = v.find('.', dot + 1); dot2 != std::string::npos) v.resize(dot2);
  return v;
}

std::string TestCluster::BinDir() { return CacheDir() + "/v" + Version() + "/bin"; }

std::string TestCluster::KubeSchedulerPath() {
  std::string p = BinDir() + "/kube-scheduler";
  return access(p.c_str(), X_OK) == 0 ? p : "";
}

int TestCluster::Script(const std::string& args) const {
  std::string cmd =
      fmt::format("'{}/scripts/k8s/cluster.sh' {} >>'{}/script.log' 2>&1", RepoRoot(), args, dir_);
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::unique_ptr<TestCluster> TestCluster::Start(std::string* why, bool* not_built) {
  *not_built = false;
  for (const char* bin : {"kube-apiserver", "etcd"}) {
    const std::string path = BinDir() + "/" + bin;
    if (access(path.c_str(), X_OK) == 0) continue;
    *why = fmt::format(
        "{} {} is not built ({} is missing): run TESSERA_K8S_VERSION={} "
        "scripts/k8s/build-apiserver.sh (make test does) to run the Kubernetes integration tests",
        bin, Version(), path, Version());
    // In CI a control plane that is not there fails the tests: a skipped suite is no pass.
    const char* ci = std::getenv("CI");
    *not_built = !(ci && std::string(ci) == "true");
    return nullptr;
  }
  std::unique_ptr<TestCluster> c(new TestCluster());
  char tmpl[] = "/tmp/tessera-k8s-XXXXXX";
  c->dir_ = mkdtemp(tmpl);
  if (c->Script(fmt::format("start '{}'", c->dir_)) != 0) {
    *why = fmt::format("the control plane did not start; see {}/script.log and apiserver.log",
                       c->dir_);
    return nullptr;
  }
  auto kc = LoadKubeconfig(c->kubeconfig_path());
  if (!kc.ok()) {
    *why = std::string(kc.status().message());
    return nullptr;
  }
  c->client_ = std::make_unique<KubeClient>(*kc);
  // The bootstrap controller creates the default namespace a moment after /readyz.
  WaitFor(
      [&] {
        auto r = c->client_->Get("/api/v1/namespaces/default");
        return r.ok() && r->status == 200;
      },
      30);
  return c;
}

TestCluster::~TestCluster() {
  client_.reset();
  Script(fmt::format("stop '{}'", dir_));
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir_);
}

std::string TestCluster::FeatureGates() const {
  std::istringstream env(ReadFile(dir_ + "/env"));
  for (std::string line; std::getline(env, line);)
    if (line.rfind("FEATURE_GATES=", 0) == 0) return line.substr(14);
  return "";
}

bool TestCluster::StopApiServer() { return Script(fmt::format("stop-apiserver '{}'", dir_)) == 0; }

bool TestCluster::StartApiServer() {
  return Script(fmt::format("start-apiserver '{}'", dir_)) == 0;
}

bool TestCluster::StartControllerManager(std::string* why) {
  const std::string path = BinDir() + "/kube-controller-manager";
  if (access(path.c_str(), X_OK) != 0) {
    *why = fmt::format("{} is not built: run scripts/k8s/build-apiserver.sh", path);
    return false;
  }
  if (Script(fmt::format("start-controller-manager '{}'", dir_)) != 0) {
    *why = fmt::format("kube-controller-manager did not start; see {}/script.log", dir_);
    return false;
  }
  return true;
}

std::string TestCluster::JobControllerBinDir() { return CacheDir() + "/controllers/bin"; }

bool TestCluster::StartJobController(const std::string& name, std::string* why, bool* not_built) {
  if (not_built) *not_built = false;
  const std::string path = JobControllerBinDir() + "/" + name;
  if (access(path.c_str(), X_OK) != 0) {
    *why = fmt::format(
        "the {} controller is not built ({} is missing): run scripts/k8s/build-controllers.sh "
        "(make test does) to run its integration tests",
        name, path);
    const char* ci = std::getenv("CI");
    if (not_built) *not_built = !(ci && std::string(ci) == "true");
    return false;
  }
  const std::string script = RepoRoot() + "/scripts/k8s/job-controller.sh";
  auto run = [&](const std::string& args) {
    std::string cmd = fmt::format("'{}' {} >>'{}/script.log' 2>&1", script, args, dir_);
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
  };
  if (!run(fmt::format("apply-crds '{}' {}", dir_, name))) {
    *why = fmt::format("the {} CRDs could not be applied; see {}/script.log", name, dir_);
    return false;
  }
  if (!run(fmt::format("start '{}' {}", dir_, name))) {
    *why = fmt::format("the {} controller did not become ready; see {}/{}.log and script.log",
                       name, dir_, name);
    return false;
  }
  return true;
}

bool TestCluster::WaitFor(const std::function<bool()>& cond, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

std::string TestCluster::CollectionPath(const json& obj) {
  const std::string api = obj.value("apiVersion", "v1");
  std::string path = api == "v1" ? "/api/v1" : "/apis/" + api;
  const json& md = obj["metadata"];
  if (md.contains("namespace")) path += "/namespaces/" + md["namespace"].get<std::string>();
  return path + "/" + Plural(obj.value("kind", ""));
}

json TestCluster::Create(const json& obj) {
  const std::string path = CollectionPath(obj);
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto r = client_->Post(path, obj.dump());
    if (!r.ok()) {
      ADD_FAILURE() << "POST " << path << ": " << r.status();
      return json();
    }
    // A CRD just created takes a moment to be served.
    if (r->status == 404 && attempt < 49) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (r->status != 201 && r->status != 200) {
      ADD_FAILURE() << "POST " << path << ": HTTP " << r->status << ": " << r->body;
      return json();
    }
    return json::parse(r->body);
  }
  return json();
}

void TestCluster::Apply(const std::string& yaml_text) {
  for (const auto& obj : YamlToJson(yaml_text)) Create(obj);
}

void TestCluster::ApplyRepoFile(const std::string& rel) {
  std::ifstream in(RepoRoot() + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  Apply(ss.str());
}

void TestCluster::CreateNamespace(const std::string& ns, const json& labels) {
  Create({{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", ns}, {"labels", labels}}}});
}

void TestCluster::CreateNodes(int n, int gpus, const std::string& prefix, const json& labels,
                              const json& taints) {
  for (int i = 0; i < n; ++i) {
    const std::string name = fmt::format("{}-{}", prefix, i);
    json l = labels;
    l["kubernetes.io/hostname"] = name;
    json node = {
        {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", l}}}};
    if (!taints.empty()) node["spec"] = {{"taints", taints}};
    Create(node);
    json cap = {{"cpu", "96"},
                {"memory", "1024Gi"},
                {"pods", "110"},
                {"nvidia.com/gpu", std::to_string(gpus)}};
    json status = {
        {"status",
         {{"capacity", cap},
          {"allocatable", cap},
          {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
    auto r = client_->Patch(fmt::format("/api/v1/nodes/{}/status", name), status.dump());
    if (!r.ok() || r->status != 200) ADD_FAILURE() << "node status " << name;
  }
}

json TestCluster::PodSpec(const std::string& ns, const std::string& name, int gpus,
                          const std::string& scheduler, const json& labels,
                          const json& annotations) const {
  json res = {{"cpu", "1"}};
  if (gpus > 0) res["nvidia.com/gpu"] = std::to_string(gpus);
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
              {"spec",
               {{"schedulerName", scheduler},
                {"terminationGracePeriodSeconds", 0},
                {"containers",
                 {{{"name", "main"},
                   {"image", "registry.invalid/pause"},
                   {"resources", {{"requests", res}, {"limits", res}}}}}}}}};
  if (!annotations.empty()) pod["metadata"]["annotations"] = annotations;
  return pod;
}

void TestCluster::DeletePod(const std::string& ns, const std::string& name) {
  auto r = client_->Delete(fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name),
                           R"({"gracePeriodSeconds":0})");
  if (!r.ok() || (r->status != 200 && r->status != 404))
    ADD_FAILURE() << "delete pod " << ns << "/" << name;
}

void TestCluster::DeleteAllPods(const std::string& ns) {
  auto r = client_->Delete(fmt::format("/api/v1/namespaces/{}/pods?gracePeriodSeconds=0", ns));
  if (!r.ok() || r->status != 200) ADD_FAILURE() << "delete pods in " << ns;
}

json TestCluster::Get(const std::string& path) {
  auto r = client_->Get(path);
  if (!r.ok() || r->status != 200) return json();
  return json::parse(r->body, nullptr, false);
}

std::vector<json> TestCluster::Pods(const std::string& ns) {
  std::vector<json> out;
  json list = Get(fmt::format("/api/v1/namespaces/{}/pods", ns));
  if (list.is_object() && list["items"].is_array())
    for (auto& p : list["items"]) out.push_back(p);
  return out;
}

int TestCluster::BoundPods(const std::string& ns) {
  int n = 0;
  for (const auto& p : Pods(ns))
    if (!p["spec"].value("nodeName", "").empty()) ++n;
  return n;
}

int TestCluster::Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

void TestCluster::Kill(int pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace tessera::k8s::testing
