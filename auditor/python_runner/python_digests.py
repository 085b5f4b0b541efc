"""The runner's digests (the second of its files: python_runner.py says the order): a tensor's, as
hash/tensor_digest.cc computes it, a run's outputs', the word sums of per-op records, and how far two
results lie apart."""

MAX_OPS = 20000
TEST_SWITCHES = ("REPRO_AUDIT_TEST_CPU_OPS_AS_KERNELS", "REPRO_AUDIT_TEST_HOST_WORD_SUMS")
KEPT_WARNINGS = 50
MAX_SEQUENCES = 4
EMPTY_OPS = {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided"}
DTYPE_TAGS = {
    torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
    torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
    torch.bool: "Bool", torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble",
    torch.quint8: "QUInt8", torch.qint8: "QInt8", torch.qint32: "QInt32", torch.quint4x2: "QUInt4x2",
}
INT_VIEWS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
             torch.bfloat16: torch.int16}


class CellError(Exception):
    """A failure of the user's callable, reported as the cell's exception verdict."""


class CellUnsupported(Exception):
    """A setting the installed torch lacks: the cell is unsupported, never a pass."""


def comparable(tensor):
    """The tensor's values, dense on the CPU, for counting differing elements (digests never copy it)."""
    tensor = tensor.detach()
    if tensor.layout != torch.strided:
        tensor = tensor.to_dense()
    if tensor.is_quantized:
        tensor = tensor.int_repr()
    return tensor.resolve_conj().resolve_neg().to("cpu").contiguous()


# A sparse result larger than this is not made dense to count its differing elements (2 GiB of float64).
MAX_DENSE_ELEMENTS = 1 << 28
# Hashed this many bytes at a time: no copy of a large tensor, and no size the ctypes calls cannot take.
DIGEST_CHUNK = 64 << 20
SPARSE_PARTS = {
    torch.sparse_coo: ("indices", "values"), torch.sparse_csr: ("crow_indices", "col_indices", "values"),
    torch.sparse_bsr: ("crow_indices", "col_indices", "values"),
    torch.sparse_csc: ("ccol_indices", "row_indices", "values"),
    torch.sparse_bsc: ("ccol_indices", "row_indices", "values"),
}


def properties(tensor):
    """What beyond dtype, sizes and values tells two tensors apart, as text after the dtype tag; empty for an
    ordinary dense tensor, whose digest is as it always was. Matches hash/tensor_digest.cc."""
    if tensor.layout != torch.strided:
        if tensor.layout not in SPARSE_PARTS:
            raise CellError(f"cannot digest a tensor of layout {tensor.layout}")
        text = ";layout=" + str(tensor.layout).replace("torch.", "")
        if tensor.layout == torch.sparse_coo:  # as stored: the order of its entries is part of it
            text += ";coalesced=" + ("1" if tensor.is_coalesced() else "0")
        for part in SPARSE_PARTS[tensor.layout]:
            value = getattr(tensor, "_" + part if tensor.layout == torch.sparse_coo else part)()
            text += f";{part}={digest(value)}"
        return text
    text = (";conj" if tensor.is_conj() else "") + (";neg" if tensor.is_neg() else "")
    if tensor.is_quantized:
        scheme = tensor.qscheme()
        text += ";qscheme=" + str(scheme).replace("torch.", "")
        if scheme in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            scale = struct.unpack("<Q", struct.pack("<d", tensor.q_scale()))[0]
            text += f";scale={scale:016x};zero_point={tensor.q_zero_point()}"
        else:
            text += (f";axis={tensor.q_per_channel_axis()};scales={digest(tensor.q_per_channel_scales())}"
                     f";zero_points={digest(tensor.q_per_channel_zero_points())}")
    return text


def tag_of(tensor):
    """The dtype's name and the tensor's properties: what a digest hashes before the sizes."""
    return DTYPE_TAGS.get(tensor.dtype, str(tensor.dtype)) + properties(tensor)


def stored(tensor):
    """The same storage without the conjugate and negative view bits (the tag names them)."""
    tensor = tensor.conj() if tensor.is_conj() else tensor
    return tensor._neg_view() if tensor.is_neg() else tensor


def canonical_state(tag, sizes):
    """An XXH3-128 state over the tag and a 0 byte, the rank and the sizes (little-endian 64-bit)."""
    state = xxhash.xxh3_128()
    state.update(tag.encode() + b"\0" + struct.pack("<Q", len(sizes)))
    state.update(b"".join(struct.pack("<q", size) for size in sizes))
    return state


