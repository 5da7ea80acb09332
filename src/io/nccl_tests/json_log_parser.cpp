// The `-J file.json` output (nccl-tests 2.17+): one run, with the whole environment recorded, so
// a forced NCCL_ALGO/NCCL_PROTO is read from `env` rather than trusted from a label.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "io/nccl_tests/text_log_parser.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/core/parse_number.hpp"

namespace ncclbot::nccl_tests {
namespace {

// nccl-tests writes doubles with "%lf": six decimals.
constexpr double kJsonHalfStep = 0.5e-6;
// A bound on -n that keeps one log's per-iteration lists (x sizes x processes) within memory.
constexpr size_t kMaxIterations = 1'000'000;

class JsonLogReader {
 public:
  JsonLogReader(const nlohmann::json& doc, const std::string& file) : doc_(doc), file_(file) {}

  ParsedLog read() {
    if (!doc_.is_object()) fail("", "top level is not an object: not an nccl-tests -J file");
    if (!doc_.contains("results") || !doc_["results"].is_array())
      fail("", "no 'results' list: not an nccl-tests -J file (or the run died before printing results)");
    Run run;
    run.first_line = 1;
    run.header_line = 1;
    test_name(run);
    environment(run);
    if (doc_.contains("nccl_version") && doc_["nccl_version"].is_number_integer())
      run.nccl_version = doc_["nccl_version"].get<int>();
    devices(run);
    iterations_ = configured_iterations();
    const auto& results = doc_["results"];
    for (size_t i = 0; i < results.size(); ++i)
      run.rows.push_back(row(results[i], "results[" + std::to_string(i) + "]"));
    if (doc_.contains("average_bus_bandwidth") && doc_["average_bus_bandwidth"].is_object() &&
        doc_["average_bus_bandwidth"].contains("bandwidth") &&
        doc_["average_bus_bandwidth"]["bandwidth"].is_number()) {
      run.trailer_line = 1;
      run.avg_busbw = doc_["average_bus_bandwidth"]["bandwidth"].get<double>();
    } else {
      out_.warnings.push_back({file_, 0, "no 'average_bus_bandwidth': the run did not finish"});
    }
    if (doc_.contains("errors") && doc_["errors"].is_array())
      for (const auto& e : doc_["errors"])
        if (e.is_string() && !e.get<std::string>().empty())
          out_.warnings.push_back(
              {file_, 0, "nccl-tests recorded an error: " + e.get<std::string>().substr(0, 300)});
    if (run.rows.empty()) fail("results", "empty: the run printed no results");
    out_.file = file_;
    out_.runs.push_back(std::move(run));
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& reason) const {
    throw InputError(file_, 0, (where.empty() ? "" : where + ": ") + reason);
  }

  void test_name(Run& run) const {
    if (!doc_.contains("args") || !doc_["args"].is_array() || doc_["args"].empty() ||
        !doc_["args"][0].is_string())
      return;
    std::string prog = doc_["args"][0].get<std::string>();
    if (const size_t slash = prog.rfind('/'); slash != std::string::npos) prog = prog.substr(slash + 1);
    run.test_name = prog;
    run.test_name_line = 1;
  }

  void environment(Run& run) const {
    if (!doc_.contains("env") || !doc_["env"].is_array()) return;
    for (const auto& e : doc_["env"]) {
      if (!e.is_string()) continue;
      const std::string kv = e.get<std::string>();
      if (kv.rfind("NCCL_ALGO=", 0) == 0) run.algo = ForcedSetting{kv.substr(10), 1, "JSON env"};
      if (kv.rfind("NCCL_PROTO=", 0) == 0) run.proto = ForcedSetting{kv.substr(11), 1, "JSON env"};
      for (auto [var, slot] : {std::pair{"NCCL_MIN_CTAS=", &run.min_ctas},
                               {"NCCL_MAX_CTAS=", &run.max_ctas},
                               {"NCCLBOT_TABLE=", &run.tuner_table},
                               {"NCCL_CHUNK_SIZE=", &run.chunk_size_env}})
        if (kv.rfind(var, 0) == 0)
          *slot = ForcedSetting{kv.substr(std::string_view(var).size()), 1, "JSON env"};
    }
  }

