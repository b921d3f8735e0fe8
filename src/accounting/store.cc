#include "accounting/store.h"

#include <sqlite3.h>

#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "accounting/schema.h"
#include "accounting/sqlite_util.h"
#include "fmt/format.h"

namespace tessera::accounting {
namespace {

constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kColumns =
    "source, namespace, name, local_queue, cluster_queue, cohort, labels, priority, attempt, "
    "pods, gpus, gpu_model, flavors, submit_time, start_time, end_time, state, reason, "
    "preemptions, gpu_hours, allocated_dollars, utilization, effective_dollars, run_key, run_id";
constexpr int kNumColumns = 25;

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
  BindText(st, ++i, r.run_id, true);
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
  r.run_id = Text(st, c++);
  return r;
}

// The oldest schema a report reads without migrating it: version 2 lacks only run_id, read as
// NULL (a report must not need write access to a store serve wrote).
constexpr int kOldestReadableVersion = 2;

// The columns to select from a store of `version`: those it lacks as NULL.
std::string SelectColumns(int version) {
  std::string cols = kColumns;
  if (version < 3) cols.replace(cols.rfind("run_id"), 6, "NULL");
  return cols;
}

// A store opened for reading must already have this build's schema, or one it can read.
absl::Status CheckReadable(sqlite3* db, const std::string& path, int& version) {
  if (auto st = ReadSchemaVersion(db, path, version); !st.ok()) return st;
  if (version >= kOldestReadableVersion && version <= kSchemaVersion) return absl::OkStatus();
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
  bool cannot_share = false;
  auto store = OpenFile(path, path, options, &cannot_share);
  if (store.ok() || !options.read_only || !cannot_share) return store;
  // Read-only, and SQLite cannot share the write-ahead log with its writer (a log left beside
  // the file with no -shm, in a directory this user cannot write, or a file system mounted
  // read-only). A report needs no sharing: it reads a copy.
  auto copy = OpenCopy(path, options);
  return copy.ok() ? std::move(copy) : std::move(store);
}

absl::StatusOr<std::unique_ptr<AccountingStore>> AccountingStore::OpenFile(
    const std::string& file, const std::string& path, const StoreOptions& options,
    bool* cannot_share) {
  sqlite3* db = nullptr;
  const int flags =
      options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  auto can_retry = [&](int rc) {
    const int primary = rc & 0xff;
    *cannot_share = primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY ||
                    primary == SQLITE_PERM || primary == SQLITE_IOERR;
  };
  int rc = sqlite3_open_v2(file.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status st =
        SqliteError(db, rc, path,
                    options.read_only ? "cannot open it for reading" : "cannot open or create it");
    sqlite3_close(db);
    // A file that is not there is not retried: there is nothing to copy.
    if (std::FILE* f = std::fopen(file.c_str(), "rb")) {
      std::fclose(f);
      can_retry(rc);
    }
    return st;
  }
  std::unique_ptr<AccountingStore> store(new AccountingStore(db, path));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  absl::Status st = options.read_only ? CheckReadable(db, path, store->version_)
                                      : SetUpForWriting(db, path, options);
  if (!st.ok()) {
    if (options.read_only) can_retry(sqlite3_extended_errcode(db));
    return st;
  }
  if (!options.read_only) store->version_ = kSchemaVersion;
  return store;
}

absl::StatusOr<std::unique_ptr<AccountingStore>> AccountingStore::OpenCopy(
    const std::string& path, const StoreOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string dir = (fs::temp_directory_path(ec) / "tessera-store-XXXXXX").string();
  if (ec || ::mkdtemp(dir.data()) == nullptr)
    return absl::UnavailableError(fmt::format("accounting store {}: no temporary directory", path));
  const fs::path copy = fs::path(dir) / "store.db";
  fs::copy_file(path, copy, ec);
  std::error_code no_log;
  if (!ec && fs::exists(path + "-wal", no_log))
    fs::copy_file(path + "-wal", copy.string() + "-wal", ec);
  if (ec) {
    fs::remove_all(dir, ec);
    return absl::UnavailableError(
        fmt::format("accounting store {}: cannot copy it: {}", path, ec.message()));
  }
  // Read-write, so that SQLite can apply the copied log; the copy is never written otherwise.
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(copy.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<AccountingStore> store(new AccountingStore(db, path));
  store->temp_dir_ = dir;  // removed with the store, whatever happens next
  if (rc != SQLITE_OK) return SqliteError(db, rc, path, "cannot open it for reading");
  sqlite3_extended_result_codes(db, 1);
  if (auto st = CheckReadable(db, path, store->version_); !st.ok()) return st;
  return store;
}

AccountingStore::~AccountingStore() {
  sqlite3_close(db_);
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  }
}

absl::Status AccountingStore::Insert(const std::vector<RunRecord>& records) {
  Statement insert;
  const std::string sql = fmt::format("INSERT INTO runs ({}) VALUES ({})", kColumns, Placeholders());
  int rc = insert.Prepare(db_, sql.c_str());
  if (rc != SQLITE_OK) return SqliteError(db_, rc, path_, "cannot write records");
  for (const RunRecord& r : records) {
    Bind(insert.get(), r);
    rc = sqlite3_step(insert.get());
    if (rc != SQLITE_DONE) return SqliteError(db_, rc, path_, "cannot write records");
    sqlite3_reset(insert.get());
    sqlite3_clear_bindings(insert.get());
  }
  return absl::OkStatus();
}

absl::Status AccountingStore::Append(const std::vector<RunRecord>& records) {
  if (records.empty()) return absl::OkStatus();
  return ReplaceRun("", records).status();
}

absl::StatusOr<int64_t> AccountingStore::ReplaceRun(const std::string& run_id,
                                                    const std::vector<RunRecord>& records) {
  if (run_id.empty() && records.empty()) return 0;
  if (auto st = Exec(db_, path_, "BEGIN IMMEDIATE", "cannot write records"); !st.ok()) return st;
  auto fail = [&](absl::Status st) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  };
  int64_t replaced = 0;
  if (!run_id.empty()) {
    Statement del;
    int rc = del.Prepare(db_, "DELETE FROM runs WHERE run_id = ?1");
    if (rc == SQLITE_OK) {
      sqlite3_bind_text(del.get(), 1, run_id.data(), static_cast<int>(run_id.size()),
                        SQLITE_TRANSIENT);
      rc = sqlite3_step(del.get());
    }
    if (rc != SQLITE_DONE)
      return fail(SqliteError(db_, rc, path_, "cannot replace the records of an earlier run"));
    replaced = sqlite3_changes64(db_);
  }
  if (auto st = Insert(records); !st.ok()) return fail(st);
  const int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(SqliteError(db_, rc, path_, "cannot commit records"));
  return replaced;
}

