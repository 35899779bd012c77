#include "record/Sqlite.h"

#include <fmt/format.h>

#include <cstring>

namespace conform {

Database::Database(const std::string& path, bool create) : path_(path) {
  sqlite3* raw = nullptr;
  const int flags =
      SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  db_.reset(raw);
  if (rc != SQLITE_OK) {
    throw StoreError(fmt::format("cannot open database {}: {}", path,
                                 raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
}

std::string Database::error_message() const {
  // SQLite's words for a failed write are only "disk I/O error": say what it means, with what the
  // system said when SQLite kept it.
  const int code = sqlite3_extended_errcode(db_.get());
  const int system = sqlite3_system_errno(db_.get());
  const std::string message = sqlite3_errmsg(db_.get());
  if (code == SQLITE_IOERR_WRITE || code == SQLITE_FULL || code == SQLITE_IOERR_FSYNC)
    return fmt::format("{} (writing failed{}: is the disk full, or a file size limit reached?)",
                       message, system ? fmt::format(": {}", std::strerror(system)) : "");
  if (system != 0 && ((code & 0xff) == SQLITE_IOERR || (code & 0xff) == SQLITE_CANTOPEN))
    return fmt::format("{} ({})", message, std::strerror(system));
  return message;
}

void Database::exec(std::string_view sql) {
  char* message = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    sqlite3_free(message);  // error_message() says the same, and what the system said
    const std::string why = error_message();
    throw StoreError(fmt::format("{}: {}", path_, why));
  }
}

Statement Database::prepare(std::string_view sql) {
  return Statement(*this, sql);
}

Statement::Statement(const Database& db, std::string_view sql) : db_(&db) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr) !=
      SQLITE_OK) {
    throw StoreError(fmt::format("{}: {} (in: {})", db.path(), db.error_message(), sql));
  }
  stmt_.reset(raw);
}

Statement& Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_.get(), index, value.data(), static_cast<int>(value.size()),
                    SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_.get(), index, value);
  return *this;
}
Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_.get(), index, value);
  return *this;
}
Statement& Statement::bind(int index, std::nullopt_t) {
  sqlite3_bind_null(stmt_.get(), index);
  return *this;
}
Statement& Statement::bind(int index, const std::optional<std::string>& value) {
  return value ? bind(index, std::string_view(*value)) : bind(index, std::nullopt);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw StoreError(fmt::format("{}: {}", db_->path(), db_->error_message()));
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_.get(), column);
  return p ? reinterpret_cast<const char*>(p) : "";
}
std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}
std::int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}
double Statement::real(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}
bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

Transaction::Transaction(Database& db, Access access) : db_(db) {
  db_.exec(access == Access::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {
      // The connection reports its state on the next statement.
    }
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace conform
