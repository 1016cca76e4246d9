"""Golden values for minigrad's Generator (autograd/random.hpp), taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/random_reference.py

It writes tests/fixtures/random.json. Every case starts from torch.manual_seed(seed) and lists
one or more steps; each step is one PyTorch call on the default CPU generator, so a case with
several steps shows that a call continues from where the previous one left the generator.
Floats are written with repr (exact for float32 and float64 alike); nothing is rounded.
"""

import os
import platform
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, TORCH_PACKAGE, values, write_cases  # noqa: E402

OUT = os.path.join(FIXTURES, "random.json")
SEEDS = [0, 42]
DTYPES = {"float32": torch.float32, "float64": torch.float64}


# --- a pure-Python mt19937 for the raw 32-bit words --------------------------------------------
# torch exposes no call that returns one raw 32-bit draw per element (randint(0, 2**32) takes
# the low word of a 64-bit draw; randint(0, 2**31) drops the top bit), so the raw words come
# from this reimplementation, seeded like at::mt19937 (MT19937RNGEngine.h: the low 32 bits of
# the seed through Knuth's multiplier 1812433253). check_raw32 proves it matches torch.
def mt19937_words(seed, count):
    mask = 0xFFFFFFFF
    state = [seed & mask]
    for i in range(1, 624):
        state.append((1812433253 * (state[-1] ^ (state[-1] >> 30)) + i) & mask)
    words = []
    index = 624
    for _ in range(count):
        if index == 624:
            for i in range(624):
                y = (state[i] & 0x80000000) | (state[(i + 1) % 624] & 0x7FFFFFFF)
                state[i] = state[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            index = 0
        y = state[index]
        index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        words.append(y)
    return words


def check_raw32(seed, words):
    """random_(-2**63, None) returns each 64-bit draw whole: the first 32-bit word is the high half."""
    torch.manual_seed(seed)
    full = torch.empty(len(words) // 2, dtype=torch.int64).random_(-2**63, None).tolist()
    pairs = [((w0 << 32) | w1) for w0, w1 in zip(words[0::2], words[1::2])]
    assert [v & 0xFFFFFFFFFFFFFFFF for v in full] == pairs, "mt19937 reimplementation disagrees"


def check_dropout(seed):
    """F.dropout(x, p) on CPU is x * (bernoulli_(1 - p) / (1 - p)): same draws, same values."""
    torch.manual_seed(seed)
    dropped = F.dropout(torch.ones(40), p=0.7, training=True)
    torch.manual_seed(seed)
    mask = torch.empty(40).bernoulli_(0.3)
    assert torch.equal(dropped, mask / 0.3), "F.dropout no longer draws through bernoulli_(1 - p)"


# --- steps: each runs one torch call and returns the record the C++ test replays ---------------
def step(op, dtype, n, params, t):
    """The record of one call: what the C++ test replays (op, dtype, n, params) and the values drawn."""
    return {"op": op, "dtype": dtype, "n": n, **params, "values": values(t)}


def uniform(n, frm, to, dtype="float32"):
    t = torch.empty(n, dtype=DTYPES[dtype]).uniform_(frm, to)
    return step("uniform", dtype, n, {"from": frm, "to": to}, t)


def rand(n, dtype="float32"):
    return step("uniform", dtype, n, {"from": 0.0, "to": 1.0}, torch.rand(n, dtype=DTYPES[dtype]))


def normal(n, mean, std, dtype="float32"):
    t = torch.empty(n, dtype=DTYPES[dtype]).normal_(mean, std)
    return step("normal", dtype, n, {"mean": mean, "std": std}, t)


def randn(n, dtype="float32"):
    return step("normal", dtype, n, {"mean": 0.0, "std": 1.0}, torch.randn(n, dtype=DTYPES[dtype]))


def randint(frm, to, n):
    t = torch.randint(frm, to, (n,))
    assert t.dtype == torch.int64
    return step("random_from_to", "int64", n, {"from": frm, "to": to}, t)


def random_full():
    return step("random_full", "int64", 1, {}, torch.empty((), dtype=torch.int64).random_())


def randperm(n):
    t = torch.randperm(n)
    assert t.dtype == torch.int64
    return step("randperm", "int64", n, {}, t)


def bernoulli(n, p, dtype="float32"):
    return step("bernoulli", dtype, n, {"p": p}, torch.empty(n, dtype=DTYPES[dtype]).bernoulli_(p))


def raw32(seed, n):
    words = mt19937_words(seed, n)
    check_raw32(seed, words)
    return {"op": "raw32", "dtype": "uint32", "n": n, "values": words}


def case(name, seed, *steps):
    """Seeds torch, runs the steps in order (each is a thunk) and records them."""
    torch.manual_seed(seed)
    return {"name": f"{name}_seed_{seed}", "seed": seed, "steps": [step() for step in steps]}


def cases_for(seed):
    out = []
    for n in [1, 15, 16, 17, 128, 1000]:
        out.append(case(f"rand_{n}", seed, lambda n=n: rand(n)))
        out.append(case(f"randn_{n}", seed, lambda n=n: randn(n)))
    for n in [1, 15, 17, 128]:
        out.append(case(f"rand_{n}_float64", seed, lambda n=n: rand(n, "float64")))
        out.append(case(f"randn_{n}_float64", seed, lambda n=n: randn(n, "float64")))
    out.append(case("randint_0_10", seed, lambda: randint(0, 10, 20)))
    out.append(case("randint_minus5_1000000", seed, lambda: randint(-5, 1000000, 20)))
    out.append(case("randint_range_above_2_pow_32", seed, lambda: randint(-3, 2**33, 10)))
    for n in [1, 10, 100]:
        out.append(case(f"randperm_{n}", seed, lambda n=n: randperm(n)))
    out.append(case("uniform_minus0.3_0.7", seed, lambda: uniform(50, -0.3, 0.7)))
    out.append(case("uniform_minus0.3_0.7_float64", seed, lambda: uniform(20, -0.3, 0.7, "float64")))
    out.append(case("normal_2.0_0.5", seed, lambda: normal(33, 2.0, 0.5)))
    out.append(case("normal_2.0_0.5_small", seed, lambda: normal(5, 2.0, 0.5)))
    # Bounds and std whose products round: PyTorch's kernels fuse x * scale + shift into one
    # fma, and these values (unlike the ones above) show the difference at the last bit.
    out.append(case("uniform_minus1.7_2.9", seed, lambda: uniform(20, -1.7, 2.9)))
    out.append(case("uniform_minus1.7_2.9_float64", seed, lambda: uniform(20, -1.7, 2.9, "float64")))
    out.append(case("normal_0.3_1.3", seed, lambda: normal(33, 0.3, 1.3)))
    out.append(case("normal_0.3_1.3_float64", seed, lambda: normal(33, 0.3, 1.3, "float64")))
    out.append(case("normal_0.3_1.3_small_float64", seed, lambda: normal(5, 0.3, 1.3, "float64")))
    out.append(case("random_full_three_times", seed, random_full, random_full, random_full))
    out.append(case("draws_continue_across_calls", seed,
                    lambda: rand(5), lambda: randn(20), lambda: randint(0, 100, 5)))
    # Tensors of fewer than 16 normals draw Box-Muller pairs and keep the spare sine sample in
    # the generator; the next small normal call (even after other calls) uses it first.
    out.append(case("small_normals_share_the_cached_sample", seed,
                    lambda: randn(3), lambda: rand(2), lambda: randn(1, "float64"),
                    lambda: randn(16), lambda: randn(2)))
    out.append(case("bernoulli_0.3", seed, lambda: bernoulli(40, 0.3)))
    out.append(case("bernoulli_0.3_float64", seed, lambda: bernoulli(40, 0.3, "float64")))
    out.append(case("raw32", seed, lambda: raw32(seed, 10)))
    return out


def cpu_capability():
    """The vector kernels torch dispatches to (AVX2 decides how float normal_ with n >= 16 runs)."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    cases = []
    for seed in SEEDS:
        check_dropout(seed)
        cases += cases_for(seed)

    # fixture_header's fields, with the CPU's kernels and MKL after the torch package.
    header = {
        "torch_version": torch.__version__,
        "torch_package": TORCH_PACKAGE,
        "cpu_capability": cpu_capability(),
        "mkl": torch.backends.mkl.is_available(),
        "python": platform.python_version(),
        "command": "/usr/bin/python3 tools/reference/random_reference.py",
        "notes": [
            "each case: torch.manual_seed(seed), then its steps in order on the default generator",
            "raw32: pure-Python mt19937, checked against torch random_(-2**63, None)",
            "F.dropout(x, p) on CPU checked equal to x * bernoulli_(1 - p) / (1 - p)",
            "bernoulli_ without MKL (Debian build); MKL builds draw differently",
        ],
    }
    path = write_cases(OUT, header, cases)  # one case per line: a small file, readable diffs
    print(f"wrote {len(cases)} cases to {path} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
