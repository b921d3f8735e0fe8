#include "k8s/api/ui_routes.h"

#include "httplib.h"
#include "ui/ui_assets.h"

namespace tessera::k8s {

void AddUiRoutes(httplib::Server& server) {
  auto handler = [](const httplib::Request& req, httplib::Response& res) {
    std::optional<ui::UiResponse> r = ui::ServeUi(req.path);
    if (!r) {
      res.status = 404;
      res.set_content("not found\n", "text/plain");
      return;
    }
    res.status = r->status;
    if (!r->location.empty()) res.set_header("Location", r->location);
    // The page changes with the binary: a browser asks again rather than keep an old one.
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Content-Type-Options", "nosniff");
    // Everything the page uses is inline; it talks only to this server.
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                   "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
                   "form-action 'none'; frame-ancestors 'none'");
    res.set_content(r->body, r->content_type);
  };
  for (const char* path : {"/", "/ui", "/ui/", "/ui/index.html"}) server.Get(path, handler);
}

}  // namespace tessera::k8s
