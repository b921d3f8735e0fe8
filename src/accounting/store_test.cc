// The accounting store: records across close/reopen and a crash of the writer, the schema's
// migrations and the refusal of a newer one, and the errors of a store that cannot be opened or
// written, each naming the file.
#include "accounting/store.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "accounting/schema.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace tessera::accounting {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("tessera-acct-") + info->name() + "-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

RunRecord Record(const std::string& name, double end, std::optional<double> dollars) {
  RunRecord r;
  r.source = "sim";
  r.ns = "team";
  r.name = name;
  r.local_queue = "lq";
  r.cluster_queue = "cq";
  r.labels = R"({"team":"alpha"})";
  r.priority = 7;
  r.pods = 2;
  r.gpus = 8;
  r.gpu_model = "NVIDIA-A100-SXM4-80GB";
  r.flavors = "on-demand";
  r.submit = end - 200;
  r.start = end - 100;
  r.end = end;
  r.gpu_hours = 8 * 100 / 3600.0;
  r.allocated_dollars = dollars;
  return r;
}

// Raw SQLite, for what the store itself would not do: set up old, foreign and future files.
void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  sqlite3_close(db);
}

int RawInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const int v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

TEST_F(StoreTest, RecordsSurviveCloseAndReopen) {
  const std::string path = Path("acct.db");
  {
    auto store = AccountingStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Append({Record("a", 1000, 12.5), Record("b", 2000, std::nullopt)}).ok());
  }
  {
    auto store = AccountingStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    RunRecord c = Record("c", 3000, 1);
    c.how = RunEnd::kPreempted;
    c.reason = "preempted by team/x";
    c.preemptions = 1;
    c.local_queue.clear();  // none: NULL in the store, empty again when read
    ASSERT_TRUE((*store)->Append({c}).ok());
  }
  auto store = AccountingStore::Open(path, {.read_only = true});
  ASSERT_TRUE(store.ok()) << store.status();
  auto all = (*store)->Read();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  const RunRecord& a = (*all)[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.ns, "team");
  EXPECT_EQ(a.labels, R"({"team":"alpha"})");
  EXPECT_EQ(a.priority, 7);
  EXPECT_EQ(a.gpu_model, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(a.flavors, "on-demand");
  EXPECT_DOUBLE_EQ(a.gpus, 8);
  EXPECT_DOUBLE_EQ(a.end, 1000);
  EXPECT_EQ(a.how, RunEnd::kFinished);
  EXPECT_EQ(a.allocated_dollars, 12.5);
  EXPECT_FALSE((*all)[1].allocated_dollars.has_value());  // no prices: NULL, not 0
  EXPECT_FALSE((*all)[1].utilization.has_value());
  EXPECT_EQ((*all)[2].how, RunEnd::kPreempted);
  EXPECT_EQ((*all)[2].reason, "preempted by team/x");
  EXPECT_EQ((*all)[2].local_queue, "");
  EXPECT_EQ(RawInt(path, "SELECT count(*) FROM runs WHERE local_queue IS NULL"), 1);
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), kSchemaVersion);
}

// A writer that dies without closing: what it committed is there when the file is opened again
// (the WAL is replayed).
TEST_F(StoreTest, CommittedRecordsSurviveACrashOfTheWriter) {
  const std::string path = Path("crash.db");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = AccountingStore::Open(path);
    if (!store.ok() || !(*store)->Append({Record("a", 10, 1), Record("b", 20, 2)}).ok()) _exit(3);
    store->release();  // never closed: the process ends as a crash would end it
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::exists(path + "-wal"));  // not checkpointed: the records are only in the WAL
  auto store = AccountingStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Append({Record("c", 30, 3)}).ok());
  auto all = (*store)->Read();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].name, "a");
  EXPECT_EQ((*all)[2].name, "c");
}

