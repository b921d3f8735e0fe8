#include "ui/ui_assets.h"

#include <string>

#include "gtest/gtest.h"

namespace tessera::ui {
namespace {

size_t Count(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(DashboardPage, IsOneSelfContainedPage) {
  const std::string page = DashboardPage();
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // The CSS and JS are inline: no marker is left, nothing is fetched from elsewhere.
  EXPECT_EQ(page.find("@STYLE@"), std::string::npos);
  EXPECT_EQ(page.find("@SCRIPT@"), std::string::npos);
  EXPECT_EQ(page.find("@SNAPSHOT@"), std::string::npos);
  EXPECT_NE(page.find(".gpu-map {"), std::string::npos);
  EXPECT_NE(page.find("function renderGpuMap"), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  // Exactly the page's own two scripts (snapshot and code) and their ends: the JS holds no
  // "</script>" that would end its element early.
  EXPECT_EQ(Count(page, "<script"), 2u);
  EXPECT_EQ(Count(page, "</script>"), 2u);
  // The page never puts data in the DOM as markup.
  EXPECT_EQ(page.find("innerHTML"), std::string::npos);
  EXPECT_EQ(page.find("insertAdjacentHTML"), std::string::npos);
  EXPECT_EQ(page.find("document.write"), std::string::npos);
}

TEST(DashboardPage, SnapshotCannotEndItsScriptElement) {
  const std::string snap =
      R"({"summary":{"time":"2026-01-01T00:00:00Z"},"queues":{"items":[{"name":"</script><script>alert(1)</script><!--"}]},"x":"/*@SCRIPT@*/"})";
  const std::string page = DashboardPage(snap);
  EXPECT_EQ(Count(page, "</script>"), 2u);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find(R"(\u003c/script>\u003cscript>alert(1)\u003c/script>\u003c!--)"),
            std::string::npos);
  // A marker-like string in the snapshot stays as it is, and the code is still inlined once.
  EXPECT_NE(page.find(R"("x":"/*@SCRIPT@*/")"), std::string::npos);
  EXPECT_EQ(Count(page, "function renderGpuMap"), 1u);
}

TEST(ServeUi, PageAndRedirects) {
  auto page = ServeUi("/ui/");
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page->body, DashboardPage());
  for (const char* p : {"/", "/ui"}) {
    auto r = ServeUi(p);
    ASSERT_TRUE(r.has_value()) << p;
    EXPECT_EQ(r->status, 302);
    EXPECT_EQ(r->location, "/ui/");
  }
  EXPECT_FALSE(ServeUi("/metrics").has_value());
  EXPECT_FALSE(ServeUi("/ui/../metrics").has_value());
  EXPECT_FALSE(ServeUi("/api/v1/summary").has_value());
}

}  // namespace
}  // namespace tessera::ui
