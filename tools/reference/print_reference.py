"""Golden text for minigrad's tensor printing (autograd/machinery/print.cpp), taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    python3 tools/reference/print_reference.py

It writes tests/fixtures/print.json: a list of cases, each one tensor with its dtype, shape, flat
values (floats written with repr, so float32 and float64 values round-trip exactly; "nan", "inf"
and "-inf" as strings), requires_grad, an optional "op" ("add": the printed tensor is
x + zeros_like(x), so it carries grad_fn=<AddBackward0>; "parameter": it is an nn.Parameter, as a
module's weight is) and "text", which is str(tensor) with
PyTorch's default print options (precision 4, threshold 1000, edgeitems 3, linewidth 80).
"""

import os
import sys

import torch

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, dtype_name, flat, write_rows  # noqa: E402

OUT = os.path.join(FIXTURES, "print.json")
NAN, INF = float("nan"), float("inf")


def seeded(seed, make):
    """The tensor `make()` draws right after torch.manual_seed(seed)."""
    torch.manual_seed(seed)
    return make()


def cases():
    """(name, tensor, requires_grad, op) rows; tensors are built here, values are read back."""
    f32, f64, i64 = torch.float32, torch.float64, torch.int64
    arange24 = torch.arange(24, dtype=f32).reshape(2, 3, 4)
    return [
        # plain vectors: fixed point with 4 decimals, integral floats as `1.`, widths padded
        ("float32 vector with fractions", torch.tensor([1.5, -2.25, 3.125]), False, None),
        ("float32 integral vector prints trailing dots", torch.tensor([1.0, 2.0, 3.0]), False, None),
        ("float32 integral vector with negatives pads widths", torch.tensor([-1.0, 0.0, 10.0]), False, None),
        ("float32 zeros", torch.zeros(3), False, None),
        ("float32 values not exact in binary", torch.tensor([0.1, 0.2, 0.7]), False, None),
        ("float64 vector gets a dtype suffix", torch.tensor([0.5, -1.25], dtype=f64), False, None),
        ("float64 exact ties round half to even", torch.tensor([0.03125, 0.40625, -0.96875], dtype=f64),
         False, None),
        ("float64 integral vector", torch.tensor([3.0, -7.0], dtype=f64), False, None),
        # 0-d tensors
        ("float32 0-d integral", torch.tensor(3.0), False, None),
        ("float32 0-d fraction", torch.tensor(0.1234567), False, None),
        ("float32 0-d negative", torch.tensor(-2.5), False, None),
        ("float64 0-d", torch.tensor(2.5, dtype=f64), False, None),
        ("int64 0-d", torch.tensor(7), False, None),
        ("bool 0-d", torch.tensor(True), False, None),
        ("float32 0-d nan", torch.tensor(NAN), False, None),
        # integers and booleans
        ("int64 vector", torch.tensor([1, 2]), False, None),
        ("int64 vector pads to the widest", torch.tensor([-100, 5, 20000]), False, None),
        ("int64 matrix", torch.tensor([[1, -2, 3], [40, 5, -600]]), False, None),
        ("bool vector pads True to False's width", torch.tensor([True, False]), False, None),
        ("bool vector all true", torch.tensor([True, True]), False, None),
        ("bool matrix", torch.tensor([[True, False], [False, True]]), False, None),
        # empty tensors
        ("float32 empty vector", torch.tensor([]), False, None),
        ("float32 empty matrix shows its size", torch.zeros(0, 3), False, None),
        ("float64 empty matrix shows size and dtype", torch.zeros(2, 0, dtype=f64), False, None),
        ("int64 empty vector shows its dtype", torch.zeros(0, dtype=i64), False, None),
        ("bool empty vector shows its dtype", torch.zeros(0, dtype=torch.bool), False, None),
        ("float32 empty vector requiring grad", torch.zeros(0), True, None),
        # scientific notation and its triggers
        ("float32 small value switches to scientific", torch.tensor([1e-5, 1.0]), False, None),
        ("float32 ratio above 1000 switches to scientific", torch.tensor([0.001, 10.5]), False, None),
        ("float32 ratio below 1000 stays fixed", torch.tensor([0.001, 0.5, 0.99]), False, None),
        ("float32 mixed magnitudes", torch.tensor([1e-3, 0.5, 123.456, -4.0]), False, None),
        ("float64 value above 1e8 switches to scientific", torch.tensor([1e9, 1.5], dtype=f64), False, None),
        ("float32 integral values with ratio above 1000", torch.tensor([1.0, 2000.0]), False, None),
        ("float32 integral values above 1e8", torch.tensor([1e9, 3e9]), False, None),
        ("float32 integral value of exactly 1e8 stays integral", torch.tensor([1e8, 1e6]), False, None),
        ("float64 large integral values", torch.tensor([12345678.0, -99999.0], dtype=f64), False, None),
        ("float64 tiny values in scientific", torch.tensor([1e-300, -2.5e-12, 0.0], dtype=f64), False, None),
        # non-finite values and signed zeros
        ("float32 nan and infinities", torch.tensor([NAN, INF, -INF, 1.5]), False, None),
        ("float32 nan and infinity in integral mode", torch.tensor([NAN, 1.0, INF]), False, None),
        ("float32 nan in scientific mode", torch.tensor([NAN, 1e-5, 2.0]), False, None),
        ("float32 all nan", torch.tensor([NAN, NAN]), False, None),
        ("float32 negative zeros with a fraction", torch.tensor([-0.0, 0.0, 1.5]), False, None),
        ("float32 negative zero with integers", torch.tensor([-0.0, 1.0]), False, None),
        ("float64 negative zero alone", torch.tensor([-0.0], dtype=f64), False, None),
        ("float32 tiny negative value in scientific", torch.tensor([-0.00004, 0.5]), False, None),
        # matrices and higher dims
        ("float32 matrix", seeded(0, lambda: torch.randn(2, 3)), False, None),
        ("float32 one by one matrix", torch.tensor([[4.0]]), False, None),
        ("float32 column", torch.tensor([[1.5], [-2.0], [3.0]]), False, None),
        ("float32 3-d tensor has blank lines between blocks", arange24, False, None),
        ("float64 3-d tensor", seeded(1, lambda: torch.randn(2, 2, 3, dtype=f64)), False, None),
        ("float32 4-d tensor", seeded(2, lambda: torch.randn(2, 2, 2, 2)), False, None),
        # line wrapping at 80 columns
        ("float32 long vector wraps at 80 columns", seeded(3, lambda: torch.randn(30)), False, None),
        ("int64 long vector wraps at 80 columns", torch.arange(40), False, None),
        ("float32 matrix with long rows wraps each row", seeded(4, lambda: torch.randn(3, 20)), False, None),
        ("float32 3-d tensor with long rows", seeded(5, lambda: torch.randn(2, 2, 14)), False, None),
        # summarising above 1000 elements
        ("float32 randn 2000 after seed 0 is summarised", seeded(0, lambda: torch.randn(2000)), False, None),
        ("float32 matrix 50 by 40 is summarised", seeded(6, lambda: torch.randn(50, 40)), False, None),
        ("float64 3-d 11 by 10 by 10 is summarised", seeded(7, lambda: torch.randn(11, 10, 10, dtype=f64)),
         False, None),
        ("int64 matrix 100 by 20 is summarised", torch.arange(2000).reshape(100, 20), False, None),
        ("float32 column of 1001 rows is summarised", torch.arange(1001, dtype=f32).reshape(1001, 1),
         False, None),
        ("bool vector of 1001 is summarised", torch.arange(1001) % 3 == 0, False, None),
        ("float32 1000 elements are not summarised", torch.arange(1000, dtype=f32) / 8, False, None),
        ("float32 summary picks the style from shown values only",
         torch.cat([torch.full((3,), 0.5), torch.full((1000,), 1e-6), torch.full((3,), 2.0)]), False, None),
        # autograd suffixes
        ("float32 leaf requiring grad", torch.tensor([1.0, 2.0]), True, None),
        ("float64 leaf requiring grad", torch.tensor([0.25, -3.5], dtype=f64), True, None),
        ("float32 0-d leaf requiring grad", torch.tensor(2.0), True, None),
        ("float32 sum of leaf and zeros has grad_fn", seeded(8, lambda: torch.randn(2, 3)), True, "add"),
        ("float64 sum has dtype and grad_fn", torch.tensor([1.0, 2.5], dtype=f64), True, "add"),
        ("float32 long sum wraps its grad_fn suffix", seeded(9, lambda: torch.randn(8)), True, "add"),
        ("float64 long leaf moves its suffixes to a new line", seeded(10, lambda: torch.randn(7, dtype=f64)), True, None),
        # a module's parameter (nn.Parameter) prints its repr's first line above the tensor
        ("float32 parameter of a module", seeded(11, lambda: torch.randn(2, 3)), True, "parameter"),
        ("float64 0-d parameter of a module", torch.tensor(0.5, dtype=f64), True, "parameter"),
    ]


def row(name, x, requires_grad, op):
    dtype = dtype_name(x.dtype)
    values = flat(x)
    printed = x.clone().requires_grad_(requires_grad)
    if op == "add":
        printed = printed + torch.zeros_like(x)
    if op == "parameter":
        printed = torch.nn.Parameter(x.clone())
    case = {"name": name, "dtype": dtype, "shape": list(x.shape), "values": values,
            "requires_grad": requires_grad}
    if op is not None:
        case["op"] = op
    case["text"] = str(printed)
    return case


def main():
    rows = [row(*case) for case in cases()]
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)), "case names must be unique"
    path = write_rows(OUT, rows)  # one case per line, so a regenerated fixture diffs case by case
    print(f"wrote {len(rows)} cases to {path} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