TEST_F(StoreTest, ReadSelectsRunsThatEndedInTheHalfOpenRange) {
  auto store = AccountingStore::Open(Path("range.db"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)
                  ->Append({Record("before", 99.5, 1), Record("at-from", 100, 1),
                            Record("inside", 150, 1), Record("at-to", 200, 1)})
                  .ok());
  auto got = (*store)->Read(100, 200);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].name, "at-from");
  EXPECT_EQ((*got)[1].name, "inside");
}

TEST_F(StoreTest, EmptyDatabaseIsMigratedToTheCurrentSchema) {
  const std::string path = Path("empty.db");
  std::ofstream(path).close();  // zero bytes: SQLite's empty database, version 0
  auto store = AccountingStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->Append({Record("a", 1, 1)}).ok());
  store->reset();
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(RawInt(path, "PRAGMA application_id"), kApplicationId);
}

// The path from an older version: a store with records, migrated by a (test-only) next step,
// keeps them; the current build then refuses the newer file and leaves it as it is.
TEST_F(StoreTest, MigrationsRunInOrderKeepRecordsAndANewerFileIsRefused) {
  const std::string path = Path("v1.db");
  {
    auto store = AccountingStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Append({Record("a", 1, 1), Record("b", 2, 2)}).ok());
  }
  std::vector<Migration> steps(Migrations().begin(), Migrations().end());
  steps.push_back(
      {kSchemaVersion + 1, "ALTER TABLE runs ADD COLUMN cluster TEXT NOT NULL DEFAULT 'x'"});
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_TRUE(Migrate(db, path, steps).ok());
    EXPECT_TRUE(Migrate(db, path, steps).ok());  // nothing left to do
    sqlite3_close(db);
  }
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), kSchemaVersion + 1);
  EXPECT_EQ(RawInt(path, "SELECT count(*) FROM runs WHERE cluster = 'x'"), 2);

  for (bool read_only : {false, true}) {
    auto store = AccountingStore::Open(path, {.read_only = read_only});
    ASSERT_FALSE(store.ok());
    EXPECT_NE(store.status().message().find(path), std::string::npos) << store.status();
    EXPECT_NE(store.status().message().find(
                  fmt::format("schema version {} is newer", kSchemaVersion + 1)),
              std::string::npos)
        << store.status();
  }
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), kSchemaVersion + 1);
  EXPECT_EQ(RawInt(path, "SELECT count(*) FROM runs"), 2);
}

// A version-1 file (as tessera sim wrote it before serve's columns) with records is migrated in
// place: its records stay, with no effective cost and no run key.
TEST_F(StoreTest, VersionOneStoreIsMigratedToVersionTwoKeepingItsRecords) {
  const std::string path = Path("v1.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(Migrate(db, path, Migrations().first(1)).ok());
    sqlite3_close(db);
  }
  RawExec(
      path,
      "INSERT INTO runs (source, namespace, name, submit_time, start_time, end_time, state, "
      "gpu_hours, allocated_dollars) VALUES ('sim', 'ns', 'old', 0, 10, 3610, 'finished', 2, 4)");
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), 1);
  auto store = AccountingStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), kSchemaVersion);
  auto all = (*store)->Read();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].name, "old");
  EXPECT_EQ((*all)[0].allocated_dollars, 4);
  EXPECT_FALSE((*all)[0].effective_dollars.has_value());
  EXPECT_EQ((*all)[0].run_key, "");
}

