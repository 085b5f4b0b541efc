#include "repro/python_runner.h"

namespace repro_audit {

// After the generated head (the cell's constants, apply_settings() and op()): digests in repro-audit's
// canonical form, the runs, the verdict as repro-audit judges it, and the comparison with the report.
const char* const kPythonRunner = R"PY(
def default_batch_sizes():
    return [1, 2, 3, 7, 17, 33, 64, 128, 257, 1024]


def batch_sizes_up_to(largest):
    return [size for size in default_batch_sizes() if size <= largest]


def batch_invariance(anchors, fillers, batch_op, sizes, dim=0):
    """op(anchors), then the anchor's slice of op over batches of each size, the anchor first, in the middle, last."""
    outputs = {"reference": batch_op(anchors)}
    for size in sizes:
        if size < 2:
            continue
        places = [("first", 0)] + ([("middle", size // 2)] if size >= 3 else []) + [("last", size - 1)]
        for where, offset in places:
            batch = [torch.cat([filler.narrow(dim, 0, offset), anchor, filler.narrow(dim, offset, size - 1 - offset)],
                               dim).contiguous() for anchor, filler in zip(anchors, fillers)]
            outputs[f"batch={size}@{where}"] = batch_op(batch).narrow(dim, offset, 1)
    return outputs


def layout_invariance(input, layout_op, channels_last=False):
    """op(input) against op of the same values transposed, strided, at storage offset 1 (and channels-last)."""
    reference = input.contiguous()
    outputs = {"reference": layout_op(reference)}
    if reference.dim() >= 2:
        outputs["transposed"] = layout_op(reference.transpose(-1, -2).contiguous().transpose(-1, -2))
    wider = list(reference.shape)
    wider[-1] *= 2
    larger = torch.zeros(wider, dtype=reference.dtype, device=reference.device)
    larger[..., ::2].copy_(reference)
    outputs["strided-slice"] = layout_op(larger[..., ::2])
    storage = torch.zeros(reference.numel() + 1, dtype=reference.dtype, device=reference.device)
    shifted = storage.narrow(0, 1, reference.numel()).view(reference.shape)
    shifted.copy_(reference)
    outputs["storage-offset-1"] = layout_op(shifted)
    if channels_last and reference.dim() == 4:
        outputs["channels-last"] = layout_op(reference.contiguous(memory_format=torch.channels_last))
    return outputs


DTYPE_TAGS = {
    torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
    torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
    torch.bool: "Bool", torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble",
}


def canonical(tensor):
    """The tensor as repro-audit digests it: dense, on the CPU, contiguous."""
    if tensor.is_sparse:
        tensor = tensor.to_dense()
    return tensor.detach().to("cpu").contiguous()


def canonical_bytes(tensor):
    size = tensor.numel() * tensor.element_size()
    return ctypes.string_at(tensor.data_ptr(), size) if size else b""


def digest(tensor):
    """XXH3-128 over the dtype tag and a 0 byte, the rank and sizes (little-endian 64-bit), the elements."""
    head = DTYPE_TAGS[tensor.dtype].encode() + b"\0" + struct.pack("<Q", tensor.dim())
    head += b"".join(struct.pack("<q", size) for size in tensor.shape)
    if xxhash is None:  # not comparable with the report: the runs are compared through SHA-256 instead
        return hashlib.sha256(head + canonical_bytes(tensor)).hexdigest()
    state = xxhash.xxh3_128()
    state.update(head)
    state.update(canonical_bytes(tensor))
    return state.hexdigest()


def combined(outputs):
    """One digest per run over the outputs' names and digests, in order."""
    text = "".join(f"{name}\0{value}\n" for name, value in outputs.items()).encode()
    return xxhash.xxh3_128_hexdigest(text) if xxhash else hashlib.sha256(text).hexdigest()


def gradient(output, input, grad_output):
    return torch.autograd.grad([output], [input], [grad_output])[0]


def synchronize():
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


def run_process(runs):
    """A warm-up and `runs` runs in this process, each seeded alike: per run, each output's digest."""
    apply_settings()
    loaded = torch.load(os.path.join(HERE, "inputs.pt"))
    inputs = {name: tensor.to(DEVICE) for name, tensor in zip(INPUTS, loaded)}
    result = {"runs": [], "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(WARMUP + runs):
            torch.manual_seed(SEED)
            try:
                outputs = op(**inputs)
                synchronize()
            except RuntimeError as error:
                text = str(error).strip().splitlines()[0]
                result["raised" if "deterministic" in text else "error"] = text
                break
            result["runs"].append({name: digest(canonical(tensor)) for name, tensor in outputs.items()})
        alerts = {str(w.message).strip().splitlines()[0] for w in caught if "deterministic" in str(w.message)}
        result["warnings"] = sorted(alerts)
    return result


def judge(processes):
    """(verdict, detail) as repro-audit judges the runs."""
    for key in ("raised", "error"):
        for process in processes:
            if key in process:
                return ("raises" if key == "raised" else "error"), process[key]
    per_process = [[combined(run) for run in process["runs"]] for process in processes]
    every = [value for runs in per_process for value in runs]
    distinct = list(dict.fromkeys(every))
    where = f"{len(every)} runs in {len(processes)} process(es)"
    if len(distinct) > 1:
        scope = "within-process" if any(len(set(runs)) > 1 for runs in per_process) else "across-processes"
        return "nondeterministic", f"{len(distinct)} distinct results in {where} ({scope})"
    if INVARIANCE:
        first = processes[0]["runs"][0]
        reference = next(iter(first.values()))
        varied = [name for name, value in first.items() if value != reference]
        if varied:
            return "varies", f"{len(varied)} of {len(first) - 1} perturbations differ from the reference: " + ", ".join(
                varied[:4])
        return "invariant", f"every perturbation equals the reference bit for bit, {where}"
    alerts = sorted({text for process in processes for text in process["warnings"]})
    if alerts:
        return "warns", alerts[0]
    return "deterministic", f"one result in {where}"


def child_process(runs):
    """Another process, as repro-audit's cross-process repeats: this script with --child."""
    command = [sys.executable, os.path.abspath(__file__), "--child", "--runs", str(runs)]
    done = subprocess.run(command, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return {"error": f"process ended with exit {done.returncode}: {tail[0]}", "runs": []}
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=f"Reproduce repro-audit cell {CELL} with Python torch")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs per process after a warm-up (default {RUNS})")
    parser.add_argument("--processes", type=int, default=PROCESSES, help=f"processes (default {PROCESSES})")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_process(args.runs)))
        return 0
    processes = [run_process(args.runs)] + [child_process(args.runs) for _ in range(args.processes - 1)]
    verdict, detail = judge(processes)
    first = processes[0]["runs"][0] if processes[0]["runs"] else {}
    run_digest = combined(first) if first and xxhash else None
    comparable = xxhash is not None and bool(EXPECTED["digests"])
    agrees = verdict == EXPECTED["verdict"]
    if agrees and comparable and verdict in ("deterministic", "warns", "invariant"):
        agrees = run_digest in EXPECTED["digests"]
    if args.json:
        print(json.dumps({"cell": CELL, "torch": torch.__version__, "verdict": verdict, "detail": detail,
                          "digest": run_digest, "outputs": first if xxhash else {}, "agrees": agrees,
                          "digests_comparable": comparable, "report_verdict": EXPECTED["verdict"]}))
        return 0 if agrees else 1
    print(f"cell     {CELL}")
    print(f"torch    {torch.__version__} (the report's: {REPORT_TORCH})")
    print(f"here     {verdict}: {detail}")
    if run_digest:
        print(f"digest   {run_digest}")
    elif xxhash is None:
        print("digest   none: `pip install xxhash` for digests comparable with the report's")
    print(f"report   {EXPECTED['verdict']}: {EXPECTED['message']}")
    if not agrees:
        why = "another verdict" if verdict != EXPECTED["verdict"] else "another digest"
        print(f"verdict  DIFFERS from the report ({why})")
    else:
        print("verdict  agrees with the report" + ("" if comparable else " (verdicts compared; digests not)"))
    return 0 if agrees else 1


if __name__ == "__main__":
    status = main()
    # All is said: torch's teardown (a second of CPU) would only keep the shell, or a parent's
    # subprocess.run, waiting.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
)PY";

}  // namespace repro_audit
