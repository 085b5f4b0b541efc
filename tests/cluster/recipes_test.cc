// The scheduler recipes in tools/cluster: the Kubernetes manifest parses, runs an Indexed Job whose
// shard count agrees everywhere, and runs the same `repro-audit run` and `merge` command lines as
// the Slurm script (which the Slurm round trip runs for real).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/pattern.h"
#include "test_paths.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

const fs::path kCluster = fs::path(test_paths::kSourceDir) / "tools" / "cluster";

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "repro-audit run ... --json DIR/shard-INDEX.json" with the folder and index variable made neutral.
std::string normalised(std::string command) {
  command = Pattern(R"(\"?\$\{?repro_audit\}?\"?)").replace(command, "repro-audit");
  command = Pattern(R"(\"?\$out\"?/)").replace(command, "DIR/");
  command = Pattern(R"(\"?/reports/)").replace(command, "DIR/");
  command = Pattern(R"(\$SLURM_ARRAY_TASK_ID|\$JOB_COMPLETION_INDEX)").replace(command, "INDEX");
  command = Pattern("\"").replace(command, "");
  return command;
}

// The line of `text` that runs `repro-audit <verb>`, normalised.
std::string command_line(const std::string& text, const std::string& verb) {
  const auto match = Pattern("exec ([^\\n]*repro.audit\\}?\"? " + verb + " [^\\n]*)").search(text);
  if (!match) return "";
  return normalised((*match)[1]);
}

std::vector<YAML::Node> documents() { return YAML::LoadAllFromFile((kCluster / "k8s-audit-job.yaml").string()); }

YAML::Node job(const std::string& name) {
  for (const auto& document : documents())
    if (document["kind"].as<std::string>() == "Job" && document["metadata"]["name"].as<std::string>() == name)
      return document;
  return {};
}

std::string container_script(const YAML::Node& job) {
  const auto command = job["spec"]["template"]["spec"]["containers"][0]["command"];
  std::string script;
  for (const auto& word : command) script += word.as<std::string>() + "\n";
  return script;
}

TEST(Recipes, KubernetesManifestIsAnIndexedJobWithOneShardCount) {
  const auto shards = job("repro-audit-shards");
  ASSERT_TRUE(shards) << "no Job named repro-audit-shards";
  const auto spec = shards["spec"];
  EXPECT_EQ(spec["completionMode"].as<std::string>(), "Indexed");
  const int completions = spec["completions"].as<int>();
  EXPECT_EQ(spec["parallelism"].as<int>(), completions);
  const auto script = container_script(shards);
  EXPECT_NE(script.find("--shards " + std::to_string(completions) + " "), std::string::npos) << script;
  const auto merge = job("repro-audit-merge");
  ASSERT_TRUE(merge) << "no Job named repro-audit-merge";
  bool counted = false;
  for (const auto& variable : merge["spec"]["template"]["spec"]["containers"][0]["env"])
    if (variable["name"].as<std::string>() == "SHARDS") {
      EXPECT_EQ(variable["value"].as<std::string>(), std::to_string(completions));
      counted = true;
    }
  EXPECT_TRUE(counted) << "the merge Job does not know the shard count";
  // Both Jobs mount the same claim at /reports.
  for (const auto& node : {shards, merge}) {
    const auto pod = node["spec"]["template"]["spec"];
    EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(), "repro-audit-reports");
    EXPECT_EQ(pod["containers"][0]["volumeMounts"][0]["mountPath"].as<std::string>(), "/reports");
  }
}

TEST(Recipes, KubernetesAndSlurmRunTheSameCommands) {
  const auto sbatch = slurp(kCluster / "slurm-audit.sbatch");
  const auto k8s_run = command_line(container_script(job("repro-audit-shards")), "run");
  const auto slurm_run = command_line(sbatch, "run");
  ASSERT_FALSE(slurm_run.empty()) << sbatch;
  ASSERT_FALSE(k8s_run.empty());
  // Slurm passes the user's run options through ($@); Kubernetes spells a config and --shards.
  EXPECT_EQ(slurm_run, "repro-audit run $@ --json DIR/shard-INDEX.json");
  EXPECT_EQ(k8s_run, "repro-audit run --config /config/audit.yaml --shards 3 --json DIR/shard-INDEX.json");
  const auto k8s_merge = command_line(container_script(job("repro-audit-merge")), "merge");
  const auto slurm_merge = command_line(sbatch, "merge");
  EXPECT_EQ(slurm_merge, "repro-audit merge DIR/shard-*.json -o DIR/merged.json --html DIR/merged.html");
  EXPECT_EQ(k8s_merge, slurm_merge);
}

TEST(Recipes, SlurmScriptIsAJobArrayWithADependentMerge) {
  const auto sbatch = slurp(kCluster / "slurm-audit.sbatch");
  EXPECT_NE(sbatch.find("--array=\"0-$((shards - 1))\""), std::string::npos);
  EXPECT_NE(sbatch.find("--dependency=\"afterany:$array\""), std::string::npos);
  EXPECT_NE(fs::status(kCluster / "slurm-audit.sbatch").permissions() & fs::perms::owner_exec, fs::perms::none)
      << "run directly on a login node, the script submits itself";
}

}  // namespace
}  // namespace repro_audit
