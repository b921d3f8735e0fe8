// The accounting store's schema and its migrations (docs/accounting.md, "Schema").
//
// The schema version is SQLite's PRAGMA user_version: 0 is an empty database, kSchemaVersion the
// one this build writes. Opening applies, in one transaction, every migration above the file's
// version; a file with a version above kSchemaVersion (written by a newer Tessera) is refused
// and left untouched, as is a database of version 0 that already holds tables of its own.
//
// Thread-safety: functions of one connection; the caller serializes them.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"

struct sqlite3;

namespace tessera::accounting {

// One step: the SQL that takes a database from version `version - 1` to `version`.
struct Migration {
  int version = 0;
  std::string_view sql;
};

inline constexpr int kSchemaVersion = 3;

// Every step from an empty database to kSchemaVersion, in order.
std::span<const Migration> Migrations();

// SQLite's PRAGMA application_id of a Tessera accounting store ("TSRA").
inline constexpr int kApplicationId = 0x54535241;

// Brings `db` (the file `path`, for messages) to the last version of `steps`: nothing when it is
// there already; FailedPrecondition naming the file when it is newer, or not an accounting
// store. REQUIRES: `steps` numbered 1, 2, ... in order.
[[nodiscard]] absl::Status Migrate(sqlite3* db, const std::string& path,
                                   std::span<const Migration> steps);

// The database's PRAGMA user_version.
[[nodiscard]] absl::Status ReadSchemaVersion(sqlite3* db, const std::string& path, int& version);

}  // namespace tessera::accounting
