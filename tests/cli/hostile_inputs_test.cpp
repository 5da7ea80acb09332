// A careless user and an attacker at the command line: a few hundred malformed inputs and dangerous
// commands against the built `ncclbot`, run without a shell. For every one: exit code 2, exactly one
// line on stderr naming the input, option or path at fault, no signal, no hang, and not one byte
// changed in a guard folder of the user's own files (some commands aim straight at it).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "support/run_cli.hpp"

extern char** environ;

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  std::string err;
};

// Runs the binary with `args` (no shell), `stdin_text` on standard input, killed after 20 s.
Outcome run_argv(const std::vector<std::string>& args, const std::string& stdin_text,
                 const std::string& dir) {
  static int counter = 0;
  const std::string base = dir + "/call" + std::to_string(counter++);
  write_file(base + ".in", stdin_text);
  std::vector<std::string> argv = {NCCLBOT_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, (base + ".in").c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, (base + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (base + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  Outcome o;
  if (posix_spawn(&pid, cargs[0], &fa, nullptr, cargs.data(), environ) != 0) return o;
  posix_spawn_file_actions_destroy(&fa);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      o.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.err = read_all(base + ".err");
  return o;
}

std::map<std::string, std::string> tree_snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    files[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? read_all(e.path().string()) : "<dir>";
  return files;
}

struct Case {
  std::string what;               // shown on failure
  std::vector<std::string> args;  // after the program name
  std::string needle;             // the stderr line must contain it (the input, option or path)
  std::string stdin_text;
};

// A valid sweep: one allreduce context on 1 node x 8 GPUs, two arms, two samples, with a prior.
const char* kSweep =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us,prior_us\n"
    "test,allreduce,1,8,1024,Ring,LL,0,10,12\n"
    "test,allreduce,1,8,1024,Ring,LL,1,10,12\n"
    "test,allreduce,1,8,1024,Tree,LL,0,11,11\n"
    "test,allreduce,1,8,1024,Tree,LL,1,11,11\n";

// A valid study with placeholders: @SWEEP_NAME@ and @EXTRA@ (more [study] keys).
std::string study_text(const std::string& sweep_name, const std::string& extra = "") {
  return "[study]\nname = \"t\"\nseeds = 1\nhorizon = 10\nbackend = \"cpu\"\n" + extra +
         "\n[[sweep]]\nname = " + sweep_name +
         "\npreset = \"h100-ib-a\"\nnodes = [1]\ncollectives = [\"allreduce\"]\nsamples = 2\n\n"
         "[[scenario]]\nname = \"s\"\ntune = { sweep = \"x\" }\nscore = { sweep = \"x\" }\n\n"
         "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n";
}

class HostileInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = temp_dir();
    guard_ = base_ + "/guard";
    fs::create_directories(guard_ + "/sub");
    write_file(guard_ + "/measurement.csv", kSweep);
    write_file(guard_ + "/notes.txt", "my own notes\n");
    write_file(guard_ + "/sub/results.json", "{\"mine\": true}\n");
    write_file(guard_ + "/study.toml", study_text("\"x\""));
    write_file(base_ + "/good.csv", kSweep);
    fs::create_directories(base_ + "/calls");
  }

  std::string base_, guard_;
};

TEST_F(HostileInputs, EveryBadInputExitsTwoWithOneLineAndHarmsNothing) {
  const std::string good = base_ + "/good.csv";
  const std::string g = guard_;
  const std::string out = base_ + "/out";
  std::vector<Case> cases;
  const auto add = [&](std::string what, std::vector<std::string> args, std::string needle,
                       std::string stdin_text = "") {
    cases.push_back({std::move(what), std::move(args), std::move(needle), std::move(stdin_text)});
  };

  // --- integer options: negatives, overflow, non-decimal forms, empty values -------------------
  const std::vector<std::string> bad_integers = {
      "-1", "99999999999999999999", "1e9", "0x10", "010", "", "abc", "1.5", "+-3"};
  struct IntOption {
    std::vector<std::string> before;  // a valid command up to the option
    std::string option;
  };
  const std::vector<std::string> replay = {"replay", "--sweep", good, "--policy", "greedy"};
  const std::vector<IntOption> int_options = {
      {{"synth", "--fabric", "h100-ib-a", "--out", out + ".csv", "--nodes", "1"}, "--seed"},
      {{"synth", "--fabric", "h100-ib-a", "--out", out + ".csv", "--nodes", "1"}, "--samples"},
      {{"synth", "--fabric", "h100-ib-a", "--out", out + ".csv", "--nodes", "1"}, "--min-bytes"},
      {{"model", "--fabric", "h100-ib-a", "--nodes", "1"}, "--bytes"},
      {{"model", "--fabric", "h100-ib-a", "--bytes", "64"}, "--nodes"},
      {{"replay", "--sweep", good, "--policy", "greedy", "--horizon", "5"}, "--seeds"},
      {{"replay", "--sweep", good, "--policy", "greedy", "--horizon", "5", "--seeds", "1"}, "--seed"},
      {{"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1"}, "--horizon"},
      {{"tune", "--sweep", good, "--policy", "greedy", "--horizon", "5", "--tune-nodes", "1", "--score-nodes",
        "1"},
       "--seeds"},
      {{"run", g + "/study.toml", "--out", out + "-run"}, "--threads"},
  };
  for (const auto& io : int_options)
    for (const auto& v : bad_integers) {
      auto args = io.before;
      args.push_back(io.option);
      args.push_back(v);
      add(io.before[0] + " " + io.option + " '" + v + "'", args, io.option);
    }
  add("stats --threads -1", {"stats", "holm", "--threads", "-1"}, "--threads", R"({"p": [0.1]})");

  // --- empty or zero values that must not become defaults --------------------------------------
  add("synth --gpus-per-node 0",
      {"synth", "--fabric", "h100-ib-a", "--out", out + ".csv", "--gpus-per-node", "0"}, "--gpus-per-node");
  add("model --gpus-per-node 0", {"model", "--fabric", "h100-ib-a", "--bytes", "64", "--gpus-per-node", "0"},
      "--gpus-per-node");
  // -1 is what "left out" is stored as; given, it is a bad rate or size, not the preset's.
  for (const std::string opt : {"--shift-rate", "--shift-size", "--shift-arm-size"})
    add("synth " + opt + " -1", {"synth", "--fabric", "h100-ib-a", "--out", out + ".csv", opt, "-1"}, opt);
  for (const std::string opt : {"--collectives", "--nodes", "--backend"})
    add("replay " + opt + " ''",
        {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", opt, ""}, opt);
  add("inspect --collectives ''", {"inspect", good, "--collectives", ""}, "--collectives");
  add("synth --collectives ''",
      {"synth", "--fabric", "h100-ib-a", "--out", out + ".csv", "--collectives", ""}, "--collectives");
  add("synth --fabric ''", {"synth", "--fabric", "", "--out", out + ".csv"}, "--fabric");
  add("tune --objective ''",
      {"tune", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--objective", ""},
      "--objective");
  add("run --out ''", {"run", g + "/study.toml", "--out", ""}, "--out");

  // --- heavy requests ---------------------------------------------------------------------------
  add("replay --seeds 1e9",
      {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1000000000", "--horizon", "5"},
      "--seeds");
  add("replay --horizon 2e9",
      {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "2000000000"},
      "--horizon");
  add("tune --seeds 1e9",
      {"tune", "--sweep", good, "--policy", "greedy", "--seeds", "1000000000", "--horizon", "5",
       "--tune-nodes", "1", "--score-nodes", "1"},
      "--seeds");
  add("stats permutation 1e12 resamples", {"stats", "permutation"}, "resamples",
      R"({"diffs": [0.1, 0.2, -0.1, 0.3, 0.1, 0.1, 0.2, -0.1, 0.3, 0.1, 0.1, 0.2, -0.1, 0.3, 0.1, 0.1, 0.2, -0.1, 0.3, 0.1, 0.1, 0.2, -0.1, 0.3, 0.1, 0.1, 0.2, -0.1, 0.3, 0.1, 0.4, 0.5], "method": "monte_carlo", "resamples": 1000000000000})");
  add("stats bootstrap 1e9 resamples", {"stats", "bootstrap"}, "resamples",
      R"({"x": [0.1, 0.2], "method": "percentile", "resamples": 1000000000})");
  add("stats resolution 1e12 resamples", {"stats", "resolution"}, "resamples",
      R"({"units": 40, "resamples": 1000000000000})");

  // --- malformed JSON for stats -------------------------------------------------------------------
  const std::vector<std::pair<std::string, std::string>> bad_json = {
      {"holm", R"({"p": [1e400]})"},
      {"holm", R"({"p": [0.1], "alpha": 1e400})"},
      {"holm", R"({"p": [-1e400]})"},
      {"holm", R"({"p": [NaN]})"},
      {"holm", R"({"p": [0.1, 2]})"},
      {"holm", R"({"p": "0.1"})"},
      {"holm", R"({"p": []})"},
      {"holm", R"({"p": [0.1], "alpah": 0.05})"},
      {"holm", R"([0.1, 0.2])"},
      {"holm", ""},
      {"holm", "{"},
      {"holm", "\xff\xfe{}"},
      {"holm", std::string(1000, '[')},
      {"permutation", R"({"diffs": [0.1], "resamples": -1})"},
      {"permutation", R"({"diffs": [0.1], "resamples": 0})"},
      {"permutation", R"({"diffs": [0.1], "resamples": 1.5})"},
      {"permutation", R"({"diffs": [0.1], "seed": -5})"},
      {"permutation", R"({"diffs": [0.1], "seed": 1e30})"},
      {"permutation", R"({"diffs": [0.1], "method": "magic"})"},
      {"permutation", R"({"diffs": [0.1], "alternative": "sideways"})"},
      {"permutation", R"({"diffs": [1e308, 1e308]})"},
      {"bootstrap", R"({"x": [1e308, 1e308, 1e308], "method": "percentile"})"},
      {"wilcoxon", R"({"x": [1e308, -1e308], "y": [-1e308, 1e308]})"},
      {"permutation",
       R"({"diffs": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2], "method": "exact"})"},
      {"bootstrap", R"({"x": [0.1, 0.2], "y": [0.1]})"},
      {"bootstrap", R"({"x": [0.1, 0.2], "level": 1})"},
      {"bootstrap", R"({"x": [0.1], "method": "bca"})"},
      {"bootstrap", R"({"x": [0.1, 0.2], "statistic": "median"})"},
      {"bootstrap", R"({"x": [0.1, 0.2], "threshold": 1e400})"},
      {"wilcoxon", R"({"x": [1, 2], "y": [1]})"},
      {"wilcoxon", R"({"diffs": [1, 2], "x": [1]})"},
      {"wilcoxon", R"({"diffs": [1, 2], "correction": "yes"})"},
      {"binomial", R"({"k": 9, "n": 8})"},
      {"binomial", R"({"k": -1, "n": 8})"},
      {"binomial", R"({"k": 1, "n": 8, "p": 1.5})"},
      {"binomial", R"({"k": 1, "n": 1e400})"},
      {"mcnemar", R"({"b": -1, "c": 2})"},
      {"mcnemar", R"({"b": "7", "c": 2})"},
      {"resolution", R"({"units": -3})"},
      {"resolution", R"({"units": 9, "alpha": 0})"},
      {"resolution", R"({"units": 50, "method": "exact"})"},
      {"resolution", R"({"units": 9, "family_size": -2})"},
  };
  for (const auto& [test, json] : bad_json)
    add("stats " + test + " " + json.substr(0, 40), {"stats", test}, "<stdin>", json);
  add("stats --input /dev/zero", {"stats", "holm", "--input", "/dev/zero"}, "/dev/zero");
  add("stats --input folder", {"stats", "holm", "--input", g}, g);
  add("stats --input missing", {"stats", "holm", "--input", base_ + "/missing.json"},
      base_ + "/missing.json");

  // --- malformed sweeps -------------------------------------------------------------------------
  const std::string header = "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\n";
  const std::vector<std::string> bad_rows = {
      "test,allreduce,1,8,1024,Ring,LL,0,-10\n",
      "test,allreduce,1,8,1024,Ring,LL,0,nan\n",
      "test,allreduce,1,8,1024,Ring,LL,0,1e400\n",
      "test,allreduce,0,8,1024,Ring,LL,0,10\n",
      "test,allreduce,1,8,-1024,Ring,LL,0,10\n",
      "test,allreduce,1,8,1024,Ring,XX,0,10\n",
      "test,allreduce,1,8,1024,Warp,LL,0,10\n",
      "test,allreduce,1,8,1024,Ring,LL,0\n",
      "test,allreduce,1,8,1024,Ring,LL,0,10,11,12\n",
      "te st/..,allreduce,1,8,1024,Ring,LL,0,10\n",
      "test,allreduce,1,8,1024,Ring,LL,-1,10\n",
      "test,allreduce,1,8,99999999999999999999999,Ring,LL,0,10\n",
      std::string("test,allreduce,1,8,1024,Ring,LL,0,10\0\n", 38),
      "test,allsum,1,8,1024,Ring,LL,0,10\n",
      "test,allreduce,1,8,1024,Ring,LL,0,10\ntest,allreduce,1,8,1024,Ring,LL,0,10\n",
  };
  for (size_t i = 0; i < bad_rows.size(); ++i) {
    const std::string path = base_ + "/bad" + std::to_string(i) + ".csv";
    write_file(path, header + bad_rows[i]);
    const std::string at =
        path + ":" + (i + 1 == bad_rows.size() ? "3" : "2");  // the last one: a repeated row
    add("inspect bad row " + std::to_string(i), {"inspect", path}, at);
    if (i % 3 == 0)
      add("replay bad row " + std::to_string(i),
          {"replay", "--sweep", path, "--policy", "greedy", "--seeds", "1", "--horizon", "5"}, at);
  }
  write_file(base_ + "/noheader.csv", "");
  write_file(base_ + "/badheader.csv", "fabric,collective,colour\n");
  write_file(base_ + "/longline.csv", std::string(200000, 'a') + "\n");
  write_file(base_ + "/binary.csv", std::string("\x7f"
                                                "ELF\x02\x01\x01\x00\x00\x00",
                                                10) +
                                        std::string(100, '\x01'));
  for (const std::string& p : {base_ + "/noheader.csv", base_ + "/badheader.csv", base_ + "/longline.csv",
                               base_ + "/binary.csv", std::string("/dev/zero"), base_ + "/missing.csv", g})
    add("inspect " + p, {"inspect", p}, p);
  add("tune on /dev/zero",
      {"tune", "--sweep", "/dev/zero", "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--tune-nodes",
       "1", "--score-nodes", "1"},
      "/dev/zero");

  // --- outputs that are inputs, outputs in the user's folder, unwritable outputs ---------------
  const std::string m = g + "/measurement.csv";
  add("replay --raw = --sweep",
      {"replay", "--sweep", m, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--raw", m}, "--raw");
  add("replay --raw via ./",
      {"replay", "--sweep", m, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--raw",
       g + "/./sub/../measurement.csv"},
      "--raw");
  add("replay --shard --out = --sweep",
      {"replay", "--sweep", m, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--shard", "0/2",
       "--out", m},
      "--out");
  add("replay --raw into a missing folder",
      {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--raw",
       base_ + "/no/such/raw.csv"},
      base_ + "/no/such/raw.csv");
  add("replay --raw is a folder",
      {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--raw", g}, g);
  add("tune --out = --sweep",
      {"tune", "--sweep", m, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--tune-nodes", "1",
       "--score-nodes", "1", "--phase", "tune", "--shard", "0/2", "--out", m},
      "--out");
  add("merge --out = partial", {"merge", m, "--out", m}, "--out");
  add("merge garbage partial", {"merge", g + "/notes.txt"}, g + "/notes.txt");
  add("merge /dev/zero", {"merge", "/dev/zero"}, "/dev/zero");
  add("synth --out is a folder", {"synth", "--fabric", "h100-ib-a", "--out", g, "--nodes", "1"}, g);
  add("synth --out in a missing folder",
      {"synth", "--fabric", "h100-ib-a", "--out", base_ + "/no/x.csv", "--nodes", "1"}, base_ + "/no/x.csv");
  add("run --out the user's folder", {"run", g + "/study.toml", "--out", g, "--no-figures"}, g);
  add("run --out a file", {"run", g + "/study.toml", "--out", m, "--no-figures"}, m);
  add("export-table from the user's folder",
      {"export-table", "--study", g, "--policy", "g", "--out", base_ + "/t.txt"}, g + "/results.json");
  add("export-table --out = results.json",
      {"export-table", "--study", g + "/sub", "--policy", "g", "--out", g + "/sub/results.json"}, "--out");

  // --- study files --------------------------------------------------------------------------------
  const std::vector<std::pair<std::string, std::string>> bad_studies = {
      {"../../x", study_text("\"../../x\"")},
      {"a/b", study_text("\"a/b\"")},
      {".hidden", study_text("\".hidden\"")},
      {"..", study_text("\"..\"")},
      {"newline", study_text("\"a\\nb\"")},
      {"control", study_text("\"a\\u0001b\"")},
      {"empty name", study_text("\"\"")},
      {"long name", study_text("\"" + std::string(300, 'a') + "\"")},
      {"seeds 0", study_text("\"x\"", "seeds = 0")},
      {"seed -1", study_text("\"x\"", "seed = -1")},
      {"seed huge", study_text("\"x\"", "seed = 99999999999999999999")},
      {"alpha 1e400", study_text("\"x\"", "alpha = 1e400")},
      {"alpha nan", study_text("\"x\"", "alpha = nan")},
      {"unknown key", study_text("\"x\"", "colour = 1")},
      {"bad toml", "[study\nname = 1\n"},
      {"duplicate key", "[study]\nname = \"a\"\nname = \"b\"\n"},
      {"no sweep", "[study]\nname = \"a\"\n"},
      {"binary", std::string("\x00\x01\x02\xff", 4)},
      {"sweep file missing",
       "[study]\nname = \"t\"\n[[sweep]]\nname = \"x\"\nfile = \"/nonexistent.csv\"\n"
       "[[scenario]]\nname = \"s\"\ntune = { sweep = \"x\" }\nscore = { sweep = \"x\" }\n"
       "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"},
      {"resamples huge", study_text("\"x\"", "permutation_resamples = 1000000000000")},
  };
  for (size_t i = 0; i < bad_studies.size(); ++i) {
    const std::string path = base_ + "/study" + std::to_string(i) + ".toml";
    write_file(path, bad_studies[i].second);
    add("run study: " + bad_studies[i].first,
        {"run", path, "--out", out + "-s" + std::to_string(i), "--no-figures"},
        i == 18 ? std::string("/nonexistent.csv") : path);
    if (i < 8)
      add("run-units study: " + bad_studies[i].first,
          {"run-units", path, "--out", out + "-u" + std::to_string(i), "--shard", "0/2"}, path);
  }
  add("run /dev/zero", {"run", "/dev/zero", "--out", out + "-z"}, "/dev/zero");
  add("run a folder", {"run", g, "--out", out + "-f"}, g);

  // --- fabric names -----------------------------------------------------------------------------
  for (const std::string f :
       {"../../etc/passwd", "h100-ib-a/../h100-ib-a", "x y", "/dev/zero", "nonexistent"}) {
    add("synth --fabric " + f, {"synth", "--fabric", f, "--out", out + ".csv"}, f);
    add("model --fabric " + f, {"model", "--fabric", f, "--bytes", "64"}, f);
  }

  // --- policies and other text options ----------------------------------------------------------
  for (const std::string p : {"ucb1:c=-1", "ucb1:c=nan", "greedy:n0=1e400", "nosuch", "ucb1:c=1|",
                              "egreedy:eps=2", "ucb1:c=0.1,c=0.2"})
    add("replay --policy " + p, {"replay", "--sweep", good, "--policy", p, "--seeds", "1", "--horizon", "5"},
        "");
  for (const std::string s : {"2/2", "-1/2", "1/0", "a/b", "1"})
    add("replay --shard " + s,
        {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--shard", s,
         "--out", out + ".part"},
        "--shard");
  add("model --collective allsum", {"model", "--collective", "allsum", "--bytes", "64"}, "allsum");
  add("tune --objective max",
      {"tune", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--objective", "max"},
      "--objective");
  add("replay --backend gpu2",
      {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--backend",
       "gpu2"},
      "");
  // A FIFO nobody writes to: opened without waiting, read to its end at once, refused.
  const std::string fifo = base_ + "/fifo";
  ::mkfifo(fifo.c_str(), 0600);
  add("inspect a FIFO", {"inspect", fifo}, fifo);
  add("ingest a FIFO", {"ingest", fifo, "--out", out + "-fifo.csv"}, fifo);
  add("inspect --nodes that select nothing", {"inspect", good, "--nodes", "999"}, "--nodes");
  add("replay --collectives that select nothing",
      {"replay", "--sweep", good, "--policy", "greedy", "--seeds", "1", "--horizon", "5", "--collectives",
       "allgather"},
      "--collectives");
  // plugin-check --log: a dangling symlink and a missing folder are refused before the plugin runs
  // (the plugin would warn and write no log, and the check would end 0).
  const std::string plugin = beside_ncclbot("libnccl-tuner-ncclbot.so");
  fs::create_symlink(base_ + "/nowhere/target", base_ + "/dangling.log");
  for (const std::string& log : {base_ + "/dangling.log", base_ + "/nofolder/x.log"})
    add("plugin-check --log " + log,
        {"plugin-check", "--plugin", plugin, "--sweep", good, "--policy", "greedy", "--horizon", "5", "--log",
         log},
        log);
  add("unknown command", {"frobnicate"}, "frobnicate");
  add("unknown option", {"inspect", good, "--colour", "red"}, "--colour");

  ASSERT_GE(cases.size(), 150u);
  const auto before = tree_snapshot(guard_);
  int failures = 0;
  for (const Case& c : cases) {
    const Outcome o = run_argv(c.args, c.stdin_text, base_ + "/calls");
    std::string lines = o.err;
    const size_t newlines = size_t(std::count(lines.begin(), lines.end(), '\n'));
    const bool one_line = newlines == 1 && !lines.empty() && lines.back() == '\n';
    const bool named = c.needle.empty() || lines.find(c.needle) != std::string::npos;
    const bool ok = !o.timed_out && o.signal == 0 && o.exit_code == 2 && one_line && named;
    if (!ok && ++failures <= 40)
      ADD_FAILURE() << c.what << ": exit " << o.exit_code << " signal " << o.signal
                    << (o.timed_out ? " TIMED OUT" : "") << ", stderr (" << newlines << " lines): " << o.err
                    << (named ? "" : "  [does not name '" + c.needle + "']");
    const auto after = tree_snapshot(guard_);
    if (after != before) {
      ADD_FAILURE() << c.what << ": changed the guard folder";
      return;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
}

}  // namespace
}  // namespace ncclbot::test
