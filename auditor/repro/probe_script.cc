#include <fmt/format.h>
#include <fmt/ranges.h>

#include "repro/python_script.h"
#include "repro/python_text.h"

namespace repro_audit {
namespace {

std::string python_dtype(DType dtype) { return std::string("torch.") + long_name(dtype); }

}  // namespace

std::string python_script(const ReproCell& repro) {
  auto parts = cell_parts(*repro.cell, repro);
  parts.about = {fmt::format("{}: {}.", repro.probe->name, repro.probe->description),
                 fmt::format("Variant {}: {}.", repro.variant->name, repro.variant->description)};
  if (!repro.probe->python.differs_reason.empty())
    parts.about.push_back("Not bit-identical with the audited probe: " + repro.probe->python.differs_reason);
  parts.invariance = repro.probe->invariance != Invariance::none;
  parts.globals = {"# The variant's parameters.", "device = DEVICE",
                   fmt::format("dtype = {}", repro.variant->dtype ? python_dtype(*repro.variant->dtype) : "None")};
  for (const auto& [name, value] : repro.variant->parameters)
    parts.globals.push_back(fmt::format("{} = {}", name, quoted(value)));
  for (const auto& input : parts.inputs)
    if (!is_identifier(input))
      throw std::invalid_argument(fmt::format("the input name {} is not an identifier", quoted(input)));
  parts.signature = fmt::format("{}", fmt::join(parts.inputs, ", "));
  parts.op_doc = fmt::format("The op of {}/{}, as the probe runs it.", repro.probe->name, repro.variant->name);
  parts.body = repro.probe->python.code;
  return render_script(parts);
}

}  // namespace repro_audit
