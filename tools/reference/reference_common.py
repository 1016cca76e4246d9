"""What the fixture scripts of tools/reference/ share: where fixtures go, how values become JSON,
and the layouts the fixtures are written in. Not a script itself; the scripts import it:

    import sys
    sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
    from reference_common import FIXTURES, flat, write_json  # noqa: E402

(Python puts a script's own folder first on sys.path, so the import works from any directory.)

The committed fixtures were written with OpenBLAS's Haswell (AVX2) kernels. On a CPU where
OpenBLAS picks other kernels (SkylakeX with AVX-512), run a script as
`OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tools/reference/<name>.py` to reproduce them byte for
byte; otherwise products through the BLAS round differently in float32's last bits.
"""

import json
import math
import os
import platform

import torch

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures")
TORCH_PACKAGE = "Debian python3-torch 1.13.1+dfsg (reports 1.13.0a0)"

# minigrad's four dtypes, by the names the fixtures use.
DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
          "bool": torch.bool}


def dtype_name(dtype):
    """The fixture's name of a torch dtype: torch.float32 -> "float32"."""
    return next(name for name, d in DTYPES.items() if d == dtype)


# --- values ------------------------------------------------------------------------------------

def encode_value(value):
    """A JSON-safe element: floats that JSON cannot spell become "nan", "inf" or "-inf"; every
    other value (finite floats, ints, bools) is kept as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def encode(elements):
    """A flat list for JSON: non-finite floats become strings."""
    return [encode_value(v) for v in elements]


def values(t):
    """The elements of a tensor as a flat Python list, row-major (floats are written with repr: exact)."""
    return t.detach().reshape(-1).tolist()


def flat(t):
    """values(t) made JSON-safe with encode."""
    return encode(values(t))


# --- writing fixtures ----------------------------------------------------------------------------

def fixture_header(script, **more):
    """A fixture's header: the torch and python that wrote it and the command that did, then `more`."""
    return {"torch_version": torch.__version__, "torch_package": TORCH_PACKAGE,
            "python": platform.python_version(), "command": "/usr/bin/python3 tools/reference/" + script,
            **more}


def write_json(path, data, allow_nan=True):
    """Writes `data` as JSON indented by one space, with a final newline; returns the path to print."""
    with open(path, "w") as f:
        json.dump(data, f, indent=1, allow_nan=allow_nan)
        f.write("\n")
    return os.path.normpath(path)


def write_cases(path, header, cases, inputs=None, allow_nan=True):
    """Writes {"header": ..., "inputs": {...}, "cases": [...]} with the header indented and one compact
    line per input and per case, which keeps the file small and its diffs readable. `inputs`
    (name -> record) is optional. Returns the path to print."""
    def line(record):
        return json.dumps(record, separators=(",", ":"), allow_nan=allow_nan)

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write('{"header": ' + json.dumps(header, indent=2) + ',\n')
        if inputs is not None:
            f.write('"inputs": {\n')
            f.write(",\n".join(json.dumps(name) + ":" + line(record) for name, record in inputs.items()))
            f.write('\n},\n')
        f.write('"cases": [\n')
        f.write(",\n".join(line(c) for c in cases))
        f.write("\n]}\n")
    return os.path.normpath(path)


def write_rows(path, rows):
    """Writes a JSON list with one row per line, so a regenerated fixture diffs row by row."""
    with open(path, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")
    return os.path.normpath(path)
