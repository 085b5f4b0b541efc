// nn.RNN (tanh), nn.LSTM and nn.GRU forward and backward (the input's gradient and every weight's): one
// layer, two stacked bidirectional layers, and two bidirectional layers over a packed batch of unequal
// lengths. On the CPU, LSTM over a padded batch runs oneDNN's kernel (at::lstm takes mkldnn_rnn for
// float32 when oneDNN is built in); packed batches and the other cells run ATen's own loop of matmuls.
// On CUDA they run cuDNN (_cudnn_rnn), whose documented nondeterminism is cuBLAS's: torch.nn.LSTM's
// documentation sets CUBLAS_WORKSPACE_CONFIG=:16:8 or :4096:2 against it, which is why the
// cublas_workspace_config axis belongs in a CUDA matrix of this probe (examples/rnn_workspace.yaml).
// torch.use_deterministic_algorithms lists none of them.
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>

#include "probe/probe.h"

namespace repro_audit::rnn_probe {
namespace {

struct Shape {
  std::int64_t steps, batch, input, hidden;
};

// CPU: 32 steps of 16 sequences, 32 features, 64 hidden. CUDA: cuDNN's weight gradient is one GEMM per
// layer and direction whose reduction runs over steps x batch (cudnnRNNBackwardWeights in
// aten/src/ATen/native/cudnn/RNN.cpp, _cudnn_rnn_backward_weight): 256 x 64 = 16384 terms into
// gates x 512 by 256 outputs, the tall-skinny product cuBLAS splits along K. A hidden size of 512 keeps
// CUDNN_RNN_ALGO_STANDARD in both directions: RNN.cpp's get_algo takes the persistent small-h kernels
// up to 384 forward and 256 backward (tanh; 192 and 128 for LSTM and GRU, use_rnn_persist_small_h) and
// the persistent static ones for float16 only. Unverified on a GPU.
Shape shape_of(bool on_cuda) { return on_cuda ? Shape{256, 64, 256, 512} : Shape{32, 16, 32, 64}; }

std::int64_t gates_of(const std::string& cell) { return cell == "lstm" ? 4 : cell == "gru" ? 3 : 1; }

// nn.RNNBase's flat weights, in its order: per layer and direction w_ih, w_hh, b_ih, b_hh.
std::vector<std::vector<std::int64_t>> weight_shapes(const std::string& cell, std::int64_t layers, bool bidirectional,
                                                     const Shape& shape) {
  const auto rows = gates_of(cell) * shape.hidden;
  const std::int64_t directions = bidirectional ? 2 : 1;
  std::vector<std::vector<std::int64_t>> shapes;
  for (std::int64_t layer = 0; layer < layers; ++layer)
    for (std::int64_t direction = 0; direction < directions; ++direction) {
      const auto input = layer == 0 ? shape.input : shape.hidden * directions;
      shapes.insert(shapes.end(), {{rows, input}, {rows, shape.hidden}, {rows}, {rows}});
    }
  return shapes;
}

// Each weight a view of one flat leaf, so one gradient holds them all (as cuDNN's flat weight buffer).
std::vector<at::Tensor> weight_views(const at::Tensor& flat, const std::vector<std::vector<std::int64_t>>& shapes) {
  std::vector<at::Tensor> views;
  std::int64_t offset = 0;
  for (const auto& sizes : shapes) {
    std::int64_t count = 1;
    for (auto size : sizes) count *= size;
    views.push_back(flat.narrow(0, offset, count).view(sizes));
    offset += count;
  }
  return views;
}

// Sequence lengths from `steps` down, sorted longest first (pack_padded_sequence's enforce_sorted), and
// the batch size at each step.
at::Tensor batch_sizes_of(ProbeContext& context, const Shape& shape) {
  const auto drawn = context.randint(shape.steps / 4, shape.steps + 1, {shape.batch}).cpu();
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(shape.batch));
  for (std::int64_t i = 0; i < shape.batch; ++i) lengths[static_cast<std::size_t>(i)] = drawn[i].item<std::int64_t>();
  lengths[0] = shape.steps;
  std::sort(lengths.rbegin(), lengths.rend());
  std::vector<std::int64_t> sizes;
  for (std::int64_t step = 0; step < shape.steps; ++step)
    sizes.push_back(
        std::count_if(lengths.begin(), lengths.end(), [step](std::int64_t length) { return length > step; }));
  return at::tensor(sizes);
}

RunFunction prepare(ProbeContext& context) {
  const auto dtype = context.dtype();
  const auto cell = context.parameter("cell");
  const std::int64_t layers = std::stoll(context.parameter("layers"));
  const bool bidirectional = context.parameter("bidirectional") == "true";
  const bool packed = context.parameter("packed") == "true";
  const auto shape = shape_of(context.on_cuda());
  const auto shapes = weight_shapes(cell, layers, bidirectional, shape);
  std::int64_t total = 0;
  for (const auto& sizes : shapes) total += c10::multiply_integers(sizes);
  // Spread values scaled down: the gates stay away from saturation, so the gradients carry every term.
  const auto weights = context.input("weights", requiring_grad(context.randn({total}, dtype) * 0.1));
  const auto batch_sizes = packed ? context.input("batch_sizes", batch_sizes_of(context, shape)) : at::Tensor();
  const auto input_sizes = packed ? std::vector<std::int64_t>{batch_sizes.sum().item<std::int64_t>(), shape.input}
                                  : std::vector<std::int64_t>{shape.steps, shape.batch, shape.input};
  const auto input = context.input("input", requiring_grad(context.randn(input_sizes, dtype)));
  const auto h0 =
      context.input("h0", context.randn({layers * (bidirectional ? 2 : 1), shape.batch, shape.hidden}, dtype) * 0.5);
  const auto rows = packed ? input_sizes[0] : shape.steps;
  const auto columns = packed ? std::vector<std::int64_t>{rows} : std::vector<std::int64_t>{rows, shape.batch};
  auto output_sizes = columns;
  output_sizes.push_back(shape.hidden * (bidirectional ? 2 : 1));
  const auto grad_output = context.input("grad_output", context.randn(output_sizes, dtype));
  return [=] {
    const auto params = weight_views(weights, shapes);
    at::Tensor output, last;
    if (cell == "lstm") {
      const std::vector<at::Tensor> hx = {h0, h0};
      std::tie(output, last, std::ignore) =
          packed ? at::lstm(input, batch_sizes, hx, params, true, layers, 0.0, true, bidirectional)
                 : at::lstm(input, hx, params, true, layers, 0.0, true, bidirectional, false);
    } else {
      if (cell == "gru")
        std::tie(output, last) = packed
                                     ? at::gru(input, batch_sizes, h0, params, true, layers, 0.0, true, bidirectional)
                                     : at::gru(input, h0, params, true, layers, 0.0, true, bidirectional, false);
      else
        std::tie(output, last) =
            packed ? at::rnn_tanh(input, batch_sizes, h0, params, true, layers, 0.0, true, bidirectional)
                   : at::rnn_tanh(input, h0, params, true, layers, 0.0, true, bidirectional, false);
    }
    const auto grads = torch::autograd::grad({output}, {input, weights}, {grad_output});
    return Outputs{
        {"output", output.detach()}, {"h_n", last.detach()}, {"grad_input", grads[0]}, {"grad_weights", grads[1]}};
  };
}

// Named "<cell>[-stacked-bidirectional|-packed]-f32".
// On the CPU only the packed forms are in the default suite: their bits, the forward output's included, change
// with the thread count (ATen's packed loop runs one matmul per step over that step's batch), while the padded
// forms gave the same bits at 1 and 2 threads, by default and under strict (measured with torch 2.14.1).
// On CUDA only the one-layer LSTM is: on an H200 (torch 2.11.0, cuDNN 9.19) every variant gave the same bits
// from run to run and across processes under every profile, and the nine took 70 s of a 175-s default
// audit; the LSTM keeps cuDNN's RNN in the CUDA default audit at 2 s.
Variant rnn(const std::string& cell, const std::string& form, const std::string& description) {
  const bool single = form == "single";
  auto variant = Variant(fmt::format("{}{}-f32", cell, single ? "" : "-" + form), description)
                     .dtype(DType::f32)
                     .parameter("cell", cell)
                     .parameter("layers", single ? "1" : "2")
                     .parameter("bidirectional", single ? "false" : "true")
                     .parameter("packed", form == "packed" ? "true" : "false");
  const std::string on_cuda =
      "on an H200 (torch 2.11.0, cuDNN 9.19) cuDNN's RNN gave the same bits in every run and process, and the "
      "rnn variants took 70 s of a 175-s default audit: the one-layer LSTM stands for them there; run them "
      "with --probe rnn";
  const std::string on_cpu =
      "its CPU kernels gave the same bits at 1 and 2 threads and from run to run: run it here with --probe rnn";
  if (form == "packed")
    variant.default_suite_on({"cpu"}, on_cuda);
  else if (cell == "lstm" && single)
    variant.default_suite_on({"cuda"}, on_cpu);
  else
    variant.default_suite_nowhere(on_cpu + "; " + on_cuda);
  return variant;
}

const bool registered = register_probe(
    ProbeBuilder("rnn")
        .weight(15)
        // A run is hundreds of small parallel regions (steps x layers x directions): on cores other processes
        // hold, 101 runs at 2 threads took over 60 s where they take 2 s on idle ones.
        .timeout(180)
        .describe("RNN (tanh), LSTM and GRU forward and backward: 32 steps of 16 sequences, 32 to 64 features; "
                  "1 layer, 2 bidirectional, 2 bidirectional packed (CUDA: 256 steps of 64, 256 to 512)")
        .variant(rnn("rnn_tanh", "single", "nn.RNN, one layer"))
        .variant(rnn("rnn_tanh", "stacked-bidirectional", "nn.RNN, two bidirectional layers"))
        .variant(rnn("rnn_tanh", "packed", "nn.RNN, two bidirectional layers, packed unequal lengths"))
        .variant(rnn("lstm", "single", "nn.LSTM, one layer (oneDNN on the CPU)"))
        .variant(rnn("lstm", "stacked-bidirectional", "nn.LSTM, two bidirectional layers (oneDNN on the CPU)"))
        .variant(rnn("lstm", "packed", "nn.LSTM, two bidirectional layers, packed unequal lengths"))
        .variant(rnn("gru", "single", "nn.GRU, one layer"))
        .variant(rnn("gru", "stacked-bidirectional", "nn.GRU, two bidirectional layers"))
        .variant(rnn("gru", "packed", "nn.GRU, two bidirectional layers, packed unequal lengths"))
        // Nothing documented on CUDA as use_deterministic_algorithms speaks: LSTM's page names only the
        // workspace variable, which the matrix sweeps.
        .documented({{"cpu", Documented::deterministic}, {"cuda", Documented::unknown}})
        .accumulates("grad_weights", "grad_output")
        .prepare(prepare)
        // nn.RNN, nn.LSTM and nn.GRU call these (_VF.rnn_tanh, _VF.lstm, _VF.gru) with their flat weights.
        .python(R"(
            shapes = []
            gates = {"lstm": 4, "gru": 3, "rnn_tanh": 1}[cell]
            hidden = h0.size(2)
            directions = 2 if bidirectional == "true" else 1
            features = input.size(-1)
            for layer in range(int(layers)):
                for _ in range(directions):
                    width = features if layer == 0 else hidden * directions
                    shapes += [(gates * hidden, width), (gates * hidden, hidden), (gates * hidden,), (gates * hidden,)]
            input.requires_grad_()
            weights.requires_grad_()
            params, offset = [], 0
            for shape in shapes:
                count = torch.Size(shape).numel()
                params.append(weights.narrow(0, offset, count).view(shape))
                offset += count
            hx = (h0, h0) if cell == "lstm" else h0
            op = getattr(torch, cell)
            if packed == "true":
                result = op(input, batch_sizes.cpu(), hx, params, True, int(layers), 0.0, True, directions == 2)
            else:
                result = op(input, hx, params, True, int(layers), 0.0, True, directions == 2, False)
            output, last = result[0], result[1]
            grad_input, grad_weights = torch.autograd.grad([output], [input, weights], [grad_output])
            return {"output": output.detach(), "h_n": last.detach(), "grad_input": grad_input,
                    "grad_weights": grad_weights}
        )"));

}  // namespace
}  // namespace repro_audit::rnn_probe
