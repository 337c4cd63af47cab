#include "bench/harness/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace fencecheck::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The records of CSV text: quoted fields may hold commas and line breaks (redis-benchmark
// quotes the command, script and all, as its test name), "" stands for one quote; a line
// break outside quotes ends a record. Blank lines give no record.
std::vector<std::vector<std::string>> csv_records(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false, any = false;
  auto end_record = [&] {
    if (any || !cur.empty()) {
      fields.push_back(std::move(cur));
      records.push_back(std::move(fields));
    }
    fields.clear();
    cur.clear();
    any = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c != '"') {
        cur += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        cur += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      fields.push_back(std::move(cur));
      cur.clear();
      any = true;
    } else if (c == '\n') {
      end_record();
    } else if (c != '\r') {
      cur += c;
    }
  }
  end_record();
  return records;
}

double number_field(const std::vector<std::string>& header, const std::vector<std::string>& values,
                    const std::string& name) {
  auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) throw std::runtime_error("redis-benchmark CSV has no \"" + name + "\" column");
  std::size_t i = static_cast<std::size_t>(it - header.begin());
  if (i >= values.size()) throw std::runtime_error("redis-benchmark CSV line has no \"" + name + "\" field");
  try {
    return std::stod(values[i]);
  } catch (const std::exception&) {
    throw std::runtime_error("redis-benchmark CSV: \"" + name + "\" is not a number: '" + values[i] + "'");
  }
}

json load_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": not JSON: " + e.what());
  }
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Three significant digits or more, no exponent: 0.0123, 1.23, 123, 12345.
std::string sig3(double v) {
  if (v == 0 || !std::isfinite(v)) return fixed(v, 0);
  int digits = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return fixed(v, std::max(0, 2 - digits));
}

