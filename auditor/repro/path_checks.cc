#include "repro/path_checks.h"

namespace repro_audit {

const char* const kPathChecker = R"PY(#!/usr/bin/env python3
"""Checks that the Python paths repro-audit's probes declare are still Python torch's."""
import importlib
import json
import os
import sys

import torch
import torch.nn.functional as F


class _Reached(Exception):
    pass


def routes_to(module, function, call, shape, device="elsewhere"):
    """True when `call`, given a tensor that says it is not on the CPU (device="cuda": on CUDA), reaches
    module.function under deterministic algorithms; checked on the CPU, no GPU needed."""
    target = importlib.import_module(module)
    original = getattr(target, function)

    def reached(*args, **kwargs):
        raise _Reached()

    class Elsewhere(torch.Tensor):
        @property
        def is_cpu(self):
            return False

        @property
        def is_cuda(self):
            return device == "cuda"

    setattr(target, function, reached)
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        call(torch.randn(shape).as_subclass(Elsewhere))
        return False
    except _Reached:
        return True
    except Exception:  # the native kernel, run on a CPU tensor that calls itself otherwise
        return False
    finally:
        setattr(target, function, original)
        torch.use_deterministic_algorithms(was)


def native_override(op):
    """True when torch._native registers a Python kernel of its own for aten::`op`."""
    root = os.path.join(os.path.dirname(torch.__file__), "_native", "ops")
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as source:
                    text = source.read()
                if "register_op_override" in text and f'"{op}"' in text:
                    return True
    return False


def main():
    answers = []
    for entry in json.load(sys.stdin):
        try:
            holds = bool(eval(entry["check"], {"routes_to": routes_to, "native_override": native_override,
                                               "torch": torch, "F": F}))
            answers.append({"holds": holds, "detail": "" if holds else "false with torch " + torch.__version__})
        except Exception as error:
            answers.append({"holds": False, "detail": f"{type(error).__name__}: {error}"})
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # torch's teardown (a second of CPU) says nothing more
)PY";

}  // namespace repro_audit
