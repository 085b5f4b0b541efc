import argparse

import torch


def example_input(shape=(4, 8)):
    torch.manual_seed(0)
    return torch.randn(*shape, dtype=torch.float32)


def write_inputs(out, kind):
    x = example_input()
    value = {"tensor": x, "tuple": (x,), "list": [x], "dict": {"x": x}}[kind]
    torch.save(value, out)


def write_bad_inputs(out):
    torch.save(example_input((3, 5)), out)


def write_aoti(out):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)
    ).eval()
    with torch.no_grad():
        exported = torch.export.export(model, (example_input(),))
        torch._inductor.aoti_compile_and_package(exported, package_path=out)


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    inputs = commands.add_parser("inputs")
    inputs.add_argument("out")
    inputs.add_argument("kind", choices=["tensor", "tuple", "list", "dict"])
    bad = commands.add_parser("inputs-bad")
    bad.add_argument("out")
    aoti = commands.add_parser("aoti")
    aoti.add_argument("out")
    args = parser.parse_args()

    if args.command == "inputs":
        write_inputs(args.out, args.kind)
    elif args.command == "inputs-bad":
        write_bad_inputs(args.out)
    else:
        write_aoti(args.out)


if __name__ == "__main__":
    main()
