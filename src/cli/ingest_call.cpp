#include "cli/ingest_call.hpp"

#include <unistd.h>

#include <filesystem>
#include <optional>

#include "ncclbot/core/command_streams.hpp"
#include "ncclbot/core/error.hpp"
#include "ncclbot/io/nccl_tests/ingest_output.hpp"
#include "ncclbot/io/nccl_tests/manifest.hpp"

namespace ncclbot::cli {
namespace {

// The library's ingest options from the command line's; warnings go to stderr as they come.
nccl_tests::IngestOptions ingest_options_from(const IngestCallOptions& opt) {
  nccl_tests::IngestOptions options;
  options.placement = nccl_tests::parse_placement(opt.placement);
  options.samples = nccl_tests::parse_sample_kind(opt.samples);
  options.fabric = opt.fabric;
  options.skip_unforced = opt.skip_unforced;
  options.skip_failed = opt.skip_failed;
  options.on_warning = [](const nccl_tests::Diagnostic& w) {
    command_err() << "ncclbot: warning: " << w.text() << "\n";
  };
  if (!nccl_tests::valid_fabric_name(options.fabric))
    throw UsageError("--fabric: '" + options.fabric +
                     "' must be 1-64 characters of letters, digits, '-', '_' or '.'");
  return options;
}

// Checks the options against the input (a campaign folder or logs) and fills in a campaign
// folder's default --out; true when the input is a campaign folder.
bool check_ingest_input(IngestCallOptions& opt) {
  const bool campaign_dir = opt.logs.size() == 1 && campaign::is_campaign_dir(opt.logs[0]);
  if (!campaign_dir && opt.allow_missing) throw UsageError("--allow-missing: only for a campaign folder");
  if (campaign_dir && !opt.manifest.empty()) throw UsageError("--manifest: a campaign folder has its own");
  if (campaign_dir && opt.out.empty()) opt.out = (std::filesystem::path(opt.logs[0]) / "sweep.csv").string();
  if (opt.out.empty()) throw UsageError("--out is required");
  return campaign_dir;
}

// Ingests the complete runs of the campaign folder opt.logs[0], counting its runs by state.
IngestCallResult ingest_campaign_folder(const IngestCallOptions& opt,
                                        const nccl_tests::IngestOptions& options) {
  IngestCallResult out;
  const campaign::Campaign c = campaign::read_campaign(opt.logs[0]);
  std::vector<std::string> inputs = {c.manifest_path};
  for (const auto& run : c.runs) inputs.insert(inputs.end(), {run.json, run.log});
  nccl_tests::check_output_is_not_input(opt.out, inputs);
  const bool tty = isatty(2);
  // A progress line on a terminal only: written to a file, it would be a second line before an error.
  auto ingested = campaign::ingest_campaign(c, options, opt.allow_missing, [tty](size_t done, size_t total) {
    if (tty) command_err() << "\rchecking runs: " << done << "/" << total << (done == total ? "\n" : "");
  });
  out.result = std::move(ingested.result);
  out.files = 0;
  IngestCampaignSummary& summary = out.campaign.emplace();
  summary.dir = opt.logs[0];
  summary.runs = c.runs.size();
  summary.dropped = ingested.dropped;
  size_t counts[3] = {0, 0, 0};
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const auto& st = ingested.status[i];
    ++counts[int(st.state)];
    out.files += st.state == campaign::RunState::kDone;
    if (st.state != campaign::RunState::kDone)
      summary.not_done.push_back({c.runs[i].id, st.state, st.reason});
  }
  summary.done = counts[0];
  summary.missing = counts[1];
  summary.failed = counts[2];
  return out;
}

// Ingests the logs given (or, with none, the manifest's files).
IngestCallResult ingest_log_files(const IngestCallOptions& opt, const nccl_tests::IngestOptions& options) {
  IngestCallResult out;
  std::vector<std::string> inputs = opt.logs;
  out.files = opt.logs.size();
  std::optional<nccl_tests::Manifest> manifest;
  if (!opt.manifest.empty()) {
    manifest = nccl_tests::read_manifest(opt.manifest);
    inputs.push_back(opt.manifest);
    if (opt.logs.empty())
      for (const auto& e : manifest->entries) inputs.push_back(e.resolved);
    if (opt.logs.empty()) out.files = manifest->entries.size();
  }
  nccl_tests::check_output_is_not_input(opt.out, inputs);
  out.result = nccl_tests::ingest_logs(opt.logs, manifest ? &*manifest : nullptr, options);
  return out;
}

nlohmann::json campaign_json(const IngestCampaignSummary& c) {
  nlohmann::json not_done = nlohmann::json::array();
  for (const IngestRunState& r : c.not_done)
    not_done.push_back(
        {{"id", r.id}, {"state", std::string(campaign::run_state_name(r.state))}, {"reason", r.reason}});
  return {{"dir", c.dir},         {"runs", c.runs},     {"done", c.done},
          {"missing", c.missing}, {"failed", c.failed}, {"not_done", std::move(not_done)},
          {"dropped", c.dropped}};
}

nlohmann::json summary(const nccl_tests::IngestResult& r, const std::string& out_path, size_t files) {
  nlohmann::json runs = nlohmann::json::array();
  size_t used = 0;
  for (const auto& run : r.runs) {
    nlohmann::json j = {{"file", run.file}, {"line", run.line}, {"test", run.test}, {"used", run.used}};
    if (run.used) {
      ++used;
      j.update({{"collective", run.collective},
                {"algo", run.algo},
                {"proto", run.proto},
                {"fabric", run.fabric},
                {"nodes", run.nodes},
                {"gpus_per_node", run.gpus_per_node},
                {"channels", run.channels},
                {"chunk_bytes", run.chunk_bytes},
                {"rows", run.rows}});
      if (run.nccl_channels) j["nccl_channels"] = *run.nccl_channels;
    } else {
      j["reason"] = run.reason;
    }
    runs.push_back(std::move(j));
  }
  return {{"out", out_path},
          {"sample_kind", std::string(nccl_tests::sample_kind_name(r.samples))},
          {"files", files},
          {"runs_found", r.runs.size()},
          {"runs_used", used},
          {"runs_skipped", r.runs.size() - used},
          {"rows", r.csv_rows},
          {"contexts", r.sweep.num_contexts()},
          {"samples", r.sweep.samples()},
          {"warnings", r.warnings.size()},
          {"runs", std::move(runs)}};
}

}  // namespace

IngestCallResult ingest_call(const IngestCallOptions& given) {
  IngestCallOptions opt = given;
  const nccl_tests::IngestOptions options = ingest_options_from(opt);
  const bool campaign_dir = check_ingest_input(opt);
  IngestCallResult r = campaign_dir ? ingest_campaign_folder(opt, options) : ingest_log_files(opt, options);
  r.noise = nccl_tests::write_ingest_output(r.result, opt.out);
  r.out = opt.out;
  return r;
}

nlohmann::json ingest_document(const IngestCallResult& r) {
  nlohmann::json s = summary(r.result, r.out, r.files);
  if (!r.noise.empty()) s["noise"] = r.noise;
  if (r.campaign) s["campaign"] = campaign_json(*r.campaign);
  return s;
}

}  // namespace ncclbot::cli