absl::StatusOr<std::vector<RunRecord>> AccountingStore::Read(double from, double to) const {
  Statement select;
  const std::string sql = fmt::format(
      "SELECT id, {} FROM runs WHERE end_time >= ?1 AND end_time < ?2 ORDER BY id",
      SelectColumns(version_));
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
      SelectColumns(version_));
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
  if (!run_id_.empty()) record.run_id = run_id_;
  pending_.push_back(std::move(record));
  if (pending_.size() >= batch_size_) Flush();
}

void StoreWriter::Flush() {
  if (!status_.ok() || (pending_.empty() && !first_)) return;
  // The first batch replaces the earlier run's records, in its transaction: a re-run that fails
  // before writing anything leaves the earlier run whole.
  auto replaced = store_.ReplaceRun(first_ ? run_id_ : "", pending_);
  first_ = false;
  status_ = replaced.status();
  if (status_.ok()) {
    replaced_ += *replaced;
    written_ += static_cast<int64_t>(pending_.size());
  }
  pending_.clear();
}

absl::Status StoreWriter::Finish() {
  Flush();
  return status_;
}

void RunId::Hash(std::string_view bytes) {
  for (unsigned char c : bytes) {
    h_ ^= c;
    h_ *= 0x100000001b3ULL;
  }
}

void RunId::Add(std::string_view text) {
  Hash(fmt::format("\n{}:", text.size()));  // ("ab", "c") is not ("a", "bc")
  Hash(text);
}

bool RunId::AddFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    Add(path);
    return false;
  }
  Hash("\nfile:");
  std::string block(1 << 16, '\0');
  size_t n = 0;
  while ((n = std::fread(block.data(), 1, block.size(), f)) > 0) Hash({block.data(), n});
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

std::string RunId::Id(std::string_view source) const {
  return fmt::format("{}:{:016x}", source, h_);
}

}  // namespace tessera::accounting
