#pragma once
// A hand-made catalogue for the torch-free tests.
#include "config/catalogue.h"

namespace repro_audit::testing {

inline Catalogue test_catalogue() {
  return {
      {"index_put_accumulate",
       "",
       {{"f32", "", {"cpu", "cuda"}, ""}, {"f64", "", {"cpu", "cuda"}, ""}},
       {{"cpu", Documented::alternative_under_strict}, {"cuda", Documented::deterministic}}},
      {"sum", "", {{"f32", "", {"cpu", "cuda"}, ""}}, {{"cpu", Documented::deterministic}}},
      {"ctc_loss",
       "",
       {{"cudnn-f32", "", {"cuda"}, "the cuDNN path exists only on CUDA"}},
       {{"cuda", Documented::raises_under_strict}}},
      {"control.hang", "", {{"default", "", {"cpu"}, ""}}, {}, false},
  };
}

}  // namespace repro_audit::testing
