// Small helpers around SQLite's C API for the accounting store: errors as absl::Status values
// that name the file, a statement that finalizes itself, and Exec for SQL without results.
//
// Thread-safety: as the connection they are given (the store serializes its use).
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tessera::accounting {

// "accounting store PATH: WHAT: SQLite's message"; the code follows SQLite's result code
// (SQLITE_FULL: ResourceExhausted, SQLITE_CANTOPEN/NOTADB/READONLY: FailedPrecondition).
absl::Status SqliteError(sqlite3* db, int rc, const std::string& path, std::string_view what);

// Runs `sql` (one or more statements, no results).
[[nodiscard]] absl::Status Exec(sqlite3* db, const std::string& path, const char* sql,
                                std::string_view what);

// A prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement() = default;
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  [[nodiscard]] int Prepare(sqlite3* db, const char* sql) {
    return sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace tessera::accounting
