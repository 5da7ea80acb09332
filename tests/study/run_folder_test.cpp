// The report folder rules of `ncclbot run` (study/run_folder.hpp): a non-empty folder without the
// marker is refused, and so is one another study wrote (unless --replace); the runner deletes only
// files it listed, and only inside the folder; a user's own files in a run folder survive reruns,
// even when the study changes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ncclbot/core/error.hpp"
#include "study/run_folder.hpp"
#include "support/run_cli.hpp"
#include "support/study_files.hpp"

namespace ncclbot::test {
namespace {

namespace fs = std::filesystem;

const study::FolderOwner kStudyT{"run", "t"};

TEST(RunFolder, ClaimsOnlyNewEmptyOrMarkedFolders) {
  const std::string base = temp_dir();
  const study::RunFolder fresh = study::RunFolder::claim(base + "/new", "--out", kStudyT, false);
  EXPECT_TRUE(fs::exists(base + "/new/.ncclbot-run"));
  EXPECT_TRUE(fresh.listed().empty());
  EXPECT_NO_THROW(study::RunFolder::claim(base + "/new", "--out", kStudyT, false));  // marked: fine again

  fs::create_directories(base + "/project");
  write_file(base + "/project/measurement.csv", "mine");
  try {
    study::RunFolder::claim(base + "/project", "--out", kStudyT, false);
    FAIL() << "a user's folder was claimed";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(base + "/project"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_all(base + "/project/measurement.csv"), "mine");
  EXPECT_FALSE(fs::exists(base + "/project/.ncclbot-run"));
  EXPECT_THROW(study::RunFolder::claim(base + "/project/measurement.csv", "--out", kStudyT, false),
               UsageError);
}

TEST(RunFolder, RemovesOnlyListedFilesAndTheirTemporaries) {
  const std::string dir = temp_dir() + "/run";
  const study::RunFolder f = study::RunFolder::claim(dir, "--out", kStudyT, false);
  fs::create_directories(dir + "/units");
  f.record({"units/a.json", "units/b.json", "report.md"});
  for (const char* name : {"units/a.json", "units/b.json", "report.md", "units/a.json.tmp.Xy12Ab",
                           "units/mine.json", "units/mine.json.tmp.1", "notes.txt"})
    write_file(dir + "/" + name, name);
  fs::create_symlink(dir + "/notes.txt", dir + "/units/c.json");
  f.record({"units/c.json"});

  f.remove_unlisted({"units/b.json", "report.md"});
  EXPECT_FALSE(fs::exists(dir + "/units/a.json"));             // listed, no longer planned
  EXPECT_FALSE(fs::exists(dir + "/units/a.json.tmp.Xy12Ab"));  // temporary of a listed name
  EXPECT_TRUE(fs::exists(dir + "/units/b.json"));
  EXPECT_TRUE(fs::exists(dir + "/report.md"));
  EXPECT_TRUE(fs::exists(dir + "/units/mine.json"));        // never listed: the user's
  EXPECT_TRUE(fs::exists(dir + "/units/mine.json.tmp.1"));  // not a temporary of ours
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
  EXPECT_TRUE(fs::is_symlink(dir + "/units/c.json"));  // a link in a listed place is left alone
  EXPECT_EQ(read_all(dir + "/notes.txt"), "notes.txt");
  EXPECT_EQ(f.listed(), (std::set<std::string>{"report.md", "units/b.json"}));
}

TEST(RunFolder, AMarkerListingAPathOutsideTheFolderIsRefused) {
  const std::string dir = temp_dir() + "/run";
  study::RunFolder::claim(dir, "--out", kStudyT, false);
  write_file(dir + "/.ncclbot-run", "# ncclbot run folder\n../../etc/passwd\n");
  EXPECT_THROW(study::RunFolder::claim(dir, "--out", kStudyT, false), InputError);
}

// The small study named "t" with these policies.
std::string study(const std::string& policies) {
  return small_study_text("t", policies);
}

TEST(RunFolder, RerunsKeepTheUsersFilesAndDropOnlyTheirOwnStaleUnits) {
  const std::string base = temp_dir();
  const std::string out = base + "/report";
  write_file(base + "/study.toml", study("[[policy]]\nname = \"g\"\nspec = \"greedy\"\n[[policy]]\nname = "
                                         "\"r\"\nspec = \"random\"\n"));
  ASSERT_EQ(run_cli("run '" + base + "/study.toml' --out '" + out + "' --no-figures").exit_code, 0);
  size_t units = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(out + "/units")) ++units;
  ASSERT_EQ(units, 2u);
  write_file(out + "/units/my-notes.json", "{}");
  write_file(out + "/analysis.txt", "mine");
  // The study loses a policy: its unit goes, the user's files stay.
  write_file(base + "/study.toml", study("[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"));
  const CliResult r = run_cli("run '" + base + "/study.toml' --out '" + out + "' --no-figures");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  units = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(out + "/units")) ++units;
  EXPECT_EQ(units, 2u);  // g's unit and the user's file
  EXPECT_EQ(read_all(out + "/units/my-notes.json"), "{}");
  EXPECT_EQ(read_all(out + "/analysis.txt"), "mine");
}

TEST(RunFolder, RunRefusesAProjectFolderAndLeavesItAlone) {
  const std::string base = temp_dir();
  write_file(base + "/study.toml", study("[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"));
  write_file(base + "/measurement.csv", "my only copy");
  const CliResult r = run_cli("run '" + base + "/study.toml' --out '" + base + "' --no-figures");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(".ncclbot-run"), std::string::npos) << r.err;
  EXPECT_EQ(read_all(base + "/measurement.csv"), "my only copy");
  EXPECT_FALSE(fs::exists(base + "/units"));
}

