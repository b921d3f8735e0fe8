#include "tests/k8s/webdriver.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/escaping.h"
#include "fmt/format.h"
#include "httplib.h"
#include "k8s/client/http_testing.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing {
namespace {

// The W3C key of an element reference.
constexpr const char* kElementKey = "element-6066-11e4-a52e-4f735466cecf";

std::string FindOnPath(const char* env, std::initializer_list<const char*> names) {
  if (const char* p = std::getenv(env); p != nullptr && *p != '\0')
    return access(p, X_OK) == 0 ? p : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    for (const char* name : names) {
      std::string candidate = dir + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return "";
}

}  // namespace

std::string Browser::ChromiumPath() {
  return FindOnPath("TESSERA_CHROMIUM", {"chromium", "chromium-browser", "google-chrome"});
}

std::string Browser::ChromedriverPath() {
  return FindOnPath("TESSERA_CHROMEDRIVER", {"chromedriver", "chromium-driver"});
}

std::unique_ptr<Browser> Browser::Start(const std::string& log, std::string* why) {
  const std::string chromium = ChromiumPath(), driver = ChromedriverPath();
  if (chromium.empty() || driver.empty()) {
    *why = "chromium or chromedriver is not installed (Debian: chromium chromium-driver)";
    return nullptr;
  }
  std::unique_ptr<Browser> b(new Browser());
  b->port_ = FreePort();
  b->driver_pid_ = TestCluster::Spawn({driver, fmt::format("--port={}", b->port_)}, log);
  if (b->driver_pid_ <= 0) {
    *why = "cannot start " + driver;
    return nullptr;
  }
  bool up = TestCluster::WaitFor(
      [&] {
        httplib::Client c("127.0.0.1", b->port_);
        c.set_connection_timeout(1);
        auto r = c.Get("/status");
        return r && r->status == 200;
      },
      30);
  if (!up) {
    *why = "chromedriver did not answer on its port; see " + log;
    return nullptr;
  }
  // CI runs as root: chromium needs --no-sandbox there.
  nlohmann::json caps = {
      {"capabilities",
       {{"alwaysMatch",
         {{"browserName", "chrome"},
          {"goog:chromeOptions",
           {{"binary", chromium},
            {"args",
             {"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", "--window-size=1400,900", "--lang=en-US"}}}},
          {"timeouts", {{"pageLoad", 30000}, {"script", 15000}, {"implicit", 0}}}}}}}};
  nlohmann::json r = b->Call("POST", "/session", caps);
  if (!r.contains("sessionId")) {
    *why = "no WebDriver session: " + r.dump();
    return nullptr;
  }
  b->session_ = r["sessionId"].get<std::string>();
  return b;
}

Browser::~Browser() {
  if (!session_.empty()) Call("DELETE", "/session/" + session_, nullptr);
  TestCluster::Kill(driver_pid_);
}

// The "value" of a WebDriver answer; {"webdriverError": ...} for an error or no answer.
nlohmann::json Browser::Call(const std::string& method, const std::string& path,
                             const nlohmann::json& body) {
  httplib::Client c("127.0.0.1", port_);
  c.set_connection_timeout(5);
  c.set_read_timeout(60);
  c.set_write_timeout(10);
  httplib::Result r = method == "GET"      ? c.Get(path)
                      : method == "DELETE" ? c.Delete(path)
                                           : c.Post(path, body.dump(), "application/json");
  if (!r) return {{"webdriverError", fmt::format("{} {}: {}", method, path, to_string(r.error()))}};
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded() || !j.contains("value"))
    return {{"webdriverError", fmt::format("{} {}: HTTP {} {}", method, path, r->status, r->body)}};
  nlohmann::json v = j["value"];
  if (r->status != 200) {
    std::string msg = v.is_object() ? v.value("message", v.dump()) : v.dump();
    last_error_ = fmt::format("{} {}: {}", method, path, msg);
    return {{"webdriverError", last_error_}};
  }
  // POST /session answers {"value": {"sessionId": ..., "capabilities": ...}}.
  return v.is_null() ? nlohmann::json::object() : v;
}

bool Browser::Navigate(const std::string& url) {
  return !Call("POST", "/session/" + session_ + "/url", {{"url", url}}).contains("webdriverError");
}

nlohmann::json Browser::Execute(const std::string& script, const nlohmann::json& args) {
  // An argument list given as {} arrives as null; WebDriver wants an array.
  return Call("POST", "/session/" + session_ + "/execute/sync",
              {{"script", script}, {"args", args.is_array() ? args : nlohmann::json::array()}});
}

std::string Browser::Element(const std::string& css) {
  nlohmann::json v = Call("POST", "/session/" + session_ + "/element",
                          {{"using", "css selector"}, {"value", css}});
  return v.is_object() && v.contains(kElementKey) ? v[kElementKey].get<std::string>() : "";
}

bool Browser::Type(const std::string& css, const std::string& text) {
  const std::string e = Element(css);
  if (e.empty()) {
    last_error_ = "no element " + css;
    return false;
  }
  return !Call("POST", fmt::format("/session/{}/element/{}/value", session_, e), {{"text", text}})
              .contains("webdriverError");
}

bool Browser::Click(const std::string& css) {
  const std::string e = Element(css);
  if (e.empty()) {
    last_error_ = "no element " + css;
    return false;
  }
  return !Call("POST", fmt::format("/session/{}/element/{}/click", session_, e),
               nlohmann::json::object())
              .contains("webdriverError");
}

bool Browser::Screenshot(const std::string& path) {
  nlohmann::json v = Call("GET", "/session/" + session_ + "/screenshot", nullptr);
  std::string png;
  if (!v.is_string() || !absl::Base64Unescape(v.get<std::string>(), &png)) return false;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << png;
  return static_cast<bool>(out);
}

}  // namespace tessera::k8s::testing
