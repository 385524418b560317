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
import sys
import types

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
    element = "i64" if element == "index" else element  # StableRT holds index as i64
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


# --- Attributes, from the VHLO ops themselves ---------------------------------------------
#
# MLIR parses the artifact's bytecode into VHLO ops (the vhlo dialect is registered in JAX's
# context), so the properties as MLIR decodes them can be compared with StableRT's import,
# one op at a time, in pre-order (functions without a body and unrealized_conversion_cast
# left out, as StableRT imports them):
#
#   op <vhlo op name>
#     <attribute name> <canonical value>
#
# Canonical values (tools/read_check/skeleton.cc writes the same from ir::Attribute):
#   integers: decimal; floats: %.17g of the value in its own type; booleans: true/false;
#   strings and symbols: "..." with bytes outside printable ASCII, '"' and '\' as \XX;
#   enums: the value's name; dense tensors: <tensor type>=<digest>; arrays: [a, b];
#   dictionaries and structured attributes: {k = v, ...} sorted by key (snake_case fields);
#   type attributes: the builtin type, `none` for NoneV1; other dialects' attributes: `?`.

_VHLO_SCALARS = {"index": "i64"}


def _vhlo_type(text):
    """!vhlo.tensor_v1<3x!vhlo.f32_v1> -> tensor<3xf32>, and so on."""
    text = re.sub(r"!vhlo\.complex_v1<!vhlo\.(\w+?)_v\d+>", r"complex<\1>", text)
    text = re.sub(r"!vhlo\.tensor_v1<", "tensor<", text)
    text = re.sub(r"!vhlo\.tuple_v1<", "tuple<", text)
    text = text.replace("!vhlo.token_v1", "!stablehlo.token")
    text = re.sub(r"!vhlo\.(\w+?)_v\d+", lambda m: _VHLO_SCALARS.get(m.group(1), m.group(1)),
                  text)
    if not text.startswith(("tensor<", "tuple<", "!stablehlo.token")):
        text = f"tensor<{text}>"  # an element type as an attribute
    return text


def _canonical_string(raw):
    out = []
    for byte in raw:
        if 0x20 <= byte < 0x7F and byte not in (0x22, 0x5C):
            out.append(chr(byte))
        else:
            out.append("\\%02X" % byte)
    return '"' + "".join(out) + '"'


def _canonical_float(text, element="f64"):
    dtype = FLOATS.get(element, np.float64)
    if text.startswith("0x"):
        bits = int(text, 16)
        value = np.asarray(bits, dtype=BIT_VIEWS[np.dtype(dtype).itemsize]).view(dtype)
    else:
        value = np.asarray(float(text)).astype(dtype)
    return "%.17g" % float(value)