// A run of the simulator or the replay has an identity (issue 31): writing the same run again
// replaces its records, in the transaction of its first batch, instead of adding a second copy
// (which doubled every figure of `report cost`). Records of other runs and serve's stay.
TEST_F(StoreTest, ARunWrittenAgainReplacesItsRecords) {
  const std::string path = Path("rerun.db");
  auto store = AccountingStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Append({Record("serve-run", 50, 1)}).ok());  // no run id: serve's
  RunId a, b;
  a.Add("scenario A");
  b.Add("scenario B");
  EXPECT_EQ(a.Id("sim"), [] { RunId same; same.Add("scenario A"); return same.Id("sim"); }());
  EXPECT_NE(a.Id("sim"), b.Id("sim"));
  EXPECT_NE(a.Id("sim"), a.Id("sim replay"));
  for (int round = 0; round < 3; ++round) {
    StoreWriter writer(**store, /*batch_size=*/2, a.Id("sim"));
    for (int i = 0; i < 5; ++i) writer.Add(Record(fmt::format("a{}", i), 100 + i, 2));
    ASSERT_TRUE(writer.Finish().ok());
    EXPECT_EQ(writer.written(), 5);
    EXPECT_EQ(writer.replaced(), round == 0 ? 0 : 5);
  }
  StoreWriter other(**store, 512, b.Id("sim"));
  other.Add(Record("b0", 200, 3));
  ASSERT_TRUE(other.Finish().ok());
  EXPECT_EQ(other.replaced(), 0);
  auto all = (*store)->Read();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 7u);  // serve's, A's five once, B's
  EXPECT_EQ((*all)[0].run_id, "");
  EXPECT_EQ((*all)[1].run_id, a.Id("sim"));
  EXPECT_EQ(all->back().run_id, b.Id("sim"));
  // A re-run that writes nothing still leaves no stale copy of the earlier one.
  StoreWriter empty(**store, 512, b.Id("sim"));
  ASSERT_TRUE(empty.Finish().ok());
  EXPECT_EQ(empty.replaced(), 1);
}

// A report reads a store of version 2 (as serve wrote it before run ids) without migrating it:
// it may have no right to write there.
TEST_F(StoreTest, AReportReadsAVersionTwoStoreWithoutMigratingIt) {
  const std::string path = Path("v2.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(Migrate(db, path, Migrations().first(2)).ok());
    sqlite3_close(db);
  }
  RawExec(path,
          "INSERT INTO runs (source, namespace, name, submit_time, start_time, end_time, state) "
          "VALUES ('serve', 'ns', 'old', 0, 10, 3610, 'finished')");
  auto store = AccountingStore::Open(path, {.read_only = true});
  ASSERT_TRUE(store.ok()) << store.status();
  auto all = (*store)->Read();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].name, "old");
  EXPECT_EQ((*all)[0].run_id, "");
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), 2);
}

// serve's open runs: inserted with a run key, read back as open, updated in place by id, and no
// longer open once closed; an update of a row that is gone is an error and writes nothing.
TEST_F(StoreTest, OpenRunsAreWrittenUpdatedInPlaceAndClosed) {
  const std::string path = Path("serve.db");
  auto store = AccountingStore::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<RunRecord> runs = {Record("a", 100, 1.0), Record("b", 100, 2.0)};
  for (RunRecord& r : runs) {
    r.source = "serve";
    r.how = RunEnd::kRunning;
    r.run_key = "Job:team/" + r.name;
  }
  runs[1].effective_dollars = 0.5;
  ASSERT_TRUE((*store)->Write(runs).ok());
  EXPECT_GT(runs[0].id, 0);
  EXPECT_GT(runs[1].id, runs[0].id);
  auto open = (*store)->ReadOpen("serve");
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 2u);
  EXPECT_EQ((*open)[1].run_key, "Job:team/b");
  EXPECT_EQ((*open)[1].effective_dollars, 0.5);
  EXPECT_TRUE((*store)->ReadOpen("sim")->empty());

  runs[0].end = 200;
  runs[0].gpu_hours = 3;
  runs[0].how = RunEnd::kFinished;
  std::vector<RunRecord> close = {runs[0]};
  ASSERT_TRUE((*store)->Write(close).ok());
  EXPECT_EQ(close[0].id, runs[0].id);
  open = (*store)->ReadOpen("serve");
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].name, "b");
  auto all = (*store)->Read();
  ASSERT_EQ(all->size(), 2u);  // updated, not appended
  EXPECT_EQ((*all)[0].gpu_hours, 3);
  EXPECT_EQ((*all)[0].how, RunEnd::kFinished);

  std::vector<RunRecord> gone = {runs[1], runs[0]};
  gone[0].gpu_hours = 99;
  gone[1].id = 12345;
  absl::Status st = (*store)->Write(gone);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("record 12345"), std::string::npos) << st;
  EXPECT_NE((*store)->Read()->at(1).gpu_hours, 99);  // the whole transaction rolled back
}

