// The dashboard's routes on serve's metrics port (docs/observability.md, "Dashboard"): /ui/ (the
// page, src/ui/ui_assets.h), and / and /ui redirecting to it. The page holds no data: it needs
// no token even with --api-token-file; it reads /api/v1/ with the token the user gives it.
//
// Thread-safety: the routes' handlers are; AddUiRoutes is called before the server starts.
#pragma once

namespace httplib {
class Server;
}  // namespace httplib

namespace tessera::k8s {

void AddUiRoutes(httplib::Server& server);

}  // namespace tessera::k8s
