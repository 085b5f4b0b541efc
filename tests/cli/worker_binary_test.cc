// The front end (repro-audit) loads no libtorch: it reads reports itself, lists the probes and runs CPU audits where
// no CUDA driver loads (with the catalogue built into it), and hands every other command to repro-audit-torch beside
// it (`py`, `explain` and `selftest` to repro-audit-cpu there, once repro-audit-torch's CUDA facts are kept). The
// workers of a CPU audit run repro-audit-cpu, the same program without libtorch's CUDA half, where the build made one;
// the report's environment still holds this machine's CUDA facts, as `env` says them (checked here too: the torch tests
// link libtorch without its CUDA half).
#include <nlohmann/json.hpp>

#include <fstream>

#include "cli_tools.h"

namespace {

using namespace testing_cli;
using json = nlohmann::json;
using WorkerBinary = CliTest;

TEST_F(WorkerBinary, ACpuAuditsWorkersLoadNoCudaAndItsReportKeepsTheCudaFacts) {
  const fs::path cpu_binary = fs::path(test_paths::kBinary).parent_path() / "repro-audit-cpu";
  if (!fs::exists(cpu_binary)) GTEST_SKIP() << "this build's libtorch has no CUDA half: no repro-audit-cpu";
  // What each binary loads: libtorch_cuda in repro-audit-torch, not in repro-audit-cpu.
  const auto torch_binary = fs::path(test_paths::kBinary).parent_path() / "repro-audit-torch";
  EXPECT_NE(shell("ldd " + torch_binary.string()).output.find("libtorch_cuda"), std::string::npos);
  const auto cpu_libraries = shell("ldd " + cpu_binary.string());
  EXPECT_EQ(cpu_libraries.exit_code, 0) << cpu_libraries.output;
  EXPECT_EQ(cpu_libraries.output.find("libtorch_cuda"), std::string::npos) << cpu_libraries.output;
  EXPECT_NE(cpu_libraries.output.find("libtorch_cpu"), std::string::npos) << cpu_libraries.output;

  // The CUDA facts kept between audits (fingerprint/kept_cuda_facts.h) in a cache folder of this test's.
  const auto cache = "XDG_CACHE_HOME=" + path("cache") + " ";
  const auto log = path("audit.jsonl");
  const auto audit_with = [&](const std::string& name, const std::string& prefix) {
    std::filesystem::remove(log);
    // No timing rounds: what is checked is which programs ran and the facts they gave.
    const auto audit = run("run " + kSmallAudit + " --processes 2 --no-cost --json " + path(name),
                           cache + prefix + "REPRO_AUDIT_AUDIT_LOG=" + log);
    EXPECT_EQ(audit.exit_code, 0) << audit.output;
    return json::parse(slurp(log));
  };
  const auto line = audit_with("report.json", "");
  EXPECT_EQ(line.at("worker"), cpu_binary.string());
  EXPECT_GE(line.at("workers"), 2);
  // This machine has no CUDA driver: the front end supervised the audit itself, and its first worker was
  // repro-audit-torch, whose fingerprint gave the CUDA facts (not another process started for them).
  ASSERT_EQ(shell("ldconfig -p | grep -q 'libcuda\\.so\\.1 '").exit_code, 1) << "a CUDA driver is installed";
  EXPECT_EQ(line.at("supervisor"), fs::canonical(test_paths::kBinary).string());
  EXPECT_EQ(line.at("cuda_facts"), "a worker");
  const auto report = json::parse(slurp(path("report.json")));
  EXPECT_EQ(report.at("cells").at(0).at("verdict"), "deterministic");

  // The CPU workers' fingerprint lacks CUDA (their process never loaded it): the first worker's fills it in.
  const auto env = run("env");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  const auto here = json::parse(env.output);
  const auto& environment = report.at("environment");
  EXPECT_EQ(environment.at("torch_cuda_build"), here.at("torch_cuda_build"));
  EXPECT_EQ(here.at("torch_cuda_build"), true);
  EXPECT_EQ(environment.at("cuda"), here.at("cuda"));
  EXPECT_TRUE(here.at("cuda").contains("compiled_runtime"));
  for (const auto& [key, value] : here.at("sources").items())
    if (key.rfind("cuda", 0) == 0) EXPECT_EQ(environment.at("sources").value(key, json()), value) << key;
  for (const auto& [key, value] : environment.at("sources").items())
    if (key.rfind("cuda", 0) == 0) EXPECT_TRUE(here.at("sources").contains(key)) << key;
  EXPECT_EQ(environment.at("torch"), here.at("torch"));

  // That worker kept the facts: the next audit's workers are all CPU workers, and its report has the same
  // facts, the runtime's source saying where they were kept from.
  const auto kept = audit_with("kept.json", "");
  EXPECT_EQ(kept.at("cuda_facts"), "kept");
  // A report's environment with the kept facts: `env`'s, the runtime's source saying where they were kept from.
  const auto expect_kept_facts = [&](const std::string& report_name) {
    const auto kept_environment = json::parse(slurp(path(report_name))).at("environment");
    EXPECT_EQ(kept_environment.at("cuda"), here.at("cuda"));
    EXPECT_EQ(kept_environment.at("torch_cuda_build"), true);
    for (const auto& [key, value] : here.at("sources").items())
      if (key.rfind("cuda.", 0) == 0) EXPECT_EQ(kept_environment.at("sources").value(key, json()), value) << key;
    EXPECT_NE(kept_environment.at("sources").at("cuda").get<std::string>().find("read by repro-audit-torch at "),
              std::string::npos)
        << kept_environment.at("sources").dump();
    EXPECT_EQ(kept_environment.at("numerics_environment"), environment.at("numerics_environment"));
    return kept_environment;
  };
  expect_kept_facts("kept.json");

  // What they depend on changed, or the file is not theirs: asked of repro-audit-torch again.
  EXPECT_EQ(audit_with("loader.json", "LD_LIBRARY_PATH=/nonexistent-folder${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ")
                .at("cuda_facts"),
            "a worker");
  EXPECT_EQ(audit_with("back.json", "").at("cuda_facts"), "a worker");  // kept under that variable
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(path("cache/repro-audit"))) files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  auto file = json::parse(slurp(files[0].string()));
  file["key"]["libraries"][0]["mtime_ns"] = file["key"]["libraries"][0].value("mtime_ns", 0) + 1;
  std::ofstream(files[0]) << file.dump();
  EXPECT_EQ(audit_with("library.json", "").at("cuda_facts"), "a worker");
  std::ofstream(files[0]) << "{ not JSON";
  EXPECT_EQ(audit_with("corrupt.json", "").at("cuda_facts"), "a worker");
  EXPECT_EQ(audit_with("again.json", "").at("cuda_facts"), "kept");

