"""Results that differ only in what lies beyond dtype, shape and values (tests/cli/python_digest_test.cc,
tests/torch/tensor_digest_test.cc): the py runner's digest tells them apart, agrees with the C++ one, and
needs no dense copy of a sparse or huge result."""
import dataclasses
import os

import torch

CALLS = {"count": 0}


def _second():
    """True on every second call: a result that alternates between two forms."""
    CALLS["count"] += 1
    return CALLS["count"] % 2 == 0


def _complex():
    return torch.complex(torch.arange(6.0), torch.arange(6.0) + 0.5).reshape(2, 3)


def _matrix():
    return torch.tensor([[1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 3.0, 0.0], [0.0, 4.0, 0.0, 0.0], [5.0, 0.0, 0.0, 6.0]])


def alternates_conj():
    value = _complex()
    return value.conj() if _second() else value


def alternates_neg():
    value = _complex()
    return value.conj().imag if _second() else value.imag


def alternates_scale():
    return torch._make_per_tensor_quantized_tensor(torch.arange(8, dtype=torch.uint8), 0.2 if _second() else 0.1, 3)


def alternates_zero_point():
    return torch._make_per_tensor_quantized_tensor(torch.arange(8, dtype=torch.uint8), 0.1, 4 if _second() else 3)


def alternates_channel_scales():
    scales = torch.tensor([0.1, 0.3 if _second() else 0.2], dtype=torch.float64)
    return torch._make_per_channel_quantized_tensor(torch.arange(8, dtype=torch.int8).reshape(2, 4), scales,
                                                    torch.tensor([0, 1]), 0)


def alternates_csr_value():
    matrix = _matrix()
    if _second():
        matrix[3, 3] = 7.0
    return matrix.to_sparse_csr()


def sparse_layouts():
    matrix = _matrix()
    return {"coo": matrix.to_sparse(), "csr": matrix.to_sparse_csr(), "csc": matrix.to_sparse_csc(),
            "bsr": matrix.to_sparse_bsr((2, 2)), "bsc": matrix.to_sparse_bsc((2, 2))}


def huge_sparse():
    # 2**40 elements: made dense, it would need 4 TiB.
    return torch.sparse_coo_tensor(torch.tensor([[0, 2**40 - 1]]), torch.tensor([1.0, 2.0]), (2**40,))


_TWO_GIB = []


def two_gib():
    # Made once per process and returned by every run: what the test proves is its digest (over 2 GiB, past
    # 32-bit sizes), not its allocation, whose page faults cost seconds a run on a virtual machine.
    if not _TWO_GIB:
        _TWO_GIB.append(torch.ones(2**31 + 8, dtype=torch.uint8))
    return _TWO_GIB[0]


def parity():
    """The tensors tests/torch/tensor_digest_test.cc builds alike and digests in C++."""
    value, matrix = _complex(), _matrix()
    return {"plain": torch.arange(6.0).reshape(2, 3), "transposed": torch.arange(6.0).reshape(2, 3).t(),
            "integers": torch.arange(5), "conj": value.conj(), "conj_transposed": value.t().conj(),
            "neg": value.conj().imag,
            "per_tensor": torch._make_per_tensor_quantized_tensor(torch.arange(8, dtype=torch.uint8), 0.1, 3),
            "per_channel": torch._make_per_channel_quantized_tensor(
                torch.arange(8, dtype=torch.int8).reshape(2, 4), torch.tensor([0.1, 0.2], dtype=torch.float64),
                torch.tensor([0, 1]), 0),
            "packed": torch.quantize_per_tensor(torch.arange(5, dtype=torch.float32) * 0.1, 0.1, 0, torch.quint4x2),
            "coo": matrix.to_sparse(), "csr": matrix.to_sparse_csr(), "csc": matrix.to_sparse_csc(),
            "bsr": matrix.to_sparse_bsr((2, 2)), "bsc": matrix.to_sparse_bsc((2, 2))}


# Outputs the digest walks, or names as what it cannot digest (tests/cli/python_digest_test.cc).
@dataclasses.dataclass
class StepOutput:
    loss: torch.Tensor
    extra: dict


def _fresh():
    """Bits that change every run: the digest must see them wherever they are returned."""
    return torch.frombuffer(bytearray(os.urandom(16)), dtype=torch.float32)


def in_a_dataclass():
    return StepOutput(loss=torch.ones(2), extra={"noise": _fresh()})


def in_a_set():
    return {_fresh(), 1}


def in_an_object():
    class Holder:
        def __init__(self):
            self.noise = _fresh()
    return (torch.ones(2), Holder())


def packed_quantized():
    """quint4x2 and quint2x4 pack 2 and 4 elements into a byte: the digest reads only their storage."""
    values = torch.arange(7, dtype=torch.float32) * 0.1
    return (torch.quantize_per_tensor(values, 0.1, 0, torch.quint4x2),
            torch.quantize_per_tensor(values, 0.1, 0, torch.quint2x4))


def nested():
    return torch.nested.nested_tensor([torch.arange(3.0), torch.arange(5.0)], layout=torch.strided)