# Quantized dtypes that pack several elements into a byte: their storage holds numel * bits / 8 bytes.
PACKED_BITS = {torch.quint4x2: 4, torch.quint2x4: 2}


def stored_bytes(tensor):
    """The bytes a contiguous tensor's elements take in its storage (hash/tensor_digest.cc's stored_bytes)."""
    if tensor.dtype in PACKED_BITS:
        return (tensor.numel() * PACKED_BITS[tensor.dtype] + 7) // 8
    return tensor.numel() * tensor.element_size()


def digest(tensor):
    """XXH3-128 over the dtype tag and its properties and a 0 byte, rank and sizes (little-endian 64-bit),
    then the elements as stored (a conjugate or negative view's bits cleared, named in the properties);
    a sparse tensor's parts are digested each, in its properties, with no elements after them. A nested
    tensor (an op's output in the per-op records; a result's are its components) is its components'."""
    tensor = tensor.detach()
    if tensor.is_nested:
        parts = [digest(part) for part in tensor.unbind()]
        state = canonical_state(f"nested;parts={','.join(parts)}", ())
        return state.hexdigest()
    state = canonical_state(tag_of(tensor), tensor.shape)
    if tensor.layout != torch.strided:
        return state.hexdigest()
    tensor = stored(tensor).to("cpu").contiguous()
    address, size = tensor.data_ptr(), stored_bytes(tensor)
    for offset in range(0, size, DIGEST_CHUNK):
        state.update((ctypes.c_char * min(DIGEST_CHUNK, size - offset)).from_address(address + offset))
    return state.hexdigest()


def word_sums_digest(tag, sizes, size, sums):
    """hash/word_sums.h's digest: XXH3-128 over the tag with the byte count, the rank and sizes, and the
    two sums (little-endian 64-bit); the form of a CUDA tensor's per-op digest."""
    state = canonical_state(f"{tag};word_sums=1;bytes={size}", sizes)
    state.update(struct.pack("<QQ", sums[0] & (2 ** 64 - 1), sums[1] & (2 ** 64 - 1)))
    return state.hexdigest()


