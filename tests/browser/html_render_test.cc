// The HTML report in a real browser (headless Chromium): it renders with no console errors, makes
// no network requests, and kernel names with <, > and & survive as text. A deliberately bad page
// proves the checks can fail.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../core/sample_reports.h"
#include "fleet/fleet_printers.h"
#include "output/output_format.h"

namespace repro_audit {
namespace {

namespace fs = std::filesystem;

struct Rendered {
  std::string dom;
  std::string log;
  std::set<std::string> page_requests;  // http(s) URLs the page asked for
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string chromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(candidate)) return candidate;
  return "";
}

// Chromium's own services (updates, time, accounts) ask for these whatever the page is.
bool browser_service(const std::string& url) {
  for (const char* host : {".google.com/", ".googleapis.com/", ".gvt1.com/", "accounts.google.com"})
    if (url.find(host) != std::string::npos) return true;
  return false;
}

void collect_urls(const nlohmann::json& node, std::set<std::string>& urls) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "url" && value.is_string()) {
        const auto url = value.get<std::string>();
        if ((url.rfind("http", 0) == 0 || url.rfind("ws", 0) == 0) && !browser_service(url)) urls.insert(url);
      }
      collect_urls(value, urls);
    }
  } else if (node.is_array()) {
    for (const auto& item : node) collect_urls(item, urls);
  }
}

Rendered render(const fs::path& page, const fs::path& folder) {
  const auto net_log = folder / (page.stem().string() + "-net.json");
  const auto dom = folder / (page.stem().string() + ".dom");
  const auto log = folder / (page.stem().string() + ".log");
  // Every request goes to a dead proxy, so nothing leaves the machine even if the page asked.
  const std::string command = chromium() +
                              " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions"
                              " --disable-background-networking --disable-component-update --disable-sync"
                              " --proxy-server=127.0.0.1:9 --enable-logging=stderr --v=0 --log-net-log=" +
                              net_log.string() + " --dump-dom file://" + page.string() + " > " + dom.string() + " 2> " +
                              log.string();
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(log);
  Rendered rendered{slurp(dom), slurp(log), {}};
  std::ifstream in(net_log);
  collect_urls(nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false), rendered.page_requests);
  return rendered;
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (chromium().empty()) GTEST_SKIP() << "no Chromium installed (tools/install-deps installs it)";
    folder_ = fs::temp_directory_path() / ("repro-audit-browser-" + std::to_string(::getpid()));
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path folder_;
};

TEST_F(Browser, TheHtmlReportRendersOfflineWithoutErrorsAndKeepsKernelNamesAsText) {
  const auto page = folder_ / "report.html";
  write_report("html", testing::sample_report(), page.string());
  const auto rendered = render(page, folder_);
  EXPECT_EQ(rendered.log.find(":CONSOLE"), std::string::npos) << rendered.log;
  EXPECT_TRUE(rendered.page_requests.empty()) << *rendered.page_requests.begin();
  // The browser parsed the name as text: serialised back, it is escaped, and no <float> element appeared.
  EXPECT_NE(rendered.dom.find("void at::native::reduce_kernel&lt;float, 4&gt;(T&amp;&amp;)"), std::string::npos);
  EXPECT_EQ(rendered.dom.find("<float"), std::string::npos);
  EXPECT_NE(rendered.dom.find("<svg"), std::string::npos);  // the cost chart rendered inline
}

TEST_F(Browser, TheFleetHeatmapRendersOfflineWithoutErrorsAndKeepsHostNamesAsText) {
  std::vector<ReportFile> inputs;
  for (const char* host : {"gpu-1", "gpu-2", "cpu<3>&x"}) {
    auto report = testing::sample_report();
    report.host = host;
    if (host[0] == 'c') {
      report.environment["aten_cpu_capability"] = "DEFAULT";
      for (auto& cell : report.cells)
        if (!cell.verdict.digest.empty()) cell.verdict.digest = "0123456789abcdef0123456789abcdef";
    }
    inputs.push_back({std::string(host) + ".json", report});
  }
  const auto page = folder_ / "fleet.html";
  std::ofstream(page) << fleet_html(build_fleet(inputs));
  const auto rendered = render(page, folder_);
  EXPECT_EQ(rendered.log.find(":CONSOLE"), std::string::npos) << rendered.log;
  EXPECT_TRUE(rendered.page_requests.empty()) << *rendered.page_requests.begin();
  EXPECT_NE(rendered.dom.find("cpu&lt;3&gt;&amp;x"), std::string::npos);
  EXPECT_EQ(rendered.dom.find("<3>"), std::string::npos);
  EXPECT_NE(rendered.dom.find("differs exactly where ATen capability differs"), std::string::npos);
  // The states that are no agreement render as such: runs that disagree, raised or crashed, skipped.
  for (const char* state : {"class=\"host nd", "class=\"host failed", "class=\"host skip"})
    EXPECT_NE(rendered.dom.find(state), std::string::npos) << state;
  EXPECT_NE(rendered.dom.find("The fields that differ between platforms"), std::string::npos);
}

TEST_F(Browser, TheChecksCatchAPageThatErrsAndReachesOut) {
  const auto page = folder_ / "bad.html";
  std::ofstream(page) << "<!doctype html><img src=\"http://example.com/x.png\"><script>undefinedFunction();</script>";
  const auto rendered = render(page, folder_);
  EXPECT_NE(rendered.log.find(":CONSOLE"), std::string::npos);
  EXPECT_EQ(rendered.page_requests.count("http://example.com/x.png"), 1u);
}

}  // namespace
}  // namespace repro_audit
