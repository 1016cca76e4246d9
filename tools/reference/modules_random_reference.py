"""Golden values for minigrad's multinomial, exponential_, generator state and module tree
(buffers, ModuleList, apply, to(dtype)), taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/modules_random_reference.py

It writes tests/fixtures/modules_random.json, read by tests/autograd/test_random_sampling.cpp and
tests/nn/test_module_list.cpp. Before writing, it checks the draw rules minigrad follows against
torch itself (check_draw_rules): exponential_ is -log(1 - u) / lambd from one double uniform per
element; multinomial without replacement is the top k of probs / exponential_(), with
replacement (num_samples = 1 included) a binary search of one double uniform per sample in the
normalised cumulative sum. Floats are written with repr (exact); nothing is rounded.
"""

import math
import os
import sys

import numpy as np
import torch
from torch import nn

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from random_reference import mt19937_words  # noqa: E402
from reference_common import FIXTURES, dtype_name, fixture_header, values, write_cases  # noqa: E402

OUT = os.path.join(FIXTURES, "modules_random.json")
SEEDS = [0, 1337]
DTYPES = {"float32": torch.float32, "float64": torch.float64}


# --- the draw rules, replayed from raw mt19937 words and compared with torch ---------------------
class Words:
    """torch's CPU generator after manual_seed(seed), rebuilt from raw 32-bit words."""

    def __init__(self, seed):
        self.words, self.next = mt19937_words(seed, 20000), 0

    def unit_double(self):  # 53 bits of a 64-bit draw (two words, the first high)
        high, low = self.words[self.next], self.words[self.next + 1]
        self.next += 2
        return (((high << 32) | low) & ((1 << 53) - 1)) * 2.0 ** -53


def replay_multinomial(seed, probs, k, replacement):
    words, p = Words(seed), probs.numpy()
    rows = p if p.ndim == 2 else p[None]
    out = []
    if not replacement:
        q = np.array([-math.log(1.0 - words.unit_double()) for _ in range(rows.size)], dtype=p.dtype)
        ratio = rows / q.reshape(rows.shape)
        for row in ratio:  # ties are left out of these inputs: any stable order will do here
            out.append([int(np.argmax(row))] if k == 1 else list(np.argsort(-row, kind="stable")[:k]))
    else:
        for row in rows:
            cum = np.cumsum(row, dtype=p.dtype)  # a running sum in p's type, divided by its total
            cum = cum / cum[-1]
            cum[-1] = 1
            out.append([first_not_below(cum, words.unit_double()) for _ in range(k)])
    out = np.array(out)
    return (out if p.ndim == 2 else out[0]).tolist()


def first_not_below(cum, u):
    """The first index whose cumulative probability (in its own type, compared as a double) is not below u."""
    left, right = 0, len(cum)
    while right > left:
        mid = (left + right) // 2
        if float(cum[mid]) < u:
            left = mid + 1
        else:
            right = mid
    return left


def check_draw_rules():
    for seed in SEEDS:
        for dtype in DTYPES.values():
            torch.manual_seed(seed)
            got = torch.empty(3, 65, dtype=dtype).exponential_(2.5).reshape(-1).tolist()
            words = Words(seed)
            want = [float(np.array(-1.0 / 2.5 * math.log(1.0 - words.unit_double()), dtype=dtype_np(dtype)))
                    for _ in range(195)]
            assert got == want, "exponential_ no longer draws -log(1 - u) / lambd"
            for shape in [(65,), (4, 65), (3, 7)]:
                probs = torch.rand(shape, generator=torch.Generator().manual_seed(seed + 1), dtype=dtype)
                for k, replacement in [(1, False), (5, False), (1, True), (9, True)]:
                    torch.manual_seed(seed)
                    got = torch.multinomial(probs, k, replacement).tolist()
                    assert got == replay_multinomial(seed, probs, k, replacement), \
                        f"multinomial draws differently: {shape}, k={k}, replacement={replacement}"


def dtype_np(dtype):
    return np.float32 if dtype == torch.float32 else np.float64


# --- cases -----------------------------------------------------------------------------------------
def tensor_record(t):
    return {"shape": list(t.shape), "dtype": dtype_name(t.dtype), "values": values(t)}


def probability_inputs():
    """Rows of probabilities: the course's softmax over 65 characters, unnormalised rows, and rows
    with zeros (whose ties torch's topk orders in its own way)."""
    g = torch.Generator().manual_seed(65)
    inputs = {}
    for name, dtype in DTYPES.items():
        inputs[f"softmax_65_{name}"] = torch.softmax(torch.randn(65, generator=g, dtype=dtype), 0)
        inputs[f"softmax_4x65_{name}"] = torch.softmax(torch.randn(4, 65, generator=g, dtype=dtype), 1)
        inputs[f"unnormalised_3x7_{name}"] = torch.rand(3, 7, generator=g, dtype=dtype) * 5
    zeros = torch.zeros(2, 8)
    zeros[0, 1], zeros[0, 4], zeros[1, 0] = 1.0, 2.0, 1.0
    inputs["zeros_2x8_float32"] = zeros
    two_of_100 = torch.zeros(100)
    two_of_100[3], two_of_100[50] = 1.0, 1.0
    inputs["two_nonzero_of_100_float32"] = two_of_100
    one_of_300 = torch.zeros(300, dtype=torch.float64)
    one_of_300[3] = 1.0
    inputs["one_nonzero_of_300_float64"] = one_of_300
    return inputs


