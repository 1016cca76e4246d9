"""Golden values for minigrad's indexing and shape ops (autograd/ops_index.hpp, Tensor::index,
slice, cat/stack, masked_fill, batched matmul) and nn::Embedding, taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/indexing_reference.py

It writes tests/fixtures/indexing.json, read by tests/autograd/test_index_ops.cpp and
tests/nn/test_embedding.cpp:
  cases      one per op call: the inputs (values drawn by torch.randn after manual_seed, index
             tensors written by hand, with repeated and negative indices where the op takes them),
             the outputs, a random cotangent per output, and the gradient of
             sum(out_i * grad_out_i) for every float input. The C++ test names the op by the case.
  embedding  (cases of kind embedding_init and embedding_course) nn.Embedding after torch.manual_seed(1337): every weight of small tables (both of
             torch's normal_ paths: below 16 elements and from 16 on), the course's [65, 128]
             table in part, and the repr of each.
Floats are written with repr (exact); -inf (masked attention) is written as the string "-inf".
"""

import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, dtype_name, fixture_header, flat, write_cases  # noqa: E402

OUT = os.path.join(FIXTURES, "indexing.json")


def record(t):
    return {"shape": list(t.shape), "dtype": dtype_name(t.dtype), "values": flat(t)}


def case(name, inputs, f, seed):
    """inputs: name -> tensor (float ones get requires_grad); f(**inputs) -> a tensor or a list of them."""
    leaves = {}
    for key, t in inputs.items():
        leaves[key] = t.clone().requires_grad_(t.is_floating_point())
    outs = f(**leaves)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    torch.manual_seed(seed + 1000)
    grad_outs = [torch.randn(o.shape, dtype=o.dtype) if o.is_floating_point() else torch.zeros_like(o) for o in outs]
    loss = sum((o * g).sum() for o, g in zip(outs, grad_outs) if o.requires_grad)
    if torch.is_tensor(loss):
        loss.backward()
    grads = {}
    for key, t in leaves.items():
        if t.is_floating_point():
            grads[key] = flat(t.grad) if t.grad is not None else flat(torch.zeros_like(t))
    return {
        "name": name,
        "kind": "op",
        "inputs": {key: record(t) for key, t in inputs.items()},
        "outs": [record(o) for o in outs],
        "grad_fn": outs[0].grad_fn.name() if outs[0].grad_fn is not None else "",
        "grad_outs": [flat(g) for g in grad_outs],
        "grads": grads,
    }


def randn(seed, *shape):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def long(values):
    return torch.tensor(values, dtype=torch.int64)


