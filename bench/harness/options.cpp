#include "bench/harness/options.h"

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

namespace fencecheck::bench {

namespace fs = std::filesystem;

const char* const kUsage = R"(Usage: harness_bench [OPTIONS]  (as root: fencecheck run uses network namespaces)
For each client count N: redis-benchmark -c N EVALing fencecheck's acquire script on a
private redis-server (~5 s), then fencecheck run --backend redis --workload lock --hold-ms 0
--keys N --concurrency N --nemesis none; prints both side by side (markdown).
  --fencecheck PATH  the fencecheck binary [../../harness/fencecheck from this program]
  --clients LIST     comma-separated client counts [5,20,50]
  --seconds S        fencecheck's --time-limit per client count [20]
  --requests M       redis-benchmark -n (default: calibrated to ~5 s by a short first run)
  --json FILE        also write the figures as JSON to FILE
  --keep DIR         keep the fencecheck runs: DIR is their --store (default: a temp dir)
  --help             this text
Exit: 0 every run valid, 1 some run not valid (row marked *), 2 bad options, 3 a step
failed, 130 interrupted.
)";

namespace {

std::uint64_t positive(const std::string& option, const std::string& text, std::uint64_t max) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    if (!text.empty() && text[0] != '-') v = std::stoull(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || v == 0 || v > max) {
    throw UsageError(option + ": '" + text + "' is not an integer in 1.." + std::to_string(max));
  }
  return v;
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  o.fencecheck = (fs::read_symlink("/proc/self/exe").parent_path() / "../../harness/fencecheck").lexically_normal();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + arg + "'");
    bool inline_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
      inline_value = true;
    }
    static const std::set<std::string> known = {"--fencecheck", "--clients", "--seconds",
                                                "--requests", "--json", "--keep"};
    if (!known.count(arg)) throw UsageError("unknown option " + arg);
    if (!inline_value) {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      value = argv[++i];
    }
    if (value.empty()) throw UsageError(arg + " needs a non-empty value");
    if (arg == "--fencecheck") {
      o.fencecheck = value;
    } else if (arg == "--clients") {
      o.clients.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');) {
        o.clients.push_back(static_cast<int>(positive("--clients", item, 1000)));
      }
      if (value.back() == ',') throw UsageError("--clients: '" + value + "' ends in a comma");
    } else if (arg == "--seconds") {
      char* end = nullptr;
      o.seconds = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !std::isfinite(o.seconds) || o.seconds <= 0 || o.seconds > 86400) {
        throw UsageError("--seconds: '" + value + "' is not a number of seconds in (0, 86400]");
      }
    } else if (arg == "--requests") {
      o.requests = positive("--requests", value, 1000000000);
    } else if (arg == "--json") {
      o.json_file = value;
    } else {
      o.keep = value;
    }
  }
  return o;
}

}  // namespace fencecheck::bench
