#include "output/output_format.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "compare/baseline.h"
#include "compare/comparison_terminal.h"
#include "common/user_error.h"
#include "golden_file.h"
#include "report/cell_printer.h"
#include "report/escape.h"
#include "report/json_io.h"
#include "report/terminal_printer.h"
#include "report/text_format.h"
#include "sample_reports.h"

namespace repro_audit {
namespace {

using testing::cell;
using testing::expect_golden;
using testing::report_of;
using testing::timing;

const char* const kKernel = "void at::native::reduce_kernel<float, 4>(T&&)";

// Before and after a driver upgrade, one cell per class the printers must show. conv2d's kernels
// changed alike under three flag sets (one finding in the terminal, Markdown and HTML); linear's MKL
// took another code path.
Comparison sample_comparison() {
  const std::string column = "default threads=1";
  auto det = [&](const std::string& probe, const std::string& digest,
                 const Timing& time = timing(1000000, 950000, 1050000),
                 const std::string& label = "default threads=1") {
    return cell(probe, "f32", label, VerdictKind::deterministic, digest, time);
  };
  std::vector<CellReport> conv_before, conv_after;
  for (const auto& conv :
       {det("conv2d", "c1"), det("conv2d", "c1", timing(1000000, 950000, 1050000), "strict threads=1"),
        testing::with_threads(det("conv2d", "c1"), "2")}) {
    conv_before.push_back(conv);
    testing::set_kernels(conv_before.back(), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                         testing::onednn_convolution_kernels(false));
    conv_after.push_back(conv);
    testing::set_kernels(conv_after.back(), "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                         testing::onednn_convolution_kernels(true));
  }
  auto linear_before = det("linear", "l1"), linear_after = det("linear", "l1");
  testing::set_kernels(linear_before, "cccccccccccccccccccccccccccccccc", testing::mkl_sgemm_kernels(true));
  testing::set_kernels(linear_after, "dddddddddddddddddddddddddddddddd", testing::mkl_sgemm_kernels(false));
  auto crashed = cell("embedding_bag", "f32", column, VerdictKind::crashed);
  crashed.verdict.message = "SIGSEGV in <cudnn> & \"friends\"";
  auto before =
      report_of({det("sum", "5555555555555555"), conv_before[0], conv_before[1], conv_before[2], det("matmul", "m1"),
                 linear_before, cell("index_add", "f32", column, VerdictKind::nondeterministic),
                 det("scatter_add", "s1"), det("embedding_bag", "e1"), det("cumsum", "u1"),
                 det("bmm", "b1", timing(2000000, 1900000, 2100000)), det("ctc_loss", "t1")});
  auto after =
      report_of({det("sum", "6666666666666666"), conv_after[0], conv_after[1], conv_after[2],
                 det("matmul", "m1", timing(1500000, 1400000, 1600000)), linear_after, det("index_add", "i1"),
                 cell("scatter_add", "f32", column, VerdictKind::nondeterministic), crashed, det("bincount", "n1"),
                 det("bmm", "b1", timing(1000000, 950000, 1050000)), det("ctc_loss", "t1")});
  after.environment["cuda"]["driver"] = 13020;
  // Timings across the upgrade on request: the printers must show SLOWER and FASTER, and say so.
  return compare_snapshots(baseline_from_report(before, "baselines/cpu.yaml"),
                           baseline_from_report(after, "report.json"), {0.10, true});
}

std::string terminal(const Comparison& comparison, const GateResult* gate) {
  std::ostringstream out;
  print_comparison(comparison, gate, out);
  return out.str();
}

// Every registered format has goldens for a report, a gate and a compare: a new format gets its
// golden files from tools/update-golden without a change here.
TEST(PrinterGolden, Report) {
  const auto report = testing::sample_report();
  for (const auto& format : output_formats()) expect_golden("report." + format.extension, format.render_report(report));
}

// The matrix and summary `run` prints, as a terminal without colour shows them, and with colour.
TEST(PrinterGolden, TerminalMatrix) {
  const auto report = testing::sample_report();
  for (const bool color : {false, true}) {
    std::ostringstream out;
    print_matrix(report, out, {color, true});
    print_summary(report, report_fail_on(report), out);
    expect_golden(color ? "report.color.txt" : "report.txt", out.str());
  }
}

// `show REPORT` (the cell list) and `show REPORT CELL` for every cell, composed as the command does.
TEST(PrinterGolden, Show) {
  const auto report = testing::sample_report();
  std::ostringstream out;
  print_cell_list(report, out);
  for (const auto& cell : report.cells) {
    out << "\n";
    print_cell_details(cell, out);
  }
  expect_golden("show.txt", out.str());
}

TEST(PrinterGolden, Baseline) {
  expect_golden("baseline.yaml", baseline_to_yaml(baseline_from_report(testing::sample_report())));
}

TEST(PrinterGolden, Gate) {
  const auto comparison = sample_comparison();
  const auto gate = gate_outcome(comparison, default_gate_policy());
  for (const auto& format : output_formats())
    expect_golden("gate." + format.extension, format.render_comparison(comparison, &gate));
  expect_golden("gate.txt", terminal(comparison, &gate));
}

TEST(PrinterGolden, Compare) {
  const auto comparison = sample_comparison();
  for (const auto& format : output_formats())
    expect_golden("compare." + format.extension, format.render_comparison(comparison, nullptr));
  expect_golden("compare.txt", terminal(comparison, nullptr));
}

TEST(Escape, XmlEscapesMarkupQuotesAndControlCharacters) {
  EXPECT_EQ(xml_escape(kKernel), "void at::native::reduce_kernel&lt;float, 4&gt;(T&amp;&amp;)");
  EXPECT_EQ(xml_escape("say \"hi\" & 'bye'"), "say &quot;hi&quot; &amp; &#39;bye&#39;");
  EXPECT_EQ(xml_escape("\x1b[31mred\x1b[0m"), "\xEF\xBF\xBD[31mred\xEF\xBF\xBD[0m");
  EXPECT_EQ(xml_escape("a\nb"), "a\nb");
}

TEST(Escape, MarkdownTextAndCode) {
  EXPECT_EQ(markdown_text("a <b> *c* | d_e & f\ng -> h"), "a \\<b> \\*c\\* \\| d\\_e \\& f g -> h");
  EXPECT_EQ(markdown_code("sum/f32@cpu|threads=1", true), "`sum/f32@cpu\\|threads=1`");
  EXPECT_EQ(markdown_code("sum/f32@cpu|threads=1", false), "`sum/f32@cpu|threads=1`");
  EXPECT_EQ(markdown_code("a`b", false), "``a`b``");
  EXPECT_EQ(markdown_code("`a", false), "`` `a ``");
  EXPECT_EQ(markdown_fence("x ``` y"), "````");
}

TEST(Printers, HtmlAndXmlNeverCarryRawKernelNamesOrMessages) {
  const auto report = testing::sample_report();
  for (const auto& format : {"html", "junit"}) {
    const auto text = render_report(format, report);
    SCOPED_TRACE(format);
    EXPECT_EQ(text.find(kKernel), std::string::npos);
    EXPECT_EQ(text.find("\"does not have"), std::string::npos);
    EXPECT_EQ(text.find("<cudnn>"), std::string::npos);
    EXPECT_NE(text.find("&lt;cudnn&gt; &amp; friends"), std::string::npos);
  }
  const auto html = render_report("html", report);
  EXPECT_NE(html.find("<code>void at::native::reduce_kernel&lt;float, 4&gt;(T&amp;&amp;)</code>"), std::string::npos);
  EXPECT_NE(html.find("&quot;does not have a deterministic implementation&quot;"), std::string::npos);
  const auto gate_html = render_comparison("html", sample_comparison(), nullptr);
  EXPECT_EQ(gate_html.find("<cudnn>"), std::string::npos);
  EXPECT_NE(gate_html.find("SIGSEGV in &lt;cudnn&gt; &amp; &quot;friends&quot;"), std::string::npos);
}

// conv2d's kernels changed alike under three flag sets: one finding with its flag sets in the
// terminal, Markdown and HTML, every cell in JSON and JUnit; the change said by name.
TEST(Printers, FindingsAreGroupedAcrossFlagSetsAndKernelChangesNamed) {
  const auto comparison = sample_comparison();
  const auto gate = gate_outcome(comparison, default_gate_policy());
  const std::string flag_sets = "(3 flag sets: threads=1, deterministic_algorithms=on,threads=1, defaults)";
  const std::string detail =
      "oneDNN isa AVX2 -> AVX-512 (DL Boost, BF16); oneDNN convolution jit:avx2 -> jit:avx512_core";
  const auto text = terminal(comparison, &gate);
  const auto line = text.rfind('\n', text.find("conv2d/f32@cpu  " + flag_sets)) + 1;
  EXPECT_EQ(text.substr(line, 24), "  WARN  KERNELS-CHANGED ") << text;
  EXPECT_NE(text.find("MKL code path AVX-512 (DL Boost) -> AVX2"), std::string::npos);
  const auto md = render_comparison("markdown", comparison, &gate);
  EXPECT_NE(md.find("| WARN | KERNELS-CHANGED | `conv2d/f32@cpu` " + markdown_text(flag_sets) + " | " +
                    markdown_text(detail) + " |"),
            std::string::npos)
      << md;
  auto html = render_comparison("html", comparison, &gate);
  html = html.substr(0, html.find("<h2>Time against before</h2>"));  // the chart has a bar per cell
  EXPECT_NE(html.find("<code>conv2d/f32@cpu</code> " + xml_escape(flag_sets)), std::string::npos);
  for (const auto& [format, out, shown] : {std::tuple{"terminal", text, detail},
                                           {"markdown", md, markdown_text(detail)},
                                           {"html", html, xml_escape(detail)}}) {
    EXPECT_EQ(out.find("conv2d/f32@cpu|"), std::string::npos) << format;
    ASSERT_NE(out.find(shown), std::string::npos) << format;
    EXPECT_EQ(out.find(shown), out.rfind(shown)) << format << ": the detail once";
  }
  for (const auto& format : {"json", "junit"}) {
    const auto out = render_comparison(format, comparison, &gate);
    for (const auto* key : {"conv2d/f32@cpu|threads=1", "conv2d/f32@cpu|deterministic_algorithms=on,threads=1"})
      EXPECT_NE(out.find(key), std::string::npos) << format << " " << key;
  }
  EXPECT_EQ(gate.warnings.size(), 6u);  // three conv2d cells, linear, matmul, sum's drift: counted per cell
}

TEST(Printers, HtmlLoadsNothingFromTheNetwork) {
  const auto comparison = sample_comparison();
  const auto gate = gate_outcome(comparison, default_gate_policy());
  for (const auto& html :
       {render_report("html", testing::sample_report()), render_comparison("html", comparison, &gate)}) {
    for (const char* reference :
         {"http:", "https:", "//", "src=", "<link", "<script", "@import", "url(", "<img", "<iframe"})
      EXPECT_EQ(html.find(reference), std::string::npos) << reference;
    EXPECT_NE(html.find("<style>"), std::string::npos);
    EXPECT_NE(html.find("<svg"), std::string::npos);
  }
}

TEST(Printers, JunitMarksFailuresAndSkips) {
  const auto xml = render_report("junit", testing::sample_report());
  // The varying invariance cell fails like a nondeterministic one; its invariant twin passes.
  EXPECT_NE(xml.find("<testsuites name=\"repro-audit\" tests=\"8\" failures=\"3\" errors=\"0\" skipped=\"1\""),
            std::string::npos);
  EXPECT_NE(xml.find("<testsuite name=\"batch.mm\" tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("<testsuite name=\"sum\" tests=\"2\" failures=\"0\""), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"nondeterministic: 3 distinct digests in 6 runs (within-process)\" "
                     "type=\"nondeterministic\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"the cuDNN path exists only on CUDA\"/>"), std::string::npos);
  const auto comparison = sample_comparison();
  const auto gate = gate_outcome(comparison, default_gate_policy());
  const auto gate_xml = render_comparison("junit", comparison, &gate);
  EXPECT_NE(gate_xml.find("tests=\"13\" failures=\"2\""), std::string::npos);
  EXPECT_NE(gate_xml.find("type=\"NEW-NONDETERMINISM\""), std::string::npos);
  EXPECT_NE(gate_xml.find("type=\"BROKE\""), std::string::npos);
}

TEST(Printers, MarkdownPutsTheEnvironmentDiffFirst) {
  const auto comparison = sample_comparison();
  const auto gate = gate_outcome(comparison, default_gate_policy());
  const auto md = render_comparison("markdown", comparison, &gate);
  EXPECT_LT(md.find("## Environment"), md.find("## Cells"));
  EXPECT_NE(md.find("| CUDA driver | none | 13.2 |"), std::string::npos);
  // A key's '|' would end the table cell: it is escaped.
  for (const auto& cell : comparison.cells)
    if (cell.key.rfind("sum/", 0) == 0) {
      ASSERT_NE(cell.key.find('|'), std::string::npos);
      EXPECT_NE(md.find(markdown_code(cell.key, true)), std::string::npos) << cell.key;
    }
  const auto text = terminal(comparison, &gate);
  EXPECT_LT(text.find("Environment"), text.find("Cells"));
}

// One legend for the terminal, Markdown and HTML: each lists every mark with its meaning.
TEST(Printers, EveryMatrixLegendExplainsEveryMark) {
  const auto report = testing::sample_report();
  std::ostringstream terminal_out;
  print_matrix(report, terminal_out, {});
  for (const auto& [name, text] : {std::pair{"terminal", terminal_out.str()},
                                   {"markdown", render_report("markdown", report)},
                                   {"html", render_report("html", report)}})
    for (const auto& entry : verdict_legend()) {
      SCOPED_TRACE(name);
      const auto line = entry.mark + " " + entry.meaning;
      EXPECT_NE(text.find(std::string(name) == "markdown" ? markdown_text(line) : line), std::string::npos)
          << entry.mark;
    }
}

TEST(Printers, InterruptedAuditsSaySo) {
  auto report = testing::sample_report();
  EXPECT_EQ(render_report("markdown", report).find("Interrupted"), std::string::npos);
  report.complete = false;
  EXPECT_NE(render_report("markdown", report).find("**Interrupted:** only the cells that finished are reported."),
            std::string::npos);
  EXPECT_NE(render_report("html", report).find("Interrupted: only the cells that finished are reported."),
            std::string::npos);
}

TEST(Printers, UnknownFormatNamesTheValidOnes) {
  try {
    render_report("yaml", testing::sample_report());
    FAIL() << "no error";
  } catch (const UserError& error) {
    // Every registered name, so a new format needs no change here.
    std::string names;
    for (const auto& name : output_format_names()) names += (names.empty() ? "" : ", ") + name;
    EXPECT_EQ(std::string(error.what()), "unknown output format 'yaml'; valid formats: " + names);
    EXPECT_NE(names.find("json, junit, markdown, html"), std::string::npos);
  }
  EXPECT_THROW(render_comparison("pdf", sample_comparison(), nullptr), UserError);
}

// Each row becomes a CLI option and golden file names: both must be distinct, and the goldens must
// not collide with the terminal (.txt) and baseline (.yaml) ones.
TEST(Printers, EveryFormatHasItsOwnOptionAndGoldenNames) {
  std::set<std::string> names, extensions = {"txt", "color.txt", "yaml"};
  for (const auto& format : output_formats()) {
    EXPECT_TRUE(names.insert(format.name).second) << format.name;
    EXPECT_TRUE(extensions.insert(format.extension).second) << format.extension;
    EXPECT_FALSE(format.help.empty()) << format.name;
    EXPECT_TRUE(format.render_report && format.render_comparison) << format.name;
  }
}

TEST(Printers, WritesSeveralFormatsAtOnce) {
  const auto dir = std::filesystem::temp_directory_path() / ("repro-audit-printers-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto report = testing::sample_report();
  write_reports({{"json", (dir / "r.json").string()}, {"html", (dir / "r.html").string()}}, report);
  EXPECT_EQ(load_report_file((dir / "r.json").string()).cells.size(), report.cells.size());
  std::ifstream html(dir / "r.html");
  std::stringstream text;
  text << html.rdbuf();
  EXPECT_EQ(text.str(), render_report("html", report));
  // An unknown format among them writes nothing.
  EXPECT_THROW(write_reports({{"markdown", (dir / "r.md").string()}, {"pdf", (dir / "r.pdf").string()}}, report),
               UserError);
  EXPECT_FALSE(std::filesystem::exists(dir / "r.md"));
  const auto comparison = sample_comparison();
  write_comparisons({{"junit", (dir / "g.xml").string()}}, comparison, nullptr);
  EXPECT_TRUE(std::filesystem::exists(dir / "g.xml"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace repro_audit
