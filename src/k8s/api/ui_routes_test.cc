#include "k8s/api/ui_routes.h"

#include <thread>

#include "gtest/gtest.h"
#include "httplib.h"
#include "ui/ui_assets.h"

namespace tessera::k8s {
namespace {

TEST(UiRoutes, ServesThePageAndRedirectsToIt) {
  httplib::Server server;
  AddUiRoutes(server);
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread t([&] { server.listen_after_bind(); });
  httplib::Client client("127.0.0.1", port);
  for (const char* path : {"/", "/ui"}) {
    auto r = client.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 302) << path;
    EXPECT_EQ(r->get_header_value("Location"), "/ui/") << path;
  }
  auto page = client.Get("/ui/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page->body, ui::DashboardPage());
  // The page may talk only to this server and load nothing from elsewhere.
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos);
  auto missing = client.Get("/ui/app.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  server.stop();
  t.join();
}

}  // namespace
}  // namespace tessera::k8s
