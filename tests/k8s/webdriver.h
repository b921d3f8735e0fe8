// A headless Chromium driven over the W3C WebDriver protocol (Debian's chromium and
// chromium-driver), for the dashboard's browser test: chromedriver is started on a free port,
// one session opens, and the test loads pages, runs scripts in them and takes screenshots.
// Every request has a timeout, so that a browser that hangs fails the test instead of hanging it.
//
// Thread-safety: one thread uses a Browser.
#pragma once

#include <memory>
#include <string>

#include "nlohmann/json.hpp"

namespace tessera::k8s::testing {

class Browser {
 public:
  // The chromium and chromedriver binaries ($TESSERA_CHROMIUM / $TESSERA_CHROMEDRIVER, else
  // found on PATH); "" when not installed.
  static std::string ChromiumPath();
  static std::string ChromedriverPath();

  // Starts chromedriver (its log in `log`) and a headless session; nullptr with the reason in
  // `*why` when that fails.
  static std::unique_ptr<Browser> Start(const std::string& log, std::string* why);
  ~Browser();

  bool Navigate(const std::string& url);
  // Runs `script` (a function body; `arguments` are `args`) in the page: its return value, or a
  // JSON object {"webdriverError": "..."} when the script threw or the driver failed.
  nlohmann::json Execute(const std::string& script,
                         const nlohmann::json& args = nlohmann::json::array());
  // Types `text` into the element that `css` selects; false when there is none.
  bool Type(const std::string& css, const std::string& text);
  bool Click(const std::string& css);
  // Writes a PNG of the window to `path`.
  bool Screenshot(const std::string& path);
  // What the last failed request said.
  const std::string& last_error() const { return last_error_; }

 private:
  Browser() = default;
  nlohmann::json Call(const std::string& method, const std::string& path,
                      const nlohmann::json& body);
  std::string Element(const std::string& css);

  int driver_pid_ = -1;
  int port_ = 0;
  std::string session_;
  std::string last_error_;
};

}  // namespace tessera::k8s::testing