class _AttrParser:
    """Recursive descent over MLIR's printed form of VHLO attributes."""

    def __init__(self, text):
        self.text, self.pos = text, 0

    def error(self, what):
        raise ValueError(f"cannot parse VHLO attribute ({what}) at {self.pos}: "
                         f"{self.text[self.pos:self.pos + 80]!r}")

    def peek(self, s):
        return self.text.startswith(s, self.pos)

    def eat(self, s):
        if not self.peek(s):
            self.error(f"expected {s!r}")
        self.pos += len(s)

    def skip_spaces(self):
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def balanced(self, open_ch="<", close_ch=">"):
        """The text up to the bracket matching the one just consumed (strings skipped)."""
        depth, start = 1, self.pos
        while depth:
            if self.pos >= len(self.text):
                self.error("unbalanced brackets")
            ch = self.text[self.pos]
            if ch == '"':
                self.string_bytes()
                continue
            if ch == open_ch:
                depth += 1
            elif ch == close_ch:
                depth -= 1
            self.pos += 1
        return self.text[start:self.pos - 1]

    def string_bytes(self):
        self.eat('"')
        out = bytearray()
        while not self.peek('"'):
            ch = self.text[self.pos]
            if ch == "\\":
                nxt = self.text[self.pos + 1]
                if nxt in '"\\':
                    out.append(ord(nxt))
                    self.pos += 2
                elif nxt == "n":
                    out.append(10)
                    self.pos += 2
                elif nxt == "t":
                    out.append(9)
                    self.pos += 2
                else:
                    out.append(int(self.text[self.pos + 1:self.pos + 3], 16))
                    self.pos += 3
            else:
                out.extend(ch.encode())
                self.pos += 1
        self.eat('"')
        return bytes(out)

    def word(self):
        m = re.compile(r"[-+\w.]+").match(self.text, self.pos)
        if not m:
            self.error("expected a word")
        self.pos = m.end()
        return m.group(0)

    def value(self):
        self.skip_spaces()
        if self.peek("#vhlo<"):  # enum: #vhlo<comparison_direction_v1 LT>
            self.eat("#vhlo<")
            self.word()
            self.skip_spaces()
            name = self.word()
            self.eat(">")
            return name
        m = re.compile(r"#vhlo\.(\w+)<").match(self.text, self.pos)
        if not m:
            if self.peek("#") or self.peek('"') or self.peek("@"):
                self.opaque()
                return "?"
            self.error("unknown attribute")
        self.pos = m.end()
        kind = m.group(1)
        handler = getattr(self, "v_" + re.sub(r"_v\d+$", "", kind), None)
        if handler is None:
            self.error(f"unhandled VHLO attribute kind {kind}")
        result = handler()
        self.eat(">")
        return result

    def opaque(self):
        if self.peek('"'):
            self.string_bytes()
            return
        if self.peek("@"):
            self.word()
            return
        m = re.compile(r"#[\w.]+").match(self.text, self.pos)
        self.pos = m.end()
        if self.peek("<"):
            self.pos += 1
            self.balanced()

    def v_string(self):
        return _canonical_string(self.string_bytes())

    def v_bool(self):
        return self.word()

    def v_integer(self):
        number = self.word()
        self.eat(" : ")
        self.word_or_type()
        return str(int(number, 0))

    def word_or_type(self):
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ">,":
            if self.text[self.pos] == "<":
                self.pos += 1
                self.balanced()
            else:
                self.pos += 1
        return self.text[start:self.pos]

    def v_float(self):
        number = self.word()
        self.eat(" : ")
        element = _vhlo_type(self.word_or_type().strip())
        element = re.fullmatch(r"tensor<(.+)>", element).group(1)
        return _canonical_float(number, element)

    def v_type(self):
        text = self.word_or_type().strip()
        return "none" if text == "!vhlo.none_v1" else _vhlo_type(text)

    def v_tensor(self):
        start = self.pos
        self.eat("dense<")
        self.balanced()
        body = self.text[start:self.pos]
        self.eat(" : ")
        type_text = self.word_or_type().strip()
        dims, element = _tensor_parts(type_text)
        digest = constant_digest(body + " :", type_text)
        element = _VHLO_SCALARS.get(element, element)
        return "tensor<" + "".join(f"{d}x" for d in dims) + element + f">={digest:016x}"

    def v_array(self):
        self.eat("[")
        items = []
        while not self.peek("]"):
            items.append(self.value())
            self.skip_spaces()
            if self.peek(","):
                self.pos += 1
        self.eat("]")
        return "[" + ", ".join(items) + "]"

    def v_dict(self):
        self.eat("{")
        entries = []
        while not self.peek("}"):
            key = self.value()
            self.eat(" = ")
            entries.append((key.strip('"'), self.value()))
            self.skip_spaces()
            if self.peek(","):
                self.pos += 1
                self.skip_spaces()
        self.eat("}")
        return _dict(entries)

    def fields(self, converters):
        entries = []
        while not self.peek(">"):
            name = self.word()
            self.eat(" = ")
            entries.append(converters[name](self))
            if self.peek(", "):
                self.pos += 2
        return _dict(entries)

    def int_list(self):
        self.eat("[")
        body = self.balanced("[", "]")
        values = [int(v) for v in body.split(",") if v.strip()]
        return f"tensor<{len(values)}xi64>={_digest([v & MASK for v in values]):016x}"

    def v_output_operand_alias(self):
        return self.fields({
            "outputTupleIndices": lambda p: ("output_tuple_indices", p.int_list()),
            "operandIndex": lambda p: ("operand_index", str(int(p.word()))),
            "operandTupleIndices": lambda p: ("operand_tuple_indices", p.int_list())})

    def v_result_accuracy(self):
        return self.fields({
            "atol": lambda p: ("atol", _canonical_float(p.word())),
            "rtol": lambda p: ("rtol", _canonical_float(p.word())),
            "ulps": lambda p: ("ulps", str(int(p.word()))),
            "mode": lambda p: ("mode", p.value())})


def _dict(entries):
    return "{" + ", ".join(f"{k} = {v}" for k, v in sorted(entries)) + "}"


def _attr_lines(op, out):
    name = op.name
    if name == "builtin.unrealized_conversion_cast":
        return
    if name == "vhlo.func_v1":
        if not op.regions[0].blocks:
            return
    else:
        out.append(f"op {name}")
        for i in range(len(op.attributes)):
            named = op.attributes[i]
            value = _AttrParser(str(named.attr)).value()
            out.append(f"  {named.name} {value}")
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                _attr_lines(inner.operation, out)


def parse_vhlo(data, context):
    """The artifact's bytes parsed by MLIR as a VHLO module (no conversion to StableHLO)."""
    # The bindings look for a Python module per dialect on every op they wrap, and a miss is
    # not remembered: an empty stand-in for `vhlo` makes walking a VHLO module fast.
    sys.modules.setdefault("jaxlib.mlir.dialects.vhlo", types.ModuleType("vhlo"))
    from jaxlib.mlir import ir
    context.allow_unregistered_dialects = True
    with context:
        return ir.Module.parse(data)


def vhlo_attributes(module):
    """The attribute listing of a module parsed as VHLO (see above)."""
    out = []
    for op in module.body.operations:
        if op.operation.name == "vhlo.func_v1":
            _attr_lines(op.operation, out)
    return "\n".join(out) + "\n"
