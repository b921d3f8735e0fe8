#include "accounting/store.h"

#include <sqlite3.h>

#include <cmath>

#include "accounting/schema.h"
#include "accounting/sqlite_util.h"
#include "fmt/format.h"

namespace tessera::accounting {
namespace {

constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kColumns =
    "source, namespace, name, local_queue, cluster_queue, cohort, labels, priority, attempt, "
    "pods, gpus, gpu_model, flavors, submit_time, start_time, end_time, state, reason, "
    "preemptions, gpu_hours, allocated_dollars, utilization, effective_dollars, run_key";
constexpr int kNumColumns = 24;

// Empty text is NULL in the store: "no queue" reads as NULL in SQL, not as ''.
void BindText(sqlite3_stmt* st, int i, const std::string& s, bool null_if_empty) {
  if (null_if_empty && s.empty()) {
    sqlite3_bind_null(st, i);
  } else {
    sqlite3_bind_text(st, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
}

void BindOptional(sqlite3_stmt* st, int i, const std::optional<double>& v) {
  if (v && std::isfinite(*v)) {
    sqlite3_bind_double(st, i, *v);
  } else {
    sqlite3_bind_null(st, i);
  }
}

void Bind(sqlite3_stmt* st, const RunRecord& r) {
  int i = 0;
  BindText(st, ++i, r.source, false);
  BindText(st, ++i, r.ns, false);
  BindText(st, ++i, r.name, false);
  BindText(st, ++i, r.local_queue, true);
  BindText(st, ++i, r.cluster_queue, true);
  BindText(st, ++i, r.cohort, true);
  BindText(st, ++i, r.labels.empty() ? std::string("{}") : r.labels, false);
  sqlite3_bind_int(st, ++i, r.priority);
  sqlite3_bind_int(st, ++i, r.attempt);
  sqlite3_bind_int(st, ++i, r.pods);
  sqlite3_bind_double(st, ++i, r.gpus);
  BindText(st, ++i, r.gpu_model, true);
  BindText(st, ++i, r.flavors, true);
  sqlite3_bind_double(st, ++i, r.submit);
  sqlite3_bind_double(st, ++i, r.start);
  sqlite3_bind_double(st, ++i, r.end);
  BindText(st, ++i, RunEndName(r.how), false);
  BindText(st, ++i, r.reason, true);
  sqlite3_bind_int(st, ++i, r.preemptions);
  sqlite3_bind_double(st, ++i, r.gpu_hours);
  BindOptional(st, ++i, r.allocated_dollars);
  BindOptional(st, ++i, r.utilization);
  BindOptional(st, ++i, r.effective_dollars);
  BindText(st, ++i, r.run_key, true);
}

// "?, ?, ..." for every column.
std::string Placeholders() {
  std::string s;
  for (int i = 0; i < kNumColumns; ++i) s += i == 0 ? "?" : ", ?";
  return s;
}

std::string Text(sqlite3_stmt* st, int col) {
  const unsigned char* t = sqlite3_column_text(st, col);
  return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
}

std::optional<double> OptionalDouble(sqlite3_stmt* st, int col) {
  if (sqlite3_column_type(st, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(st, col);
}

RunRecord Row(sqlite3_stmt* st) {
  RunRecord r;
  int c = 0;
  r.id = sqlite3_column_int64(st, c++);
  r.source = Text(st, c++);
  r.ns = Text(st, c++);
  r.name = Text(st, c++);
  r.local_queue = Text(st, c++);
  r.cluster_queue = Text(st, c++);
  r.cohort = Text(st, c++);
  r.labels = Text(st, c++);
  r.priority = sqlite3_column_int(st, c++);
  r.attempt = sqlite3_column_int(st, c++);
  r.pods = sqlite3_column_int(st, c++);
  r.gpus = sqlite3_column_double(st, c++);
  r.gpu_model = Text(st, c++);
  r.flavors = Text(st, c++);
  r.submit = sqlite3_column_double(st, c++);
  r.start = sqlite3_column_double(st, c++);
  r.end = sqlite3_column_double(st, c++);
  r.how = ParseRunEnd(Text(st, c++)).value_or(RunEnd::kFinished);
  r.reason = Text(st, c++);
  r.preemptions = sqlite3_column_int(st, c++);
  r.gpu_hours = sqlite3_column_double(st, c++);
  r.allocated_dollars = OptionalDouble(st, c++);
  r.utilization = OptionalDouble(st, c++);
  r.effective_dollars = OptionalDouble(st, c++);
  r.run_key = Text(st, c++);
  return r;
}

// A store opened for reading must already have this build's schema.
absl::Status CheckReadable(sqlite3* db, const std::string& path) {
  int version = 0;
  if (auto st = ReadSchemaVersion(db, path, version); !st.ok()) return st;
  if (version == kSchemaVersion) return absl::OkStatus();
  if (version == 0) {
    return absl::FailedPreconditionError(fmt::format(
        "accounting store {}: no accounting schema (empty, or not written by tessera)", path));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(fmt::format(
        "accounting store {}: schema version {} is newer than this tessera understands ({}); "
        "use the Tessera that wrote it",
        path, version, kSchemaVersion));
  }
  return absl::FailedPreconditionError(
      fmt::format("accounting store {}: schema version {} is older than this tessera's ({}); "
                  "open it once for writing (e.g. tessera sim --accounting-db) to migrate it",
                  path, version, kSchemaVersion));
}

// WAL (a report reads while a writer appends), FULL sync (a committed record survives a crash),
// the page limit of a test's full disk, then the schema.
absl::Status SetUpForWriting(sqlite3* db, const std::string& path, const StoreOptions& options) {
  {
    Statement wal;
    int rc = wal.Prepare(db, "PRAGMA journal_mode = WAL");
    if (rc == SQLITE_OK) rc = sqlite3_step(wal.get());
    if (rc != SQLITE_ROW) return SqliteError(db, rc, path, "cannot use it");
    if (Text(wal.get(), 0) != "wal") {
      return absl::FailedPreconditionError(fmt::format(
          "accounting store {}: cannot use write-ahead logging (journal mode {}); is it on a "
          "network file system?",
          path, Text(wal.get(), 0)));
    }
  }  // finalized: a statement in progress would keep the migration from committing
  if (auto st = Exec(db, path, "PRAGMA synchronous = FULL", "cannot use it"); !st.ok()) return st;
  if (options.max_pages > 0) {
    const std::string sql = fmt::format("PRAGMA max_page_count = {}", options.max_pages);
    if (auto st = Exec(db, path, sql.c_str(), "cannot use it"); !st.ok()) return st;
  }
  return Migrate(db, path, Migrations());
}

}  // namespace

const char* RunEndName(RunEnd e) {
  switch (e) {
    case RunEnd::kFinished:
      return "finished";
    case RunEnd::kPreempted:
      return "preempted";
    case RunEnd::kFailed:
      return "failed";
    case RunEnd::kRunning:
      return "running";
  }
  return "?";
}

std::optional<RunEnd> ParseRunEnd(std::string_view name) {
  for (RunEnd e : {RunEnd::kFinished, RunEnd::kPreempted, RunEnd::kFailed, RunEnd::kRunning})
    if (name == RunEndName(e)) return e;
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<AccountingStore>> AccountingStore::Open(const std::string& path,
                                                                       StoreOptions options) {
  if (path.empty()) return absl::InvalidArgumentError("accounting store: no file name given");
  sqlite3* db = nullptr;
  const int flags =
      options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status st =
        SqliteError(db, rc, path,
                    options.read_only ? "cannot open it for reading" : "cannot open or create it");
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<AccountingStore> store(new AccountingStore(db, path));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  absl::Status st =
      options.read_only ? CheckReadable(db, path) : SetUpForWriting(db, path, options);
  if (!st.ok()) return st;
  return store;
}

AccountingStore::~AccountingStore() { sqlite3_close(db_); }

absl::Status AccountingStore::Append(const std::vector<RunRecord>& records) {
  if (records.empty()) return absl::OkStatus();
  if (auto st = Exec(db_, path_, "BEGIN IMMEDIATE", "cannot write records"); !st.ok()) return st;
  auto fail = [&](absl::Status st) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  };
  {
    Statement insert;
    const std::string sql =
        fmt::format("INSERT INTO runs ({}) VALUES ({})", kColumns, Placeholders());
    int rc = insert.Prepare(db_, sql.c_str());
    if (rc != SQLITE_OK) return fail(SqliteError(db_, rc, path_, "cannot write records"));
    for (const RunRecord& r : records) {
      Bind(insert.get(), r);
      rc = sqlite3_step(insert.get());
      if (rc != SQLITE_DONE) return fail(SqliteError(db_, rc, path_, "cannot write records"));
      sqlite3_reset(insert.get());
      sqlite3_clear_bindings(insert.get());
    }
  }
  const int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(SqliteError(db_, rc, path_, "cannot commit records"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RunRecord>> AccountingStore::Read(double from, double to) const {
  Statement select;
  const std::string sql = fmt::format(
      "SELECT id, {} FROM runs WHERE end_time >= ?1 AND end_time < ?2 ORDER BY id", kColumns);
  int rc = select.Prepare(db_, sql.c_str());
  if (rc != SQLITE_OK) return SqliteError(db_, rc, path_, "cannot read records");
  // SQLite keeps infinities as REAL; an open end compares as it should.
  sqlite3_bind_double(select.get(), 1, from);
  sqlite3_bind_double(select.get(), 2, to);
  std::vector<RunRecord> out;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) out.push_back(Row(select.get()));
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, path_, "cannot read records");
  return out;
}

absl::Status AccountingStore::Write(std::vector<RunRecord>& records) {
  if (records.empty()) return absl::OkStatus();
  if (auto st = Exec(db_, path_, "BEGIN IMMEDIATE", "cannot write records"); !st.ok()) return st;
  auto fail = [&](absl::Status st) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  };
  std::vector<int64_t> ids;
  {
    Statement insert, update;
    std::string sql = fmt::format("INSERT INTO runs ({}) VALUES ({})", kColumns, Placeholders());
    int rc = insert.Prepare(db_, sql.c_str());
    sql = fmt::format("UPDATE runs SET ({}) = ({}) WHERE id = ?{}", kColumns, Placeholders(),
                      kNumColumns + 1);
    if (rc == SQLITE_OK) rc = update.Prepare(db_, sql.c_str());
    if (rc != SQLITE_OK) return fail(SqliteError(db_, rc, path_, "cannot write records"));
    for (const RunRecord& r : records) {
      sqlite3_stmt* st = r.id > 0 ? update.get() : insert.get();
      Bind(st, r);
      if (r.id > 0) sqlite3_bind_int64(st, kNumColumns + 1, r.id);
      rc = sqlite3_step(st);
      if (rc != SQLITE_DONE) return fail(SqliteError(db_, rc, path_, "cannot write records"));
      if (r.id > 0 && sqlite3_changes(db_) != 1) {
        return fail(absl::NotFoundError(fmt::format(
            "accounting store {}: record {} ({}/{}) is gone", path_, r.id, r.ns, r.name)));
      }
      ids.push_back(r.id > 0 ? r.id : sqlite3_last_insert_rowid(db_));
      sqlite3_reset(st);
      sqlite3_clear_bindings(st);
    }
  }
  const int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(SqliteError(db_, rc, path_, "cannot commit records"));
  for (size_t i = 0; i < records.size(); ++i) records[i].id = ids[i];
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RunRecord>> AccountingStore::ReadOpen(const std::string& source) const {
  Statement select;
  const std::string sql = fmt::format(
      "SELECT id, {} FROM runs WHERE source = ?1 AND state = 'running' AND run_key IS NOT NULL "
      "ORDER BY id",
      kColumns);
  int rc = select.Prepare(db_, sql.c_str());
  if (rc != SQLITE_OK) return SqliteError(db_, rc, path_, "cannot read open runs");
  sqlite3_bind_text(select.get(), 1, source.data(), static_cast<int>(source.size()),
                    SQLITE_TRANSIENT);
  std::vector<RunRecord> out;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) out.push_back(Row(select.get()));
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, path_, "cannot read open runs");
  return out;
}

void StoreWriter::Add(RunRecord record) {
  if (!status_.ok()) return;
  pending_.push_back(std::move(record));
  if (pending_.size() >= batch_size_) Flush();
}

void StoreWriter::Flush() {
  if (!status_.ok() || pending_.empty()) return;
  status_ = store_.Append(pending_);
  if (status_.ok()) written_ += static_cast<int64_t>(pending_.size());
  pending_.clear();
}

absl::Status StoreWriter::Finish() {
  Flush();
  return status_;
}

}  // namespace tessera::accounting
