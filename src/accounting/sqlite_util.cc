#include "accounting/sqlite_util.h"

#include "fmt/format.h"

namespace tessera::accounting {

absl::Status SqliteError(sqlite3* db, int rc, const std::string& path, std::string_view what) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string msg = fmt::format("accounting store {}: {}: {}", path, what, detail);
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(msg);
    case SQLITE_NOTADB:
      return absl::FailedPreconditionError(msg + " (not an SQLite database)");
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return absl::FailedPreconditionError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status Exec(sqlite3* db, const std::string& path, const char* sql, std::string_view what) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, what);
  return absl::OkStatus();
}

}  // namespace tessera::accounting