TEST_F(StoreTest, FutureVersionIsRefusedAndLeftUntouched) {
  const std::string path = Path("future.db");
  RawExec(path, "CREATE TABLE runs_v9 (x); PRAGMA user_version = 9");
  auto store = AccountingStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.status().message(),
            "accounting store " + path +
                ": schema version 9 is newer than this tessera understands (3); it was written by "
                "a newer Tessera and is left untouched: use that version");
  EXPECT_EQ(RawInt(path, "PRAGMA user_version"), 9);
  EXPECT_EQ(RawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'runs'"), 0);
}

TEST_F(StoreTest, ForeignDatabaseWithoutVersionIsRefused) {
  const std::string path = Path("foreign.db");
  RawExec(path, "CREATE TABLE orders (id INTEGER)");
  auto store = AccountingStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(path + ": holds 1 table(s) but no schema version"),
            std::string::npos)
      << store.status();
  EXPECT_EQ(RawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'runs'"), 0);
}

TEST_F(StoreTest, NonSqliteFileIsAnErrorNamingIt) {
  const std::string path = Path("notes.txt");
  const std::string text = "these are not the records you are looking for\n";
  std::ofstream(path) << text;
  for (bool read_only : {false, true}) {
    auto store = AccountingStore::Open(path, {.read_only = read_only});
    ASSERT_FALSE(store.ok());
    EXPECT_NE(store.status().message().find("accounting store " + path + ":"), std::string::npos)
        << store.status();
    EXPECT_NE(store.status().message().find("not an SQLite database"), std::string::npos)
        << store.status();
  }
  std::ifstream in(path);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, text);  // not clobbered
}

TEST_F(StoreTest, PathThatCannotBeCreatedIsAnErrorNamingIt) {
  // A missing directory, and a directory where the file should be (root ignores permission
  // bits, so a read-only directory would not fail under root).
  for (const std::string& path : {Path("no/such/dir/acct.db"), Path("")}) {
    auto store = AccountingStore::Open(path);
    ASSERT_FALSE(store.ok()) << path;
    EXPECT_NE(store.status().message().find("accounting store " + path + ": cannot open"),
              std::string::npos)
        << store.status();
  }
  auto missing = AccountingStore::Open(Path("missing.db"), {.read_only = true});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(Path("missing.db") + ": cannot open it for reading"),
            std::string::npos)
      << missing.status();
  EXPECT_FALSE(fs::exists(Path("missing.db")));  // reading creates nothing
}

TEST_F(StoreTest, FullDiskIsAnErrorAndEarlierBatchesStay) {
  const std::string path = Path("full.db");
  int64_t written = 0;
  {
    auto store = AccountingStore::Open(path, {.max_pages = 12});
    ASSERT_TRUE(store.ok()) << store.status();
    StoreWriter writer(**store, /*batch_size=*/20);
    for (int i = 0; i < 2000; ++i) writer.Add(Record("job-" + std::to_string(i), i, 1));
    absl::Status st = writer.Finish();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(st.message().find("accounting store " + path + ": cannot"), std::string::npos) << st;
    EXPECT_NE(st.message().find("full"), std::string::npos) << st;
    written = writer.written();
    EXPECT_GT(written, 0);
    EXPECT_LT(written, 2000);
    EXPECT_EQ(written % 20, 0);  // whole batches: the failed one left nothing behind
  }
  auto store = AccountingStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto all = (*store)->Read();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(static_cast<int64_t>(all->size()), written);
}

}  // namespace
}  // namespace tessera::accounting
