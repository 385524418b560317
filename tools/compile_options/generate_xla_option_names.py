#!/usr/bin/env python3
"""Regenerates src/runtime/xla_debug_options.inc from the installed jaxlib.

XLA accepts as compile options (`jax.jit(f).lower(x).compile(compiler_options={...})`,
CompileOptionsProto.env_option_overrides) exactly the fields of its `xla.DebugOptions`
message. jaxlib ships that message's schema as a serialized FileDescriptorProto of
`xla/xla.proto` inside its shared library; this script finds it, decodes the DebugOptions
fields (name, type, repeated-ness, and for enums the value names) with a small protobuf
wire reader (no protobuf package needed) and writes one X-macro row per field.

Usage: python tools/compile_options/generate_xla_option_names.py [--jaxlib DIR] [--out FILE]
Defaults: the jaxlib importable by this interpreter, src/runtime/xla_debug_options.inc.
"""
import argparse
import glob
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = b"\n\rxla/xla.proto"

# FieldDescriptorProto.Type -> the kind StableRT checks the override value against.
TYPE_KINDS = {1: "kDouble", 2: "kFloat", 3: "kInt64", 4: "kUInt64", 5: "kInt32", 6: "kUInt64", 7: "kUInt32",
              8: "kBool", 9: "kString", 11: "kMessage", 12: "kBytes", 13: "kUInt32", 14: "kEnum", 15: "kInt32",
              16: "kInt64", 17: "kInt32", 18: "kInt64"}


def varint(data, pos):
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos
        if shift > 63:
            raise ValueError("varint too long")


def fields(data, pos=0, end=None, stop_on_error=False):
    """Yields (number, wire_type, value) of a message; stops at `end` or at bytes that are not one."""
    end = len(data) if end is None else end
    while pos < end:
        start = pos
        try:
            key, pos = varint(data, pos)
            number, wire = key >> 3, key & 7
            if number == 0:
                raise ValueError("field 0")
            if wire == 0:
                value, pos = varint(data, pos)
            elif wire == 1:
                value, pos = data[pos:pos + 8], pos + 8
            elif wire == 2:
                n, pos = varint(data, pos)
                if pos + n > end:
                    raise ValueError("length past end")
                value, pos = data[pos:pos + n], pos + n
            elif wire == 5:
                value, pos = data[pos:pos + 4], pos + 4
            else:
                raise ValueError("wire type %d" % wire)
        except ValueError:
            if stop_on_error:
                return
            raise
        yield number, wire, value, start


def find_library(jaxlib_dir):
    for path in sorted(glob.glob(os.path.join(jaxlib_dir, "**", "*.so"), recursive=True)):
        with open(path, "rb") as f:
            data = f.read()
        at = data.find(MARKER)
        if at >= 0:
            return path, data, at
    sys.exit("no serialized xla/xla.proto descriptor in the shared objects under " + jaxlib_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jaxlib", help="jaxlib package directory (default: the importable jaxlib)")
    parser.add_argument("--out", default=os.path.join(REPO, "src", "runtime", "xla_debug_options.inc"))
    args = parser.parse_args()
    jaxlib_dir = args.jaxlib
    version = "unknown"
    if not jaxlib_dir:
        import jaxlib
        import jaxlib.version
        jaxlib_dir = os.path.dirname(jaxlib.__file__)
        version = jaxlib.version.__version__
    path, data, at = find_library(jaxlib_dir)

    # FileDescriptorProto: the descriptor's length is not stored; read fields until the bytes
    # stop being FileDescriptorProto fields (1..14).
    messages, enums = {}, {}

    def read_enum(prefix, body):
        name, values = None, []
        for number, wire, value, _ in fields(body):
            if number == 1 and wire == 2:
                name = value.decode()
            elif number == 2 and wire == 2:
                values.append(next(v.decode() for n, w, v, _ in fields(value) if n == 1))
        enums[prefix + "." + name] = values

    def read_message(prefix, body):
        name, message_fields = None, []
        nested = []
        for number, wire, value, _ in fields(body):
            if number == 1 and wire == 2:
                name = value.decode()
            elif wire == 2 and number in (2, 3, 4):
                nested.append((number, value))
        full = prefix + "." + name
        for number, value in nested:
            if number == 2:  # field
                f = {"name": None, "type": None, "label": 1, "type_name": ""}
                for n, w, v, _ in fields(value):
                    if n == 1: f["name"] = v.decode()
                    elif n == 4: f["label"] = v
                    elif n == 5: f["type"] = v
                    elif n == 6: f["type_name"] = v.decode()
                message_fields.append(f)
            elif number == 3:
                read_message(full, value)
            elif number == 4:
                read_enum(full, value)
        messages[full] = message_fields

    package = ""
    for number, wire, value, _ in fields(data, at, stop_on_error=True):
        if number > 14:
            break
        if number == 2 and wire == 2:
            package = "." + value.decode()
        elif number == 4 and wire == 2:
            read_message(package, value)
        elif number == 5 and wire == 2:
            read_enum(package, value)

    debug = messages.get(".xla.DebugOptions")
    if not debug:
        sys.exit("xla.DebugOptions not found in the descriptor in " + path)
    rows = []
    for f in sorted(debug, key=lambda f: f["name"]):
        kind = TYPE_KINDS.get(f["type"], "kMessage")
        repeated = f["label"] == 3
        values = ""
        if kind == "kEnum":
            names = enums.get(f["type_name"])
            values = "|".join(names) if names is not None else "?"
        rows.append('STABLERT_XLA_OPTION("%s", %s, %s, "%s")' % (f["name"], kind, "true" if repeated else "false", values))
    with open(args.out, "w") as out:
        out.write("// Generated by tools/compile_options/generate_xla_option_names.py from the xla.DebugOptions\n")
        out.write("// descriptor in jaxlib %s (%s). Do not edit; rerun the script.\n" % (version, os.path.basename(path)))
        out.write("// STABLERT_XLA_OPTION(name, kind, repeated, enum value names separated by '|' or \"?\" if unknown)\n")
        for row in rows:
            out.write(row + "\n")
    print("%d options from %s -> %s" % (len(rows), path, args.out))


if __name__ == "__main__":
    main()
