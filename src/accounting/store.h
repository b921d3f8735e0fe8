// The accounting store: an embedded SQLite database of RunRecords (docs/accounting.md), in WAL
// mode so that a report can read while a writer appends.
//
// Usage: Open(path) creates the file or migrates it to this build's schema (refusing a newer
// one), Append writes a batch of records in one transaction, Read returns the records whose
// run ended in a time range. Every failure (a directory that cannot be written, a file that is
// not SQLite, a full disk) is a status naming the file; nothing here aborts.
//
// A record committed by Append is on disk (synchronous = FULL) and survives a crash of the
// writer. Several processes may open one file: SQLite's locks serialize writers (each waits up
// to five seconds), readers never block.
//
// Thread-safety: not thread-safe; one AccountingStore per thread (or a mutex around it).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "accounting/record.h"

struct sqlite3;

namespace tessera::accounting {

struct StoreOptions {
  // Open an existing store for reading only (the report): nothing is created, migrated or
  // written; a file without a schema this build reads (its own, or version 2) is an error. Where
  // SQLite cannot share the file's write-ahead log (a log beside it in a directory this user
  // cannot write, a read-only file system), the store reads a copy of the file and its log, made
  // in the temporary directory and removed with the store.
  bool read_only = false;
  // > 0: the database may not grow beyond this many pages (SQLite's max_page_count), as if the
  // disk were full there. For tests of a full disk.
  int64_t max_pages = 0;
};

class AccountingStore {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AccountingStore>> Open(
      const std::string& path, StoreOptions options = {});
  ~AccountingStore();
  AccountingStore(const AccountingStore&) = delete;
  AccountingStore& operator=(const AccountingStore&) = delete;

  // Writes `records` in one transaction: all of them or, on error, none. Their `id` is ignored
  // (the store numbers rows).
  [[nodiscard]] absl::Status Append(const std::vector<RunRecord>& records);

  // As Append, deleting first, in the same transaction, the records of the run `run_id` (none
  // when it is empty) written before: a re-run of the same scenario replaces its records.
  // Returns how many were deleted.
  [[nodiscard]] absl::StatusOr<int64_t> ReplaceRun(const std::string& run_id,
                                                   const std::vector<RunRecord>& records);

  // Writes `records` in one transaction, all or none: those with `id` 0 are inserted (and get
  // their row id), the others replace the row of that id (an error when it is gone). What
  // tessera serve uses to keep a run open in the store while it runs and close it at its end.
  [[nodiscard]] absl::Status Write(std::vector<RunRecord>& records);

  // The runs of `source` still open (state running, with a run_key), in the order written.
  [[nodiscard]] absl::StatusOr<std::vector<RunRecord>> ReadOpen(const std::string& source) const;

  // The records whose run ended in [from, to) (seconds since the epoch), in the order written.
  [[nodiscard]] absl::StatusOr<std::vector<RunRecord>> Read(
      double from = -std::numeric_limits<double>::infinity(),
      double to = std::numeric_limits<double>::infinity()) const;

  const std::string& path() const { return path_; }

 private:
  AccountingStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // Opens `file`, naming `path` in messages; `cannot_share` says whether a read-only open failed
  // where a copy may succeed.
  static absl::StatusOr<std::unique_ptr<AccountingStore>> OpenFile(const std::string& file,
                                                                    const std::string& path,
                                                                    const StoreOptions& options,
                                                                    bool* cannot_share);
  static absl::StatusOr<std::unique_ptr<AccountingStore>> OpenCopy(const std::string& path,
                                                                    const StoreOptions& options);
  // Inserts `records`. REQUIRES: inside a transaction.
  absl::Status Insert(const std::vector<RunRecord>& records);

  sqlite3* const db_;
  const std::string path_;
  int version_ = 0;        // the file's schema version (a report reads version 2 too)
  std::string temp_dir_;  // the copy's directory (OpenCopy), removed with the store
};

// Buffers records and appends them to a store in batches of `batch_size`, one transaction each.
// After the first error it keeps that error and drops what comes; Finish writes what is left and
// returns the first error. A caller that goes on after an error loses only the records of
// batches not written (the ones before are committed).
//
// With a `run_id` (RunId), every record gets it, and the first batch (or Finish, when there was
// none) replaces the records an earlier run of that id wrote: running the same scenario twice
// leaves one run's records, not two.
//
// Thread-safety: not thread-safe.
class StoreWriter : public RecordSink {
 public:
  explicit StoreWriter(AccountingStore& store, size_t batch_size = 512, std::string run_id = "")
      : store_(store), batch_size_(batch_size), run_id_(std::move(run_id)) {}
  void Add(RunRecord record) override;
  [[nodiscard]] absl::Status Finish();
  int64_t written() const { return written_; }
  int64_t replaced() const { return replaced_; }  // records of the earlier run deleted

 private:
  void Flush();

  AccountingStore& store_;
  const size_t batch_size_;
  const std::string run_id_;
  bool first_ = true;  // the next flush is the first
  std::vector<RunRecord> pending_;
  absl::Status status_;
  int64_t written_ = 0;
  int64_t replaced_ = 0;
};

// The identity of a run of the simulator or the replay (StoreWriter's run_id): what its results
// follow from (the content of its input files, its result-changing flags as text) hashed in
// order (64-bit FNV-1a; the same inputs give the same id on every machine), as "SOURCE:" and 16
// hex digits.
class RunId {
 public:
  void Add(std::string_view text);
  // The file's bytes, read in blocks (a trace of gigabytes is not held). False when it cannot
  // be read; its name is hashed instead.
  bool AddFile(const std::string& path);
  std::string Id(std::string_view source) const;

 private:
  void Hash(std::string_view bytes);
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace tessera::accounting