const char* verdict_of(int exit_code) {
  switch (exit_code) {
    case 0: return "valid";
    case 1: return "invalid";
    case 2: return "unknown";
    case 3: return "error";
    default: return "killed";
  }
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

RedisBenchmarkFigures parse_redis_benchmark_csv(const std::string& output) {
  std::vector<std::string> header;
  for (const std::vector<std::string>& fields : csv_records(output)) {
    if (header.empty()) {
      if (std::find(fields.begin(), fields.end(), "rps") != fields.end()) header = fields;
      continue;
    }
    if (fields.size() < header.size()) continue;  // a stray line between header and result
    return {number_field(header, fields, "rps"), number_field(header, fields, "p50_latency_ms"),
            number_field(header, fields, "p99_latency_ms"), number_field(header, fields, "max_latency_ms")};
  }
  throw std::runtime_error(header.empty() ? "redis-benchmark printed no CSV header with an \"rps\" column"
                                          : "redis-benchmark printed a CSV header but no result line");
}

std::uint64_t commandstat_calls(const std::string& info, const std::string& command) {
  const std::string tag = "cmdstat_" + command + ":calls=";
  std::size_t at = info.find(tag);
  if (at == std::string::npos) return 0;
  return std::strtoull(info.c_str() + at + tag.size(), nullptr, 10);
}

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

RunFigures read_run(const fs::path& dir) {
  RunFigures r;
  r.dir = dir;
  const fs::path results_file = dir / "results.json";
  json results = load_json(results_file);
  try {
    const json& run = results.at("run");
    r.test_seconds = run.at("test_seconds").get<double>();
    r.setup_seconds = run.at("setup_seconds").get<double>();
    if (run.contains("controller_cpu_seconds") && run.at("controller_cpu_seconds").is_number()) {
      r.controller_cpu_seconds = run.at("controller_cpu_seconds").get<double>();
    }
    const json& ops = results.at("health").at("ops");
    r.ok = ops.at("ok").get<std::uint64_t>();
    r.fail = ops.at("fail").get<std::uint64_t>();
    r.info = ops.at("info").get<std::uint64_t>();
    r.valid = results.value("valid", false);
  } catch (const json::exception& e) {
    throw std::runtime_error(results_file.string() + ": " + e.what());
  }
  r.runtime = load_json(dir / "config.json").value("runtime", "");

  const fs::path history_file = dir / "history.jsonl";
  std::ifstream in(history_file);
  if (!in) throw std::runtime_error("cannot read " + history_file.string());
  std::map<std::int64_t, std::int64_t> invoked_at;  // process → time of its open invoke (ns)
  std::vector<double> ms;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    try {
      json e = json::parse(line);
      const json& process = e.at("process");
      if (!process.is_number_integer()) continue;  // the nemesis
      const std::string type = e.at("type").get<std::string>();
      const std::int64_t p = process.get<std::int64_t>(), t = e.at("time").get<std::int64_t>();
      if (type == "invoke") {
        invoked_at[p] = t;
      } else if (type == "ok" || type == "fail" || type == "info") {
        auto it = invoked_at.find(p);
        if (it == invoked_at.end()) continue;
        ms.push_back(static_cast<double>(t - it->second) / 1e6);
        invoked_at.erase(it);
      }
    } catch (const json::exception& e) {
      throw std::runtime_error(history_file.string() + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  std::sort(ms.begin(), ms.end());
  r.latency = {ms.size(), percentile(ms, 0.50), percentile(ms, 0.90), percentile(ms, 0.99),
               ms.empty() ? 0 : ms.back()};
  return r;
}

double Row::fc_ok_per_s() const {
  return fc.test_seconds > 0 ? static_cast<double>(fc.ok) / fc.test_seconds : 0;
}

double Row::ratio() const { return rb.rps > 0 ? fc_ok_per_s() / rb.rps : 0; }

std::optional<double> Row::cpu_us_per_op() const {
  const std::uint64_t ops = fc.ok + fc.fail + fc.info;
  if (!fc.controller_cpu_seconds || ops == 0) return std::nullopt;
  return *fc.controller_cpu_seconds * 1e6 / static_cast<double>(ops);
}

std::string markdown(const std::vector<Row>& rows) {
  std::ostringstream out;
  out << "| clients | fencecheck ok ops/s | redis-benchmark req/s | ratio | controller CPU µs/op "
         "| op latency p50/p90/p99/max ms | setup s |\n"
      << "|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
    auto cpu = r.cpu_us_per_op();
    const Latencies& l = r.fc.latency;
    out << "| " << r.clients << (r.trustworthy() ? "" : " *") << " | " << fixed(r.fc_ok_per_s(), 0) << " | "
        << fixed(r.rb.rps, 0) << " | " << sig3(r.ratio()) << " | " << (cpu ? fixed(*cpu, 0) : "n/a") << " | "
        << sig3(l.p50_ms) << " / " << sig3(l.p90_ms) << " / " << sig3(l.p99_ms) << " / " << sig3(l.max_ms)
        << " | " << fixed(r.fc.setup_seconds, 2) << " |\n";
  }
  out << "\n";
  bool any_cpu_missing = false;
  for (const Row& r : rows) {
    any_cpu_missing = any_cpu_missing || !r.fc.controller_cpu_seconds;
    out << (r.trustworthy() ? "- " : "* ") << r.clients << " clients: redis-benchmark " << r.rb_requests
        << " EVALs in " << fixed(r.rb_seconds, 2) << " s (p50 " << sig3(r.rb.p50_ms) << " ms, p99 "
        << sig3(r.rb.p99_ms) << " ms; " << fixed(100 * r.rb_incr_share, 1)
        << "% took the SET-then-INCR path); fencecheck " << verdict_of(r.fc_exit) << " (exit " << r.fc_exit
        << "), runtime " << (r.fc.runtime.empty() ? "?" : r.fc.runtime) << ": ok " << r.fc.ok << ", fail "
        << r.fc.fail << ", info " << r.fc.info << " in " << fixed(r.fc.test_seconds, 2) << " s of test, "
        << r.fc.latency.count << " ops timed";
    if (!r.trustworthy()) out << " — NOT TRUSTWORTHY: a no-fault run must be valid";
    if (r.kept) out << "; run kept in " << r.fc.dir.string();
    out << "\n";
  }
  if (any_cpu_missing) {
    out << "- controller CPU n/a: this fencecheck's results.json has no run.controller_cpu_seconds "
           "(an older build)\n";
  }
  return out.str();
}

json to_json(const std::vector<Row>& rows) {
  json list = json::array();
  for (const Row& r : rows) {
    const Latencies& l = r.fc.latency;
    list.push_back({
        {"clients", r.clients},
        {"trustworthy", r.trustworthy()},
        {"fencecheck_ok_ops_per_s", r.fc_ok_per_s()},
        {"redis_benchmark_req_per_s", r.rb.rps},
        {"ratio", r.ratio()},
        {"controller_cpu_us_per_op", opt(r.cpu_us_per_op())},
        {"op_latency_ms", {{"p50", l.p50_ms}, {"p90", l.p90_ms}, {"p99", l.p99_ms}, {"max", l.max_ms},
                           {"count", l.count}}},
        {"setup_seconds", r.fc.setup_seconds},
        {"fencecheck",
         {{"exit", r.fc_exit}, {"verdict", verdict_of(r.fc_exit)}, {"runtime", r.fc.runtime},
          {"test_seconds", r.fc.test_seconds}, {"controller_cpu_seconds", opt(r.fc.controller_cpu_seconds)},
          {"ops", {{"ok", r.fc.ok}, {"fail", r.fc.fail}, {"info", r.fc.info}}},
          {"run_dir", r.kept ? json(r.fc.dir.string()) : json(nullptr)}}},
        {"redis_benchmark",
         {{"requests", r.rb_requests}, {"seconds", r.rb_seconds}, {"p50_ms", r.rb.p50_ms},
          {"p99_ms", r.rb.p99_ms}, {"max_ms", r.rb.max_ms}, {"set_then_incr_share", r.rb_incr_share}}},
    });
  }
  return {{"rows", list}};
}

}  // namespace fencecheck::bench