def cases():
    causal = torch.tril(torch.ones(4, 4))
    out = [
        # embedding: repeated ids add up their gradients; the padding row gets none
        case("embedding_BT_repeated", {"weight": randn(1, 5, 3), "indices": long([[0, 2, 2], [4, 0, 2]])},
             lambda weight, indices: F.embedding(indices, weight), 1),
        case("embedding_padding_idx_1", {"weight": randn(2, 5, 3), "indices": long([[1, 3, 1], [1, 0, 3]])},
             lambda weight, indices: F.embedding(indices, weight, padding_idx=1), 2),
        case("embedding_padding_idx_minus_1", {"weight": randn(3, 5, 2), "indices": long([4, 4, 2])},
             lambda weight, indices: F.embedding(indices, weight, padding_idx=-1), 3),
        case("index_select_dim0_repeated", {"a": randn(4, 4, 3), "index": long([3, 0, 3, 1])},
             lambda a, index: torch.index_select(a, 0, index), 4),
        case("index_select_dim1", {"a": randn(5, 2, 4, 3), "index": long([2, 2, 0])},
             lambda a, index: torch.index_select(a, 1, index), 5),
        case("index_select_dim_minus_1", {"a": randn(6, 2, 3), "index": long([1])},
             lambda a, index: a.index_select(-1, index), 6),
        case("index_tensor_2d_negative", {"a": randn(7, 5, 3), "index": long([[1, -1], [1, 0]])},
             lambda a, index: a[index], 7),
        case("gather_dim1", {"a": randn(8, 3, 4), "index": long([[0, 0], [3, 1], [2, 2]])},
             lambda a, index: torch.gather(a, 1, index), 8),
        case("gather_dim0_repeated", {"a": randn(9, 3, 4), "index": long([[2, 0, 2, 1], [2, 2, 0, 0]])},
             lambda a, index: torch.gather(a, 0, index), 9),
        case("index_add_dim0_alpha_2",
             {"a": randn(10, 4, 3), "index": long([0, 2, 0]), "source": randn(11, 3, 3)},
             lambda a, index, source: torch.index_add(a, 0, index, source, alpha=2), 10),
        case("index_add_dim1",
             {"a": randn(12, 2, 3), "index": long([2, 2, 2, 0]), "source": randn(13, 2, 4)},
             lambda a, index, source: torch.index_add(a, 1, index, source), 12),
        case("scatter_add_dim1_smaller_index",
             {"a": randn(14, 3, 4), "index": long([[0, 0, 3], [1, 1, 1]]), "src": randn(15, 2, 3)},
             lambda a, index, src: torch.scatter_add(a, 1, index, src), 14),
        case("scatter_add_dim0",
             {"a": randn(16, 2, 3), "index": long([[1, 0, 1], [1, 1, 1]]), "src": randn(17, 2, 3)},
             lambda a, index, src: torch.scatter_add(a, 0, index, src), 16),
        case("tril", {"a": randn(18, 4, 4)}, lambda a: torch.tril(a), 18),
        case("tril_diagonal_minus_1_batched", {"a": randn(19, 2, 3, 4)}, lambda a: torch.tril(a, -1), 19),
        case("tril_diagonal_2", {"a": randn(20, 3, 5)}, lambda a: a.tril(2), 20),
        case("triu_diagonal_1", {"a": randn(21, 3, 5)}, lambda a: torch.triu(a, 1), 21),
        case("triu_batched", {"a": randn(22, 2, 4, 3)}, lambda a: a.triu(), 22),
        # the course's attention mask: masked_fill(tril[:T, :T] == 0, -inf) over [B, T, T], softmax
        case("masked_fill_causal_softmax", {"wei": randn(23, 2, 3, 3), "tril": causal},
             lambda wei, tril: F.softmax(wei.masked_fill(tril[:3, :3] == 0, float("-inf")), dim=-1), 23),
        case("masked_fill_causal", {"wei": randn(24, 2, 4, 4), "tril": causal},
             lambda wei, tril: wei.masked_fill(tril == 0, float("-inf")), 24),
        # slicing as the course writes it
        case("slice_negative_start", {"idx": randn(25, 2, 5, 3)}, lambda idx: idx[:, -3:], 25),
        case("slice_last_position", {"logits": randn(26, 2, 4, 5)}, lambda logits: logits[:, -1, :], 26),
        case("slice_both_dims", {"tril": randn(27, 4, 4)}, lambda tril: tril[:3, :3], 27),
        case("slice_step_2_ellipsis", {"x": randn(28, 2, 3, 5)}, lambda x: x[..., ::2], 28),
        case("slice_none_negative_stop", {"x": randn(29, 3, 4)}, lambda x: x[None, 1:, :-1], 29),
        case("slice_clamped_bounds", {"x": randn(30, 3, 4)}, lambda x: x[-10:2, 3:100], 30),
        case("index_tensor_middle_dim", {"x": randn(31, 2, 5, 3), "idx": long([4, 0, 4])},
             lambda x, idx: x[:, idx], 31),
        case("index_integer_then_tensor", {"x": randn(32, 2, 5, 3), "idx": long([[2, 2], [0, 1]])},
             lambda x, idx: x[1, :, idx], 32),
        # joining and cutting
        case("cat_dim_minus_1", {"a": randn(33, 2, 3, 1), "b": randn(34, 2, 3, 2), "c": randn(35, 2, 3, 3)},
             lambda a, b, c: torch.cat([a, b, c], dim=-1), 33),
        case("stack_dim_minus_1", {"a": randn(36, 2, 3), "b": randn(37, 2, 3)},
             lambda a, b: torch.stack([a, b], dim=-1), 36),
        case("stack_dim_1", {"a": randn(38, 2, 3), "b": randn(39, 2, 3), "c": randn(40, 2, 3)},
             lambda a, b, c: torch.stack([a, b, c], dim=1), 38),
        case("split_2_dim_0", {"x": randn(41, 5, 3)}, lambda x: torch.split(x, 2), 41),
        case("split_sizes_dim_minus_1", {"x": randn(42, 2, 6)}, lambda x: torch.split(x, [1, 3, 2], dim=-1), 42),
        case("chunk_4_of_5", {"x": randn(43, 5, 2)}, lambda x: torch.chunk(x, 4), 43),
        case("chunk_3_dim_1", {"x": randn(44, 2, 6)}, lambda x: x.chunk(3, 1), 44),
        # the attention head's two batched products
        case("matmul_BThs_at_BhsT", {"q": randn(45, 2, 4, 3), "kT": randn(46, 2, 3, 4)},
             lambda q, kT: q @ kT, 45),
        case("matmul_BTT_at_BThs", {"wei": randn(47, 2, 4, 4), "v": randn(48, 2, 4, 3)},
             lambda wei, v: wei @ v, 47),
        # not differentiable
        case("one_hot_5", {"indices": long([[0, 2], [1, 4]])}, lambda indices: F.one_hot(indices, 5), 49),
        case("one_hot_inferred", {"indices": long([3, 0, 1])}, lambda indices: F.one_hot(indices), 50),
    ]
    return out


