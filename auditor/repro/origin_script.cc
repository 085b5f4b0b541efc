#include <fmt/format.h>

#include "repro/python_script.h"
#include "repro/python_text.h"

namespace repro_audit {

std::string origin_script(const ReproCell& repro, const CapturedOrigin& origin) {
  auto parts = cell_parts(*repro.cell, repro);
  const auto& cell = *repro.cell;
  parts.subject = fmt::format("{}, the op where the divergence of model cell {} starts", origin.name, cell.cell.key);
  parts.about = {fmt::format("Where it starts: {}", origin.where),
                 "The op alone, on the arguments it had in that run (inputs.pt), repeated: the model's first op whose",
                 "inputs agreed between runs and whose outputs did not."};
  parts.inputs.clear();
  for (const auto& input : origin.tensors) parts.inputs.push_back(input.name);
  parts.expected = {{"verdict", "nondeterministic"},
                    {"digests", nlohmann::json::array()},
                    {"message", "the model's divergence starts at this op: " + origin.where}};
  const auto op = origin.name.substr(origin.name.find("::") + 2);
  if (origin.name.rfind("aten::", 0) != 0 || !is_identifier(op) ||
      (!origin.overload.empty() && !is_identifier(origin.overload)))
    throw std::invalid_argument(fmt::format("the origin op {} is not an ATen op name", quoted(origin.name)));
  parts.globals = {fmt::format("OP = torch.ops.aten.{}.{}", op, origin.overload.empty() ? "default" : origin.overload)};
  parts.body = fmt::format(R"(
      # Fresh copies each run: an in-place op writes its arguments.
      T = [inputs[f"T[{{i}}]"].clone() for i in range(len(inputs))]
      result = OP({})
      results = list(result) if isinstance(result, (list, tuple)) else [result]
      results = [r for r in results if isinstance(r, torch.Tensor)]
      return {{"output" if len(results) == 1 else f"output.{{i}}": r for i, r in enumerate(results)}})",
                           origin.arguments);
  parts.signature = "**inputs";
  parts.op_doc = fmt::format("{} as the model called it.", origin.name);
  return render_script(parts);
}

}  // namespace repro_audit