def after_draws():
    """What the generator gives next: shows that a call drew exactly as many numbers as torch's."""
    return values(torch.rand(3))


def multinomial_cases(inputs):
    plans = {"softmax_65": [(1, False), (3, False), (65, False), (1, True), (5, True), (200, True)],
             "softmax_4x65": [(1, False), (10, False), (1, True), (7, True)],
             "unnormalised_3x7": [(1, False), (7, False), (4, True)]}
    runs = [(f"{base}_{name}", k, r) for base, plan in plans.items() for name in DTYPES for k, r in plan]
    runs += [("zeros_2x8_float32", 8, False), ("zeros_2x8_float32", 2, False),
             ("two_nonzero_of_100_float32", 10, False), ("two_nonzero_of_100_float32", 2, False),
             ("one_nonzero_of_300_float64", 10, False), ("one_nonzero_of_300_float64", 2, False)]
    cases = []
    for seed in SEEDS:
        for probs_name, k, replacement in runs:
            torch.manual_seed(seed)
            samples = torch.multinomial(inputs[probs_name], k, replacement)
            cases.append({"kind": "multinomial", "seed": seed, "probs": probs_name, "num_samples": k,
                          "replacement": replacement, "shape": list(samples.shape), "samples": values(samples),
                          "after": after_draws()})
    return cases


def exponential_cases():
    cases = []
    for seed in SEEDS:
        for dtype in DTYPES:
            for shape, lambd in [([7], 1.0), ([3, 65], 1.0), ([20], 2.5), ([4], 0.5)]:
                torch.manual_seed(seed)
                t = torch.empty(shape, dtype=DTYPES[dtype]).exponential_(lambd)
                cases.append({"kind": "exponential", "seed": seed, "dtype": dtype, "shape": shape,
                              "lambd": lambd, "values": values(t), "after": after_draws()})
    return cases


def state_cases():
    """torch.get_rng_state() bytes after a few calls, and what the generator draws next."""
    cases = []
    for seed in SEEDS:
        torch.manual_seed(seed)
        fresh = torch.get_rng_state()
        torch.randn(3)  # leaves a cached Box-Muller sample
        torch.multinomial(torch.ones(65), 1)
        torch.rand(1234)  # runs past a twist of the 624 words
        state = torch.get_rng_state()
        assert state.dtype == torch.uint8 and state.numel() == 5056
        cases.append({"kind": "rng_state", "seed": seed, "fresh": values(fresh), "state": values(state),
                      "randn_5": values(torch.randn(5)), "rand_4": values(torch.rand(4)),
                      "multinomial_65_1": values(torch.multinomial(torch.ones(65), 1))})
    return cases


# --- the course-shaped model: a ModuleList of heads with a tril buffer, inside a Sequential -------
class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))


class MultiHeadAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(n_embd, n_embd // n_head, block_size) for _ in range(n_head)])
        self.proj = nn.Linear(n_embd, n_embd)
        self.dropout = nn.Dropout(0.2)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(n_embd, n_head, block_size)
        self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd),
                                  nn.Dropout(0.2))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)


class Model(nn.Module):
    def __init__(self, n_embd=8, n_head=2, block_size=4, n_layer=2, vocab=5):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.lm_head = nn.Linear(n_embd, vocab)

    @staticmethod
    def init_weights(module):  # gpt.py's _init_weights, for the modules this model has
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)


def module_case():
    torch.manual_seed(1337)
    model = Model()
    names = {id(m): name for name, m in model.named_modules()}
    visits = []
    model.apply(lambda m: visits.append(names[id(m)]))
    built = {name: t.clone() for name, t in model.state_dict().items()}  # state_dict() shares the data
    model.apply(Model.init_weights)
    state = model.state_dict()
    doubled = Model().double().state_dict()
    return {"kind": "modules", "seed": 1337, "repr": repr(model),
            "state_dict_names": list(state.keys()),
            "named_parameters": [name for name, _ in model.named_parameters()],
            "named_buffers": [name for name, _ in model.named_buffers()],
            "apply_order": visits,
            "built": {name: tensor_record(t) for name, t in built.items()},
            "initialised": {name: tensor_record(t) for name, t in state.items()},
            "double_dtypes": {name: dtype_name(t.dtype) for name, t in doubled.items()}}


def main():
    check_draw_rules()
    inputs = probability_inputs()
    cases = multinomial_cases(inputs) + exponential_cases() + state_cases() + [module_case()]
    header = fixture_header("modules_random_reference.py", notes=[
        "multinomial/exponential/rng_state cases: torch.manual_seed(seed), then the call; 'after' is torch.rand(3) next",
        "rng_state: torch.get_rng_state() bytes right after manual_seed ('fresh') and after randn(3), "
        "multinomial(ones(65), 1), rand(1234) ('state'), then what the generator draws next",
        "modules: a course-shaped model after manual_seed(1337): built, then apply(gpt.py's _init_weights)"])
    path = write_cases(OUT, header, cases, inputs={name: tensor_record(t) for name, t in inputs.items()})
    print(f"wrote {len(cases)} cases to {path} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
