#include "explain/explanation_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>

#include "compare/comparison_text.h"

namespace repro_audit {
namespace {

std::string knob_list(const std::vector<Knob>& knobs) {
  std::vector<std::string> parts;
  for (const auto& knob : knobs) parts.push_back(knob.setting + "=" + knob.value);
  return fmt::format("{}", fmt::join(parts, " and "));
}

std::string upper_side(const std::string& side) { return side == "before" ? "BEFORE" : "AFTER"; }

// How the cell fared under the portable settings, without its digest (flag sets give other digests).
std::string portable_outcome(const CellExplanation& cell) {
  if (cell.portable_digest.empty()) return cell.portable_note;
  return cell.portable_digest == cell.target_digest ? "reproduces" : "one digest";
}

std::string shared_story(const CellExplanation& cell) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", key_variant(cell.key), to_string(cell.change),
                     explanation_headline(cell), cell.inputs, cell.kernels, portable_outcome(cell));
}

}  // namespace

std::string ExplanationGroup::cell() const { return cells.size() == 1 ? first().key : key_variant(first().key); }

std::string ExplanationGroup::flag_sets() const {
  std::vector<std::string> keys;
  for (const auto* cell : cells) keys.push_back(cell->key);
  return flag_sets_text(keys);
}

std::vector<ExplanationGroup> group_explanations(const Explanation& explanation) {
  std::vector<ExplanationGroup> groups;
  std::unordered_map<std::string, std::size_t> index_of;
  for (const auto& cell : explanation.cells) {
    const auto [it, added] = index_of.emplace(shared_story(cell), groups.size());
    if (added)
      groups.push_back({{&cell}});
    else
      groups[it->second].cells.push_back(&cell);
  }
  return groups;
}

std::string explanation_headline(const CellExplanation& cell) {
  if (!cell.explained) return cell.note;
  return fmt::format("reproduced by {} ({}'s bits on this machine, which gives {}'s as is)", knob_list(cell.knobs),
                     upper_side(cell.target),
                     cell.side == "neither" ? std::string("neither side") : upper_side(cell.side));
}

std::vector<DetailLine> group_detail_lines(const ExplanationGroup& group) {
  const auto& cell = group.first();
  std::vector<DetailLine> lines;
  if (cell.explained) {
    lines.push_back({"", cell.pin});
    lines.push_back({"check", cell.command, true});
  }
  if (!cell.inputs.empty()) lines.push_back({"inputs", cell.inputs});
  if (!cell.kernels.empty()) lines.push_back({"kernels", cell.kernels});
  for (const auto& keyed : cell.keyed_on) lines.push_back({"", keyed});
  for (const auto& pin : cell.library_pins) {  // "MKL: what pins it"
    const auto colon = pin.find(": ");
    lines.push_back({"to pin " + pin.substr(0, colon), colon == std::string::npos ? "" : pin.substr(colon + 2)});
  }
  if (!cell.portable_note.empty()) lines.push_back({"portable", cell.portable_note});
  if (!cell.portable_command.empty()) {
    lines.push_back({"on the other host", cell.portable_command + " --repeats 2", true});
    lines.push_back({"", group.cells.size() == 1 && !cell.portable_digest.empty()
                             ? fmt::format("the cell is portable if that gives digest {}", cell.portable_digest)
                             : fmt::format("(for {}; each flag set likewise) the cells are portable if that gives "
                                           "this host's digests under the same settings",
                                           key_flag_set(cell.key))});
  }
  std::vector<std::string> costs, ratios;
  bool same_kind = !cell.pin_cost_kind.empty();
  int tried = 0;
  for (const auto* each : group.cells) {
    same_kind = same_kind && each->pin_cost_kind == cell.pin_cost_kind;
    ratios.push_back(fmt::format("{} {:.2f}x", key_flag_set(each->key), each->pin_ratio));
    tried += each->tried;
    if (!each->pin_cost.empty()) costs.push_back(key_flag_set(each->key) + ": " + each->pin_cost);
  }
  if (group.cells.size() == 1 && !cell.pin_cost.empty())
    lines.push_back({"pinning costs", cell.pin_cost});
  else if (same_kind && cell.pin_cost_kind == "no cost")  // every ratio is noise, however far from 1 it lies
    lines.push_back({"pinning costs", fmt::format("no cost outside the noise under any of the {} flag sets (each "
                                                  "ratio within its timings' spread, so noise: {})",
                                                  group.cells.size(), fmt::join(ratios, ", "))});
  else if (same_kind)  // one word for the group, each flag set's ratio said
    lines.push_back({"pinning costs", fmt::format("{} here under each of the {} flag sets ({})", cell.pin_cost_kind,
                                                  group.cells.size(), fmt::join(ratios, ", "))});
  else if (!costs.empty())
    lines.push_back({"pinning costs", fmt::format("{}", fmt::join(costs, "; "))});
  lines.push_back({"search", fmt::format("{} candidate cell{} run", tried, tried == 1 ? "" : "s")});
  return lines;
}

}  // namespace repro_audit