  // `py` (as `explain` and `selftest`) goes to repro-audit-cpu where those facts are kept: its supervisor loads
  // no CUDA half, and its report's environment is the one repro-audit-torch gives. Where they are not, it goes
  // to repro-audit-torch, which keeps them for the next command.
  const auto py_with = [&](const std::string& name) {
    std::filesystem::remove(log);
    const auto audit = run("py " + std::string(test_paths::kSourceDir) +
                               "/examples/py/train_step.py:scatter_sum --device cpu --profile strict --axis threads=1 "
                               "--repeats 2 --processes 1 --per-op off --no-cost --json " +
                               path(name),
                           cache + "REPRO_AUDIT_AUDIT_LOG=" + log);
    EXPECT_EQ(audit.exit_code, 0) << audit.output;
    return json::parse(slurp(log));
  };
  EXPECT_EQ(py_with("py.json").at("supervisor"), cpu_binary.string());
  const auto py_environment = expect_kept_facts("py.json");
  EXPECT_FALSE(py_environment.value("python_torch", "").empty()) << py_environment.dump();
  fs::remove(files[0]);
  EXPECT_EQ(py_with("py-torch.json").at("supervisor"), fs::canonical(torch_binary).string());
  const auto torch_environment = json::parse(slurp(path("py-torch.json"))).at("environment");
  EXPECT_EQ(torch_environment.at("cuda"), here.at("cuda"));
  EXPECT_EQ(torch_environment.at("sources").at("cuda"), here.at("sources").at("cuda"));
  EXPECT_TRUE(fs::exists(files[0])) << "repro-audit-torch kept no CUDA facts for the next command";
}

