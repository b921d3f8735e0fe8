#include "accounting/schema.h"

#include <sqlite3.h>

#include "accounting/sqlite_util.h"
#include "fmt/format.h"

namespace tessera::accounting {
namespace {

// Version 1: one table of runs (accounting/record.h says what each column holds), indexed by
// end time, which is what the report selects on. Times are seconds since the Unix epoch (REAL:
// simulated instants may have fractions); NULL dollars: no prices were given.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE runs (
  id                INTEGER PRIMARY KEY,
  source            TEXT    NOT NULL,
  namespace         TEXT    NOT NULL,
  name              TEXT    NOT NULL,
  local_queue       TEXT,
  cluster_queue     TEXT,
  cohort            TEXT,
  labels            TEXT    NOT NULL DEFAULT '{}',
  priority          INTEGER NOT NULL DEFAULT 0,
  attempt           INTEGER NOT NULL DEFAULT 1,
  pods              INTEGER NOT NULL DEFAULT 0,
  gpus              REAL    NOT NULL DEFAULT 0,
  gpu_model         TEXT,
  flavors           TEXT,
  submit_time       REAL    NOT NULL,
  start_time        REAL    NOT NULL,
  end_time          REAL    NOT NULL,
  state             TEXT    NOT NULL
                    CHECK (state IN ('finished', 'preempted', 'failed', 'running')),
  reason            TEXT,
  preemptions       INTEGER NOT NULL DEFAULT 0,
  gpu_hours         REAL    NOT NULL DEFAULT 0,
  allocated_dollars REAL,
  utilization       REAL
);
CREATE INDEX runs_by_end_time ON runs (end_time);
)sql";

// Version 2 (tessera serve, issue 16): the effective cost of a run (allocated x the GPU
// utilization dcgm-exporter measured; NULL where nothing was measured), and the key under which
// serve keeps a run open while it runs (NULL for the simulator's records, which are written
// when they end): a restarted serve, or a new leader, finds the runs it must carry on by it.
constexpr std::string_view kV2 = R"sql(
ALTER TABLE runs ADD COLUMN effective_dollars REAL;
ALTER TABLE runs ADD COLUMN run_key TEXT;
CREATE INDEX runs_open ON runs (source, state) WHERE state = 'running' AND run_key IS NOT NULL;
)sql";

// Version 3 (issue 31): the run of the simulator or replay that wrote a record (NULL for serve's),
// so that running the same scenario again replaces its records instead of doubling every figure.
constexpr std::string_view kV3 = R"sql(
ALTER TABLE runs ADD COLUMN run_id TEXT;
CREATE INDEX runs_by_run_id ON runs (run_id) WHERE run_id IS NOT NULL;
)sql";

constexpr Migration kMigrations[] = {{1, kV1}, {2, kV2}, {3, kV3}};

// Tables that the database holds, other than SQLite's own.
absl::Status CountTables(sqlite3* db, const std::string& path, int& tables) {
  Statement st;
  int rc = st.Prepare(
      db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, "reading the schema");
  rc = sqlite3_step(st.get());
  if (rc != SQLITE_ROW) return SqliteError(db, rc, path, "reading the schema");
  tables = sqlite3_column_int(st.get(), 0);
  return absl::OkStatus();
}

absl::Status ReadIntPragma(sqlite3* db, const std::string& path, const char* sql, int& value) {
  Statement st;
  int rc = st.Prepare(db, sql);
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, "reading its header");
  rc = sqlite3_step(st.get());
  if (rc != SQLITE_ROW) return SqliteError(db, rc, path, "reading its header");
  value = sqlite3_column_int(st.get(), 0);
  return absl::OkStatus();
}

// Checks, inside the migration's transaction, that the file is ours to change.
absl::Status CheckOwnership(sqlite3* db, const std::string& path, int version, int newest) {
  int app_id = 0;
  if (auto st = ReadIntPragma(db, path, "PRAGMA application_id", app_id); !st.ok()) return st;
  if (app_id != 0 && app_id != kApplicationId) {
    return absl::FailedPreconditionError(fmt::format(
        "accounting store {}: not a Tessera accounting store (SQLite application_id {:#x}); "
        "left untouched",
        path, static_cast<uint32_t>(app_id)));
  }
  if (version > newest) {
    return absl::FailedPreconditionError(fmt::format(
        "accounting store {}: schema version {} is newer than this tessera understands ({}); "
        "it was written by a newer Tessera and is left untouched: use that version",
        path, version, newest));
  }
  if (version == 0) {
    int tables = 0;
    if (auto st = CountTables(db, path, tables); !st.ok()) return st;
    if (tables > 0) {
      return absl::FailedPreconditionError(fmt::format(
          "accounting store {}: holds {} table(s) but no schema version (PRAGMA user_version 0): "
          "not a Tessera accounting store; left untouched",
          path, tables));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

absl::Status ReadSchemaVersion(sqlite3* db, const std::string& path, int& version) {
  return ReadIntPragma(db, path, "PRAGMA user_version", version);
}

absl::Status Migrate(sqlite3* db, const std::string& path, std::span<const Migration> steps) {
  const int newest = steps.empty() ? 0 : steps.back().version;
  int version = 0;
  if (auto st = ReadSchemaVersion(db, path, version); !st.ok()) return st;
  if (version == newest) return CheckOwnership(db, path, version, newest);
  // IMMEDIATE: a second writer opening the same file at the same time waits here, then sees the
  // version this one wrote.
  if (auto st = Exec(db, path, "BEGIN IMMEDIATE", "starting the schema migration"); !st.ok())
    return st;
  auto fail = [&](absl::Status st) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  };
  if (auto st = ReadSchemaVersion(db, path, version); !st.ok()) return fail(st);
  if (auto st = CheckOwnership(db, path, version, newest); !st.ok()) return fail(st);
  for (const Migration& m : steps) {
    if (m.version <= version) continue;
    const std::string sql = std::string(m.sql);
    if (auto st =
            Exec(db, path, sql.c_str(), fmt::format("migrating to schema version {}", m.version));
        !st.ok())
      return fail(st);
  }
  const std::string set =
      fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {}", kApplicationId, newest);
  if (auto st = Exec(db, path, set.c_str(), "writing the schema version"); !st.ok())
    return fail(st);
  if (auto st = Exec(db, path, "COMMIT", "committing the schema migration"); !st.ok())
    return fail(st);
  return absl::OkStatus();
}

}  // namespace tessera::accounting
