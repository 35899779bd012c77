// `neuron-conform dashboard`: the nightly dashboard over a store's whole history.
#include "Dashboard.h"
#include "commands/Commands.h"
#include "record/Store.h"

#include <fmt/format.h>

namespace conform {

int dashboard_command(const DashboardOptions& o) {
  Store store(o.db, /*create=*/false);
  const auto model = build_dashboard(store, o.db, o.suite, o.out);
  write_dashboard(model, o.out);
  fmt::print("dashboard of {} run(s) of suite '{}': {}/index.html\n", model["runs"].size(),
             model["suite"].get<std::string>(), o.out);
  return 0;
}

}  // namespace conform