TEST(RunFolder, AFolderOfAnotherOwnerIsRefusedUnlessReplacing) {
  const std::string dir = temp_dir() + "/run";
  study::RunFolder::claim(dir, "--out", {"run", "a"}, false);
  try {
    study::RunFolder::claim(dir, "--out", {"run", "b"}, false);
    FAIL() << "study b claimed study a's folder";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the study 'a'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(study::RunFolder::claim(dir, "--out", {"telemetry", ""}, false), UsageError);
  EXPECT_NO_THROW(study::RunFolder::claim(dir, "--out", {"run", "a"}, false));
  EXPECT_NO_THROW(study::RunFolder::claim(dir, "--out", {"run", "b"}, true));
  EXPECT_THROW(study::RunFolder::claim(dir, "--out", {"run", "a"}, false), UsageError);  // b's now
}

// Reads a run's --json summary.
nlohmann::json run_json(const std::string& study_file, const std::string& out,
                        const std::string& extra = "") {
  const CliResult r = run_cli("run '" + study_file + "' --out '" + out + "' --no-figures --json " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

TEST(RunFolder, AnotherStudysRunLeavesTheFolderAsItWas) {
  const std::string base = temp_dir(), out = base + "/a";
  write_file(base + "/a.toml", small_study_text("a", "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"));
  write_file(base + "/b.toml", small_study_text("b", "[[policy]]\nname = \"r\"\nspec = \"random\"\n"));
  run_json(base + "/a.toml", out);
  const std::string results = read_all(out + "/results.json"), report = read_all(out + "/report.md");
  const CliResult b = run_cli("run '" + base + "/b.toml' --out '" + out + "' --no-figures");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("'a'"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("--replace"), std::string::npos) << b.err;
  EXPECT_EQ(read_all(out + "/results.json"), results);
  EXPECT_EQ(read_all(out + "/report.md"), report);
  // The same study still resumes in its own folder; with --replace the other study takes it over.
  EXPECT_EQ(run_json(base + "/a.toml", out)["units_reused"], 1);
  EXPECT_EQ(run_json(base + "/b.toml", out, "--replace")["units_reused"], 0);
  EXPECT_NE(read_all(out + "/results.json").find("\"name\": \"b\""), std::string::npos);
}

TEST(RunFolder, ASymlinkedUnitsFolderIsRefusedAndItsTargetLeftAlone) {
  const std::string base = temp_dir(), out = base + "/run", elsewhere = base + "/elsewhere";
  const std::string g = "[[policy]]\nname = \"g\"\nspec = \"greedy\"\n";
  write_file(base + "/study.toml", study(g));
  run_json(base + "/study.toml", out);
  fs::rename(out + "/units", elsewhere);
  fs::create_symlink(elsewhere, out + "/units");
  const auto before = snapshot(elsewhere);
  // One policy more: its unit would be written through the link, and one less: g's deleted there.
  write_file(base + "/study.toml", study("[[policy]]\nname = \"r\"\nspec = \"random\"\n"));
  const CliResult r = run_cli("run '" + base + "/study.toml' --out '" + out + "' --no-figures");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(out + "/units"), std::string::npos) << r.err;
  EXPECT_EQ(snapshot(elsewhere), before);
}

TEST(RunFolder, AFigureOrAMarkerLinkedOutOfTheFolderIsRefused) {
  const std::string base = temp_dir(), out = base + "/run", outside = base + "/outside";
  write_file(base + "/study.toml", study("[[policy]]\nname = \"g\"\nspec = \"greedy\"\n"));
  run_json(base + "/study.toml", out);
  write_file(outside, "mine");
  // The figure script writes under names of its own: a link among them would lead it out.
  fs::create_symlink(outside, out + "/figures/loss_cdf.png");
  const CliResult figures = run_cli("run '" + base + "/study.toml' --out '" + out + "'");
  EXPECT_EQ(figures.exit_code, 2);
  EXPECT_NE(figures.err.find("symbolic link"), std::string::npos) << figures.err;
  EXPECT_EQ(read_all(outside), "mine");
  fs::remove(out + "/figures/loss_cdf.png");
  // The marker is rewritten when the study changes: through a link it would replace another file.
  fs::rename(out + "/.ncclbot-run", outside);
  fs::create_symlink(outside, out + "/.ncclbot-run");
  const std::string marker = read_all(outside);
  write_file(base + "/study.toml", study("[[policy]]\nname = \"r\"\nspec = \"random\"\n"));
  const CliResult linked = run_cli("run '" + base + "/study.toml' --out '" + out + "' --no-figures");
  EXPECT_EQ(linked.exit_code, 2);
  EXPECT_EQ(read_all(outside), marker);
}

}  // namespace
}  // namespace ncclbot::test