def put_case(name, inputs, f):
    """x[...] = values, written on a copy of inputs["x"] by f(y, **the other inputs); out is y after."""
    y = inputs["x"].clone()
    f(y, **{key: t for key, t in inputs.items() if key != "x"})
    return {"name": name, "kind": "index_put", "inputs": {key: record(t) for key, t in inputs.items()},
            "outs": [record(y)]}


def put_cases():
    def put(index, value=None):
        """y[index] = value, or = the input v when value is None."""
        def f(y, v=None):
            y[index] = v if value is None else value
        return f

    return [
        # the lecture's first averaging loop: xbow[b, t] = torch.mean(xprev, 0)
        put_case("put_integers_row", {"x": randn(60, 2, 3, 2), "v": randn(61, 2)}, put((0, 1))),
        put_case("put_slice_scalar", {"x": randn(62, 2, 3, 4)}, put((slice(None), -1), 7.5)),
        put_case("put_ellipsis_step_broadcast", {"x": randn(63, 2, 3, 4), "v": randn(64, 2)},
                 put((Ellipsis, slice(None, None, 2)))),
        put_case("put_none_negative_stop", {"x": randn(65, 3, 4), "v": randn(66, 2, 3)},
                 put((None, slice(1, None), slice(None, -1)))),
        put_case("put_clamped_bounds_zero", {"x": randn(67, 3, 4)}, put((slice(-10, 2), slice(3, 100)), 0.0)),
        put_case("put_integer_then_tensor", {"x": randn(68, 2, 5, 3), "v": randn(69, 2, 2)},
                 put((1, slice(None), long([[2, -1], [0, 1]])))),
        put_case("put_leading_ones_dropped", {"x": randn(70, 2, 3), "v": randn(71, 1, 1, 3)}, put(0)),
        put_case("put_float_into_int64", {"x": long([[1, 2, 3], [4, 5, 6]]),
                                          "v": torch.tensor([2.7, -1.5, -0.5], dtype=torch.float64)}, put(1)),
        put_case("put_whole_tensor", {"x": randn(72, 2, 3), "v": randn(73, 3)}, put(Ellipsis)),
    ]


def embedding_inits():
    rows = []
    for num, dim, padding_idx in [(65, 8, None), (3, 5, None), (10, 3, 2), (6, 4, -1)]:
        torch.manual_seed(1337)
        e = nn.Embedding(num, dim, padding_idx=padding_idx)
        rows.append({"name": f"embedding_init_{num}x{dim}", "kind": "embedding_init", "num_embeddings": num, "embedding_dim": dim, "padding_idx": padding_idx,
                     "repr": repr(e), "weight": flat(e.weight)})
    torch.manual_seed(1337)
    course = nn.Embedding(65, 128)
    w = course.weight.detach().reshape(-1)
    course_row = {"name": "embedding_init_course_65x128", "kind": "embedding_course", "num_embeddings": 65, "embedding_dim": 128, "padding_idx": None, "repr": repr(course),
                  "sum": w.double().sum().item(), "first": flat(w[:16]), "last": flat(w[-16:]),
                  "next_randn": flat(torch.randn(4))}  # the generator's state after the draws
    return rows, course_row


def main():
    all_cases = cases() + put_cases()
    inits, course = embedding_inits()
    header = fixture_header("indexing_reference.py", notes=[
        "each case: outs = op(inputs); loss = sum_i (outs[i] * grad_outs[i]).sum(); loss.backward(); "
        "grads[name] is the .grad of every float input (zeros if unused)",
        "float inputs from torch.randn after torch.manual_seed(seed); index tensors written by hand",
        "grad_outs from torch.randn after torch.manual_seed(seed + 1000)",
        "values are row-major, flattened",
        "kind index_put: y = x.clone(); y[index] = v (or a number); outs[0] is y after",
        "kind embedding_init: nn.Embedding(num, dim, padding_idx) right after torch.manual_seed(1337), every "
        "weight; kind embedding_course: the course's [65, 128] table, its sum, first and last 16 weights, and "
        "the next 4 torch.randn values",
    ])
    path = write_cases(OUT, header, all_cases + inits + [course])
    print(f"wrote {len(all_cases) + len(inits) + 1} case(s) to {path} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
