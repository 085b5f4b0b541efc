#pragma once
// Test models built and saved from C++ (torch::jit::Module with parameters and defined methods),
// so the tests need no Python.
#include <torch/script.h>

#include <string>

namespace repro_audit::testing {

// y = x W^T + b, a module of its own class (each name once per saved model).
inline torch::jit::Module linear_module(const std::string& class_name, std::int64_t in, std::int64_t out) {
  torch::jit::Module module("__torch__." + class_name);
  // Trainable, as nn.Parameter makes them.
  module.register_parameter("weight", (torch::randn({out, in}) / std::sqrt(static_cast<double>(in))).requires_grad_(),
                            false);
  module.register_parameter("bias", (torch::randn({out}) * 0.1).requires_grad_(), false);
  module.define(R"(
def forward(self, x):
    return torch.linear(x, self.weight, self.bias)
)");
  return module;
}

// x[4, 8] -> fc1 (8 -> 16) -> relu -> fc2 (16 -> 4): deterministic.
inline void save_mlp(const std::string& path) {
  torch::manual_seed(0);
  torch::jit::Module module("__torch__.Mlp");
  module.register_module("fc1", linear_module("MlpFc1", 8, 16));
  module.register_module("fc2", linear_module("MlpFc2", 16, 4));
  module.define(R"(
def forward(self, x):
    return self.fc2.forward(torch.relu(self.fc1.forward(x)))
)");
  module.save(path);
}

// x[1024, 64] -> fc1 -> relu -> fc2 -> relu -> update -> head (64 -> 8). `update` accumulates the
// 2^20 values of its input (repeated) into 1024 float32 slots with index_put_(accumulate=True):
// nondeterministic on 2 CPU threads, deterministic under deterministic algorithms.
inline void save_scatter_model(const std::string& path) {
  torch::manual_seed(0);
  torch::jit::Module update("__torch__.Update");
  update.register_buffer("index", torch::randint(0, 1024, {1 << 20}));
  update.define(R"(
def forward(self, h):
    values = h.reshape([-1]).repeat([16])
    target = torch.zeros([1024], dtype=h.dtype)
    target.index_put_([self.index], values, True)
    return target.reshape([16, 64])
)");
  torch::jit::Module module("__torch__.ScatterNet");
  module.register_module("fc1", linear_module("ScatterFc1", 64, 64));
  module.register_module("fc2", linear_module("ScatterFc2", 64, 64));
  module.register_module("update", update);
  module.register_module("head", linear_module("ScatterHead", 64, 8));
  module.define(R"(
def forward(self, x):
    h = torch.relu(self.fc2.forward(torch.relu(self.fc1.forward(x))))
    return self.head.forward(self.update.forward(h))
)");
  module.save(path);
}

// A model whose forward raises: it multiplies its [4, 4] input by a [5, 5] weight.
inline void save_throwing_model(const std::string& path) {
  torch::jit::Module module("__torch__.Refuses");
  module.register_parameter("weight", torch::ones({5, 5}), false);
  module.define(R"(
def forward(self, x):
    return torch.mm(x, self.weight)
)");
  module.save(path);
}

}  // namespace repro_audit::testing