  void devices(Run& run) const {
    if (!doc_.contains("config") || !doc_["config"].is_object()) return;
    const auto& config = doc_["config"];
    if (!config.contains("devices") || !config["devices"].is_array()) return;
    for (size_t i = 0; i < config["devices"].size(); ++i) {
      const auto& d = config["devices"][i];
      const std::string where = "config.devices[" + std::to_string(i) + "]";
      if (!d.is_object() || !d.contains("rank") || !d["rank"].is_number_integer() ||
          !d.contains("hostname") || !d["hostname"].is_string())
        fail(where, "expected an object with an integer 'rank' and a string 'hostname'");
      const int64_t rank = d["rank"].get<int64_t>();
      if (rank < 0 || rank > 10'000'000) fail(where, "rank out of range");
      if (!run.devices.empty() && rank <= run.devices.back().rank)
        fail(where, "rank " + std::to_string(rank) + " listed again: device lists of two runs are mixed");
      run.devices.push_back({1, int(rank), d["hostname"].get<std::string>()});
    }
  }

  // config.iterations (-n), the length every times_us list must have; 0 when absent.
  int configured_iterations() const {
    if (!doc_.contains("config") || !doc_["config"].is_object()) return 0;
    const auto& config = doc_["config"];
    if (!config.contains("iterations")) return 0;
    if (!config["iterations"].is_number_integer() || config["iterations"].get<int64_t>() < 1 ||
        config["iterations"].get<int64_t>() > int64_t(kMaxIterations))
      fail("config.iterations", "expected an integer from 1 to " + std::to_string(kMaxIterations));
    return int(config["iterations"].get<int64_t>());
  }

  uint64_t count_field(const nlohmann::json& r, const char* key, const std::string& where) const {
    if (!r.contains(key) || !r[key].is_number_unsigned())
      fail(where + "." + key, "expected a non-negative integer");
    return r[key].get<uint64_t>();
  }

  PrintedNumber number_field(const nlohmann::json& m, const char* key, const std::string& where) const {
    if (!m.contains(key) || !m[key].is_number()) fail(where + "." + key, "expected a number");
    const double v = m[key].get<double>();
    if (!(v >= 0.0) || !std::isfinite(v)) fail(where + "." + key, "expected a non-negative finite number");
    return {v, kJsonHalfStep};
  }

  Measurement measurement(const nlohmann::json& m, const std::string& where) const {
    if (!m.is_object()) fail(where, "expected an object");
    Measurement out;
    out.time_us = number_field(m, m.contains("cpu_time") ? "cpu_time" : "time", where);
    if (out.time_us.value <= 0.0) fail(where + ".time", "time must be positive");
    out.algbw = number_field(m, "alg_bw", where);
    out.busbw = number_field(m, "bus_bw", where);
    if (m.contains("nwrong") && !m["nwrong"].is_null()) out.wrong = number_field(m, "nwrong", where).value;
    return out;
  }

  // `-I 1`: "out_of_place_per_iter" / "in_place_per_iter" as nccl-tests' writePerIterReport
  // writes them: skipped_iterations, min_us .. cv_pct, times_us[] (every timed iteration, the
  // slowest process's time), and per_process_max_times_us[process][iteration] with several
  // processes. times_us must be the per-iteration maximum over the process rows.
  void per_iteration(const nlohmann::json& p, const std::string& where, Measurement& m) {
    if (!p.is_object()) fail(where, "expected an object");
    m.iteration_summary =
        IterationSummary{number_field(p, "min_us", where), number_field(p, "max_us", where),
                         number_field(p, "p99_us", where), number_field(p, "cv_pct", where)};
    if (!p.contains("times_us") || !p["times_us"].is_array() || p["times_us"].empty())
      fail(where + ".times_us", "expected a non-empty list of times");
    if (p["times_us"].size() > kMaxIterations)
      fail(where + ".times_us", "more than " + std::to_string(kMaxIterations) + " iterations");
    IterationTimes it;
    for (size_t i = 0; i < p["times_us"].size(); ++i) {
      const std::string at = where + ".times_us[" + std::to_string(i) + "]";
      const auto& v = p["times_us"][i];
      if (!v.is_number() || !(v.get<double>() > 0.0) || !std::isfinite(v.get<double>()))
        fail(at, "expected a positive finite time (\"nan\" means the CUDA events failed)");
      it.times_us.push_back(v.get<double>());
    }
    if (!p.contains("skipped_iterations") || !p["skipped_iterations"].is_number_integer())
      fail(where + ".skipped_iterations", "expected an integer");
    const int64_t skipped = p["skipped_iterations"].get<int64_t>();
    if (skipped < 0 || skipped >= int64_t(it.times_us.size()))
      fail(where + ".skipped_iterations",
           "must be at least 0 and below the " + std::to_string(it.times_us.size()) + " timed iterations");
    it.skipped = int(skipped);
    if (iterations_ > 0 && it.times_us.size() != size_t(iterations_))
      fail(where + ".times_us", "has " + std::to_string(it.times_us.size()) +
                                    " times, but config.iterations is " + std::to_string(iterations_));
    if (p.contains("per_process_max_times_us")) check_process_rows(p["per_process_max_times_us"], where, it);
    m.iterations = std::move(it);
  }

