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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "accounting/record.h"

struct sqlite3;

namespace tessera::accounting {

struct StoreOptions {
  // Open an existing store for reading only (the report): nothing is created or migrated; a file
  // without this build's schema is an error.
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

  sqlite3* const db_;
  const std::string path_;
};

// Buffers records and appends them to a store in batches of `batch_size`, one transaction each.
// After the first error it keeps that error and drops what comes; Finish writes what is left and
// returns the first error. A caller that goes on after an error loses only the records of
// batches not written (the ones before are committed).
//
// Thread-safety: not thread-safe.
class StoreWriter : public RecordSink {
 public:
  explicit StoreWriter(AccountingStore& store, size_t batch_size = 512)
      : store_(store), batch_size_(batch_size) {}
  void Add(RunRecord record) override;
  [[nodiscard]] absl::Status Finish();
  int64_t written() const { return written_; }

 private:
  void Flush();

  AccountingStore& store_;
  const size_t batch_size_;
  std::vector<RunRecord> pending_;
  absl::Status status_;
  int64_t written_ = 0;
};

}  // namespace tessera::accounting
