#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace conform {

// A thin RAII layer over SQLite's C API: a connection, prepared statements, transactions.
// Errors become StoreError carrying SQLite's message.
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Statement;

class Database {
 public:
  // Opens (and with `create`, creates) the file. Throws StoreError naming the path.
  Database(const std::string& path, bool create);
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  sqlite3* handle() const { return db_.get(); }
  // Rows the last INSERT, UPDATE or DELETE changed.
  int changes() const { return sqlite3_changes(db_.get()); }
  const std::string& path() const { return path_; }
  std::string error_message() const;

 private:
  struct Close {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::string path_;
  std::unique_ptr<sqlite3, Close> db_;
};

class Statement {
 public:
  Statement(const Database& db, std::string_view sql);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::nullopt_t);
  Statement& bind(int index, const std::optional<std::string>& value);
  // Steps once: true while a row is available.
  bool step();
  // Runs to completion and resets for reuse.
  void run();
  void reset();
  std::string text(int column) const;
  std::optional<std::string> optional_text(int column) const;
  std::int64_t integer(int column) const;
  double real(int column) const;
  bool is_null(int column) const;

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
  };
  const Database* db_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
};

// BEGIN IMMEDIATE on construction (kRead: a deferred BEGIN, so that the SELECTs inside read one
// snapshot while a running harness keeps writing); ROLLBACK unless commit() was called.
class Transaction {
 public:
  enum class Access { kWrite, kRead };
  explicit Transaction(Database& db, Access access = Access::kWrite);
  ~Transaction();
  void commit();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace conform