  void check_process_rows(const nlohmann::json& rows, const std::string& where, const IterationTimes& it) {
    const std::string at = where + ".per_process_max_times_us";
    if (!rows.is_array()) fail(at, "expected a list of per-process lists");
    std::vector<double> max(it.times_us.size(), 0.0);
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto& row = rows[r];
      if (!row.is_array() || row.size() != it.times_us.size())
        fail(at + "[" + std::to_string(r) + "]",
             "expected a list of " + std::to_string(it.times_us.size()) + " times (one per iteration)");
      for (size_t i = 0; i < row.size(); ++i) {
        if (!row[i].is_number())
          fail(at + "[" + std::to_string(r) + "][" + std::to_string(i) + "]", "expected a number");
        max[i] = std::max(max[i], row[i].get<double>());
      }
    }
    if (rows.empty()) return;
    for (size_t i = 0; i < max.size(); ++i)
      if (std::abs(max[i] - it.times_us[i]) > 2 * kJsonHalfStep) {
        out_.warnings.push_back({file_, 0,
                                 where + ".times_us[" + std::to_string(i) + "] = " +
                                     format_double(it.times_us[i]) + " is not the slowest process's time (" +
                                     format_double(max[i]) + " in per_process_max_times_us)"});
        return;
      }
  }

  Row row(const nlohmann::json& r, const std::string& where) {
    if (!r.is_object()) fail(where, "expected an object");
    Row row;
    row.line = 1;
    row.bytes = count_field(r, "size", where);
    row.count = count_field(r, "count", where);
    if (r.contains("type") && r["type"].is_string()) row.type = r["type"].get<std::string>();
    if (r.contains("redop") && r["redop"].is_string()) row.redop = r["redop"].get<std::string>();
    if (r.contains("root") && r["root"].is_string()) {
      std::string root = r["root"].get<std::string>();  // printed "%6i": padded
      root.erase(0, root.find_first_not_of(' '));
      if (const auto v = parse_int(root)) row.root = *v;
    }
    if (!r.contains("out_of_place") || r["out_of_place"].is_null())
      fail(where + ".out_of_place", "missing (in-place-only results are not supported)");
    row.out_of_place = measurement(r["out_of_place"], where + ".out_of_place");
    if (r.contains("out_of_place_per_iter"))
      per_iteration(r["out_of_place_per_iter"], where + ".out_of_place_per_iter", row.out_of_place);
    if (r.contains("in_place") && !r["in_place"].is_null()) {
      row.in_place = measurement(r["in_place"], where + ".in_place");
      if (r.contains("in_place_per_iter"))
        per_iteration(r["in_place_per_iter"], where + ".in_place_per_iter", *row.in_place);
    }
    return row;
  }

  const nlohmann::json& doc_;
  std::string file_;
  ParsedLog out_;
  int iterations_ = 0;
};

long line_of_offset(std::string_view text, size_t offset) {
  long line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

}  // namespace

ParsedLog parse_json_log(std::string_view text, const std::string& file) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    throw InputError(file, line_of_offset(text, at),
                     "broken JSON (truncated -J output?): byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw InputError(file, 0, std::string("unreadable JSON: ") + e.what());
  }
  try {
    return JsonLogReader(doc, file).read();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, 0, std::string("unexpected JSON structure: ") + e.what());
  }
}

}  // namespace ncclbot::nccl_tests
