"""The reference skeleton of a portable artifact, as StableHLO's own reader sees it.

The artifact is deserialized by jaxlib (StableHLO's C++ reader, upgrading to the current
version) and walked into a text that stablert_read_check rebuilds from StableRT's IR
(tools/read_check/skeleton.cc) and compares line by line:

  func <name> <public|private> (<argument types>) -> (<result types>)
    <op name> <operand count> -> <result types>[ = <constant digest>]
      region
        block (<argument types>)
          ...

Only defined functions are listed (declarations and module-level sdy.mesh are not code);
func.return prints as stablehlo.return (StableRT has one return op). A constant's digest is
FNV-1a 64 over its elements in row-major order, each element as a little-endian u64:
integers sign- or zero-extended, booleans 0/1, floats as their bit pattern in their own
width, complex numbers as two such floats (real, then imaginary).
"""
import re

import ml_dtypes
import numpy as np

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1

FLOATS = {
    "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
    "f8E3M4": ml_dtypes.float8_e3m4, "f8E4M3": ml_dtypes.float8_e4m3,
    "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz, "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz, "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn, "f6E2M3FN": ml_dtypes.float6_e2m3fn,
    "f6E3M2FN": ml_dtypes.float6_e3m2fn,
}
BIT_VIEWS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _digest(words):
    h = FNV_OFFSET
    for w in words:
        for shift in range(0, 64, 8):
            h = ((h ^ ((w >> shift) & 0xFF)) * FNV_PRIME) & MASK
    return h


def _float_bits(token, element):
    dtype = FLOATS[element]
    mask = (1 << ml_dtypes.finfo(dtype).bits) - 1
    if token.startswith("0x"):
        return int(token, 16) & mask
    value = np.asarray(float(token)).astype(dtype)
    return int(value.view(BIT_VIEWS[value.itemsize])) & mask


def _int_word(value, element):
    bits = int(re.sub(r"\D", "", element))
    unsigned = element.startswith("ui")
    value &= (1 << bits) - 1
    if not unsigned and value >> (bits - 1):
        value -= 1 << bits
    return value & MASK


def _element_words(token, element):
    """The u64 words of one printed element."""
    if element.startswith("complex<"):
        inner = element[len("complex<"):-1]
        re_part, im_part = token.strip("()").split(",")
        return [_float_bits(re_part.strip(), inner), _float_bits(im_part.strip(), inner)]
    if element == "i1":
        return [1 if token in ("true", "1") else 0]
    if element in FLOATS:
        return [_float_bits(token, element)]
    return [_int_word(int(token, 0), element)]


def _storage_bytes(element):
    if element == "i1":
        return 1
    if element.startswith("complex<"):
        return 2 * _storage_bytes(element[len("complex<"):-1])
    if element in FLOATS:
        return np.dtype(FLOATS[element]).itemsize
    return max(1, int(re.sub(r"\D", "", element)) // 8)


def _hex_words(data, element, count):
    """Elements of a dense<"0x..."> blob (MLIR's raw storage, little-endian)."""
    if element == "i1" and len(data) * 8 >= count and len(data) < count:
        return [(data[i // 8] >> (i % 8)) & 1 for i in range(count)]
    if element.startswith("complex<"):
        inner = element[len("complex<"):-1]
        half = _storage_bytes(inner)
        words = []
        for i in range(0, len(data), half):
            words.append(int.from_bytes(data[i:i + half], "little"))
        return words
    size = _storage_bytes(element)
    words = [int.from_bytes(data[i:i + size], "little") for i in range(0, len(data), size)]
    if element in FLOATS:
        mask = (1 << ml_dtypes.finfo(FLOATS[element]).bits) - 1
        return [w & mask for w in words]
    if element == "i1":
        return [1 if w else 0 for w in words]
    return [_int_word(w, element) for w in words]


def _tensor_parts(type_text):
    match = re.fullmatch(r"tensor<((?:\d+x)*)(.+)>", type_text)
    if not match:
        raise ValueError(f"unexpected constant type: {type_text}")
    dims = [int(d) for d in match.group(1).split("x") if d]
    return dims, match.group(2)


def constant_digest(attr_text, type_text):
    """Digest of a printed dense constant `dense<...> : tensor<...>`."""
    dims, element = _tensor_parts(type_text)
    count = int(np.prod(dims)) if dims else 1
    body = attr_text[len("dense<"):attr_text.rindex("> :")]
    if body.startswith('"0x'):
        data = bytes.fromhex(body[3:-1])
        words = _hex_words(data, element, count)
        per_element = 2 if element.startswith("complex<") else 1
        if len(words) == per_element:  # splat
            words = words * count
        return _digest(words)
    tokens = re.findall(r"\([^)]*\)|[^\[\],\s]+", body)
    words = [w for t in tokens for w in _element_words(t, element)]
    per_element = 2 if element.startswith("complex<") else 1
    if len(words) == per_element and count != 1:
        words = words * count
    return _digest(words)


def _types(values):
    return ", ".join(str(v.type) for v in values)


def _op_lines(op, depth, out):
    name = op.name
    if name == "func.return":
        name = "stablehlo.return"
    line = f"{'  ' * depth}{name} {len(op.operands)} -> {_types(op.results)}"
    if name == "stablehlo.constant":
        # Printed rather than fetched: the bindings cannot downcast every element type.
        text = str(op).strip()
        match = re.search(r"(dense<.*>) : (tensor<.*>)$", text)
        if not match:
            raise ValueError(f"unexpected constant form: {text[:200]}")
        line += f" = {constant_digest(match.group(1) + ' :', match.group(2)):016x}"
    out.append(line)
    for region in op.regions:
        out.append("  " * (depth + 1) + "region")
        for block in region.blocks:
            out.append(f"{'  ' * (depth + 2)}block ({_types(block.arguments)})")
            for inner in block.operations:
                _op_lines(inner.operation, depth + 3, out)


def skeleton(module):
    out = []
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func" or not op.regions[0].blocks:
            continue
        attrs = op.attributes
        name = str(attrs["sym_name"]).strip('"')
        visibility = "private" if "sym_visibility" in attrs and \
            str(attrs["sym_visibility"]).strip('"') == "private" else "public"
        ftype = str(attrs["function_type"])
        out.append(f"func {name} {visibility} {ftype}")
        for inner in op.regions[0].blocks[0].operations:
            _op_lines(inner.operation, 1, out)
    return "\n".join(out) + "\n"