// A CPU audit's later timing rounds run in processes forked from one server of their batch's environment
// (protocol/fork_rounds.h): through copies of the programs that log what starts repro-audit-cpu, one start
// (the server; the first worker is repro-audit-torch) where the two later rounds' workers each loaded
// libtorch before, and the cell timed in its three rounds all the same.
TEST_F(WorkerBinary, LaterTimingRoundsOfACpuAuditAreForkedFromOneServer) {
  const auto programs = programs_logging_cpu_starts(path("programs"));
  if (programs.empty()) GTEST_SKIP() << "this build's libtorch has no CUDA half: no repro-audit-cpu";
  const auto audit = shell(programs + " run " + kSmallAudit + " --processes 1 --json " + path("report.json"));
  ASSERT_EQ(audit.exit_code, 0) << audit.output;
  EXPECT_EQ(slurp(path("programs/cpu-starts.log")), "worker\n") << "a later round's worker loaded libtorch itself";
  const auto cell = json::parse(slurp(path("report.json"))).at("cells").at(0);
  EXPECT_EQ(cell.at("verdict"), "deterministic");
  const auto& observation = cell.at("observations").at(0);
  EXPECT_EQ(observation.at("timing_rounds"), 3) << observation.dump();
  EXPECT_GT(cell.at("timing").value("ci_high_ns", 0), 0) << cell.dump();
}