class DeviceDigests:
    """Per-op digests of CUDA tensors taken on the device, as the C++ recorder takes them
    (recording/tensor_digester.h): the word-sums kernel of the library the worker names reduces a
    tensor's bytes into a slot of a buffer on the device, and the op's text holds a token for the slot;
    when the run ends, the slots cross to the host at once (16 bytes a tensor) and each token becomes
    its digest. Nothing waits for the device while the run records."""

    SLOTS = 4096
    TOKEN = re.compile("\x01([0-9]+)\x02")

    def __init__(self, device, library=None):
        self.device, self.kernel = torch.device(device), None
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        if library:
            self.kernel = ctypes.CDLL(library).repro_audit_word_sums
            self.kernel.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p]
            self.kernel.restype = ctypes.c_int
        self.chunks, self.slots, self.digests = [], [], []

    def defers(self, tensor):
        return tensor.device == self.device and tensor.layout == torch.strided and not tensor.is_quantized

    def reduce(self, values, size, chunk, slot):
        """Adds the word sums of `values` (contiguous, `size` bytes) into chunk[slot], on its device."""
        if self.kernel is None:  # the host's reduction: the CPU's tests of this path
            sums = host_word_sums(values)
            previous = chunk[slot].tolist()
            chunk[slot] = torch.tensor([to_int64((previous[k] + sums[k]) % 2 ** 64) for k in (0, 1)])
            return
        status = self.kernel(values.data_ptr(), size, chunk.data_ptr() + 16 * slot,
                             torch.cuda.current_stream(values.device).cuda_stream)
        if status:
            raise RuntimeError(f"the word-sums kernel failed (cudaError {status})")

    def token(self, tensor):
        index = len(self.slots)
        if index // self.SLOTS == len(self.chunks):
            self.chunks.append(torch.zeros((self.SLOTS, 2), dtype=torch.int64, device=tensor.device))
        tensor = tensor.detach()
        values = stored(tensor).contiguous()  # row-major; the view bits are in the tag
        size = values.numel() * values.element_size()
        if size:
            self.reduce(values, size, self.chunks[index // self.SLOTS], index % self.SLOTS)
        self.slots.append((tag_of(tensor), tuple(tensor.shape), size))
        return f"\x01{index}\x02"

    def resolve(self):
        """Reads back every slot queued since the last call: one wait for the device."""
        if len(self.digests) == len(self.slots):
            return
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        start = len(self.digests)
        for index in range(start, len(self.slots)):
            if index == start or index % self.SLOTS == 0:
                words = self.chunks[index // self.SLOTS].cpu().tolist()
            tag, sizes, size = self.slots[index]
            self.digests.append(word_sums_digest(tag, sizes, size, words[index % self.SLOTS]))

    def substitute(self, text):
        return self.TOKEN.sub(lambda match: self.digests[int(match.group(1))], text)

    def clear(self):
        for chunk in self.chunks:
            chunk.zero_()
        self.slots, self.digests = [], []


def to_int64(value):
    return value - 2 ** 64 if value >= 2 ** 63 else value


def host_word_sums(values):
    """hash/word_sums.cc's reference in torch's int64 arithmetic on the CPU (it wraps modulo 2^64; `>>` is
    arithmetic, so a logical shift is masked): for the CPU's tests of the device path only."""
    data = values.reshape(-1).view(torch.uint8)
    if data.numel() % 8:
        data = torch.cat([data, data.new_zeros(8 - data.numel() % 8)])
    words = data.view(torch.int64)
    index = torch.arange(1, words.numel() + 1, dtype=torch.int64)

    def shifted(x, bits):
        return (x >> bits) & ((1 << (64 - bits)) - 1)

    def mixed(x, shifts, factors):
        for shift, factor in zip(shifts, factors):
            x = (x ^ shifted(x, shift)) * to_int64(factor)
        return x ^ shifted(x, shifts[-1])

    a = mixed(words ^ (index * to_int64(0x9E3779B97F4A7C15)), (30, 27, 31), (0xBF58476D1CE4E5B9, 0x94D049BB133111EB))
    b = mixed(words + index * to_int64(0xD6E8FEB86659FD93), (33, 33, 33), (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53))
    return int(a.sum()) % 2 ** 64, int(b.sum()) % 2 ** 64


def device_digests(device):
    """The device digester for a CUDA cell when the worker named the kernel's library, else None (the
    per-op digests are then taken on the host); why not, when the library is named and fails to load.
    REPRO_AUDIT_TEST_HOST_WORD_SUMS=1 (tests only) takes a CPU cell's digests through the same tokens
    with the host's reduction."""
    if device == "cpu" and os.environ.get("REPRO_AUDIT_TEST_HOST_WORD_SUMS") == "1":
        return DeviceDigests(device), ""
    library = WORD_SUMS_LIBRARY
    if not device.startswith("cuda") or not library or not torch.cuda.is_available():
        return None, ""
    try:
        return DeviceDigests(device, library), ""
    except (OSError, AttributeError) as error:
        return None, f"per-op digests taken on the host: the word-sums library could not be loaded ({error})"


def digest_text(text):
    return xxhash.xxh3_128_hexdigest(text.encode())


def combined(outputs):
    return digest_text("".join(f"{name}\0{value}\n" for name, value in outputs))


def difference(reference, tensor):
    """Differing elements, max abs and max ULP difference between two runs' copies of one output; not
    counted (-1) when their shapes, dtypes or layouts differ, or a sparse one is too large to make dense."""
    if reference.shape != tensor.shape or reference.dtype != tensor.dtype or reference.layout != tensor.layout:
        return -1, 0, 0.0, 0.0
    if tensor.layout != torch.strided and tensor.numel() > MAX_DENSE_ELEMENTS:
        return -1, tensor.numel(), 0.0, 0.0
    reference, tensor = comparable(reference), comparable(tensor)
    if reference.dtype in INT_VIEWS:
        kind = INT_VIEWS[reference.dtype]
        bits = [t.view(kind).to(torch.int64) for t in (reference, tensor)]
        mask = (1 << (torch.iinfo(kind).bits - 1)) - 1
        keys = [torch.where(b < 0, -(b & mask), b) for b in bits]
        differs = bits[0] != bits[1]
        ulp = float((keys[0] - keys[1]).abs().max()) if differs.any() else 0.0
        gap = (reference.double() - tensor.double()).abs().nan_to_num(0.0)
        return int(differs.sum()), reference.numel(), float(gap.max()) if gap.numel() else 0.0, ulp
    differs = reference != tensor
    return int(differs.sum()), reference.numel(), 0.0, 0.0