// The commands that read only reports and baselines run in the front end, which links no libtorch: a
// copy of it alone runs them all, and says of every other command that it needs repro-audit-torch.
TEST_F(WorkerBinary, TheFrontEndReadsReportsWithoutLibtorchAndHandsEveryOtherCommandOn) {
  const auto front_end = shell("ldd " + std::string(test_paths::kBinary));
  EXPECT_EQ(front_end.exit_code, 0) << front_end.output;
  EXPECT_EQ(front_end.output.find("libtorch"), std::string::npos) << front_end.output;
  const auto report = shared_report("small", kSmallAudit);  // run through the front end, by the torch side
  ASSERT_FALSE(report.empty());
  fs::create_directories(path("alone"));
  const auto alone = path("alone/repro-audit");
  fs::copy_file(test_paths::kBinary, alone);
  const auto missing = "cannot start " + path("alone/repro-audit-torch") + ", which this command needs";
  const std::pair<std::string, int> reading[] = {
      {"show " + report, 0},
      {"baseline " + report + " -o " + path("baseline.yaml"), 0},
      {"compare " + report + " " + path("baseline.yaml"), 0},
      {"gate --baseline " + path("baseline.yaml") + " --report " + report, 0},
      {"fleet " + report + " " + report, 1},  // its own answer: one host twice compares nothing
      {"merge " + report + " -o " + path("merged.json"), 0},
      {"list --all", 0},
      {"--version", 0}};
  for (const auto& [command, code] : reading) {
    const auto ran = shell(alone + " " + command);
    EXPECT_EQ(ran.exit_code, code) << command << "\n" << ran.output;
    EXPECT_EQ(ran.output.find("cannot start"), std::string::npos) << command << "\n" << ran.output;
  }
  for (const auto& command :
       {"run " + kSmallAudit, "gate --baseline " + path("baseline.yaml"), std::string("list --sensitivity"),
        std::string("env"), "repro " + report + " 'sum*' -o " + path("out"), std::string("worker")}) {
    const auto ran = shell(alone + " " + command);
    EXPECT_EQ(ran.exit_code, 2) << command << "\n" << ran.output;
    EXPECT_NE(ran.output.find(missing), std::string::npos) << command << "\n" << ran.output;
  }
  // The catalogue built into the front end is the torch side's, every probe and declaration `list` prints.
  const auto listed = run("list --all");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("index_add"), std::string::npos) << listed.output;
  const auto torch_side = (fs::path(test_paths::kBinary).parent_path() / "repro-audit-torch").string();
  const auto torch_listed = shell(torch_side + " list --all");
  EXPECT_EQ(torch_listed.exit_code, 0) << torch_listed.output;
  EXPECT_EQ(torch_listed.output, listed.output);
  EXPECT_EQ(shell(alone + " list --all").output, listed.output);
  // A GPU where no driver loads: both sides resolve the device alike (every cell unsupported, nothing audited).
  const auto gpu = run("run --probe sum/f32 --device cuda --repeats 2 --no-cost");
  const auto torch_gpu = shell(torch_side + " run --probe sum/f32 --device cuda --repeats 2 --no-cost");
  EXPECT_EQ(gpu.exit_code, 1) << gpu.output;
  EXPECT_EQ(gpu.exit_code, torch_gpu.exit_code) << torch_gpu.output;
  for (const auto* said : {"3 cells: 3 unsupported", "skipped: no CUDA device is usable on this machine"}) {
    EXPECT_NE(gpu.output.find(said), std::string::npos) << gpu.output;
    EXPECT_NE(torch_gpu.output.find(said), std::string::npos) << torch_gpu.output;
  }
  // The portability matrix asks libtorch which capabilities the CPU has: handed on.
  const auto portability = shell(alone + " run --probe sum/f32 --matrix portability");
  EXPECT_EQ(portability.exit_code, 2) << portability.output;
  EXPECT_NE(portability.output.find(missing), std::string::npos) << portability.output;
  const auto bad = run("run --device cpu --repeats 0");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_EQ(bad.output.find("cannot start"), std::string::npos) << bad.output;
}

// The CUDA facts of `env` (repro-audit-torch links the whole of libtorch): without a GPU, why not.
TEST_F(WorkerBinary, CudaFactsSayHonestlyWhyTheyAreUnavailable) {
  const auto env = run("env");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  const auto cuda = json::parse(env.output).at("cuda");
  if (cuda.value("available", false)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(cuda.value("reason", "").empty());
  EXPECT_TRUE(!cuda.contains("devices") || cuda.at("devices").empty());
  if (cuda.contains("compiled_runtime")) {
    // A CUDA build asks NVML even without a GPU: it gives the driver version or says why not.
    EXPECT_NE(cuda.contains("nvml"), cuda.contains("nvml_unavailable"));
    if (cuda.value("driver", 0) == 0) EXPECT_FALSE(cuda.contains("nvml"));
  } else {
    EXPECT_EQ(cuda.at("reason"), "built without CUDA");
  }
}

TEST_F(WorkerBinary, CudaFactsRecordEachGpusMemoryAndModes) {
  const auto env = run("env");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  const auto cuda = json::parse(env.output).at("cuda");
  if (!cuda.value("available", false)) GTEST_SKIP() << "no GPU: " << cuda.value("reason", "");
  ASSERT_FALSE(cuda.at("devices").empty());
  for (const auto& device : cuda.at("devices")) {
    EXPECT_GT(device.at("memory_bytes").get<std::uint64_t>(), 0u);
    EXPECT_GT(device.at("sm_count").get<int>(), 0);
    EXPECT_NE(device.at("compute_capability").get<std::string>().find('.'), std::string::npos);
    if (cuda.contains("nvml")) EXPECT_TRUE(device.contains("mig") || device.contains("ecc"));
  }
  EXPECT_TRUE(cuda.contains("cublas"));
}

}  // namespace
