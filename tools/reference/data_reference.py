"""Golden values for minigrad's data loading (data/dataloader.hpp, data/datasets.hpp), from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/data_reference.py

It writes tests/fixtures/data.json with:
- "random_split": the parts of torch.utils.data.random_split over TensorDataset(torch.arange(n)) for
  whole lengths and fractions, with an explicit or the default generator, and the next int64 after;
- "loader": the batch order of torch.utils.data.DataLoader over TensorDataset(torch.arange(n)),
  for 3 epochs, with shuffle on and off, an explicit generator (generator=g) or the default one
  (generator=None after torch.manual_seed), and the next int64 the generator gives afterwards
  (so the number of draws per epoch is checked too);
- "loader_interleaved": the same with a draw from the loader's generator in the loop body after
  every batch, which pins down when within an epoch the loader draws;
- "moons", "spiral", "regression": the toy data sets of data/datasets.hpp rebuilt from the formulas
  and draw orders written in that header, with torch's generator and float32 arithmetic in numpy;
- "digits_class_counts": examples per digit in assets/digits.csv.gz, counted with the csv module.
Floats are float32 values written with repr (exact); nothing is rounded.
"""

import csv
import gzip
import math
import os
import platform
import sys

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, write_json  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(FIXTURES, "data.json")
SEEDS = [0, 42]
EPOCHS = 3


def next_int64(generator):
    """What the generator gives next: one int64 random_() draw (Generator::random_full)."""
    return torch.empty((), dtype=torch.int64).random_(generator=generator).item()


def loader_case(seed, n, batch_size, drop_last, shuffle, which):
    dataset = TensorDataset(torch.arange(n))
    if which == "explicit":
        generator = torch.Generator()
        generator.manual_seed(seed)
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                            generator=generator)
    else:
        torch.manual_seed(seed)
        generator = None  # the default generator, as DataLoader(generator=None) uses it
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
    epochs = [[batch[0].tolist() for batch in loader] for _ in range(EPOCHS)]
    return {"seed": seed, "n": n, "batch_size": batch_size, "drop_last": drop_last, "shuffle": shuffle,
            "generator": which, "batches": len(loader), "epochs": epochs,
            "next_int64": next_int64(generator)}


def loader_cases():
    cases = []
    for which in ["explicit", "default"]:
        for seed in SEEDS:
            for n in [10, 100]:
                for batch_size in [3, 32]:
                    for drop_last in [False, True]:
                        cases.append(loader_case(seed, n, batch_size, drop_last, True, which))
        for drop_last in [False, True]:
            cases.append(loader_case(0, 10, 3, drop_last, False, which))
    return cases


def interleaved_case(seed, n, batch_size, drop_last):
    """Draws from the loader's own generator inside the loop body, one int64 after each batch:
    they show when the loader draws (RandomSampler's trailing permutation comes before the body
    of an incomplete last batch, after the body of a full one)."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    loader = DataLoader(TensorDataset(torch.arange(n)), batch_size=batch_size, shuffle=True,
                        drop_last=drop_last, generator=generator)
    epochs = []
    for _ in range(2):
        steps = []
        for batch in loader:
            steps.append({"batch": batch[0].tolist(), "draw_after": next_int64(generator)})
        epochs.append(steps)
    return {"seed": seed, "n": n, "batch_size": batch_size, "drop_last": drop_last, "epochs": epochs,
            "next_int64": next_int64(generator)}


def split_case(n, lengths, seed, which):
    """random_split(TensorDataset(arange(n)), lengths) with an explicit generator or the default one
    after manual_seed: each part's examples (their values are their indices), and the next int64."""
    if which == "explicit":
        generator = torch.Generator()
        generator.manual_seed(seed)
        parts = random_split(TensorDataset(torch.arange(n)), lengths, generator=generator)
    else:
        torch.manual_seed(seed)
        generator = None
        parts = random_split(TensorDataset(torch.arange(n)), lengths)
    return {"n": n, "lengths": lengths, "seed": seed, "generator": which,
            "parts": [[part[i][0].item() for i in range(len(part))] for part in parts],
            "next_int64": next_int64(generator)}


def linspace(start, end, count, i):
    """numpy.linspace(start, end, count)[i] by the formula datasets.cpp uses."""
    if count == 1:
        return start
    return start + (end - start) * i / (count - 1)


def floats(array):
    return [float(v) for v in np.asarray(array, dtype=np.float32).reshape(-1)]


def make_moons(n, noise, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    n_out = n // 2
    n_in = n - n_out
    rows = []
    for i in range(n_out):
        t = linspace(0.0, math.pi, n_out, i)
        rows.append((math.cos(t), math.sin(t)))
    for i in range(n_in):
        t = linspace(0.0, math.pi, n_in, i)
        rows.append((1.0 - math.cos(t), 1.0 - math.sin(t) - 0.5))
    base = np.array(rows, dtype=np.float64).astype(np.float32)
    z = torch.randn(n, 2, generator=g).numpy()
    x = base + np.float32(noise) * z  # float32 throughout
    assert x.dtype == np.float32
    y = [0] * n_out + [1] * n_in
    return {"n": n, "noise": noise, "seed": seed, "x": floats(x), "y": y}


def make_spiral(n_per_class, n_classes, noise, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    rows, labels = [], []
    for j in range(n_classes):
        z = torch.randn(n_per_class, generator=g).tolist()
        for i in range(n_per_class):
            r = linspace(0.0, 1.0, n_per_class, i)
            t = linspace(4.0 * j, 4.0 * j + 4.0, n_per_class, i) + noise * z[i]
            rows.append((r * math.sin(t), r * math.cos(t)))
            labels.append(j)
    x = np.array(rows, dtype=np.float64).astype(np.float32)
    return {"n_per_class": n_per_class, "n_classes": n_classes, "noise": noise, "seed": seed,
            "x": floats(x), "y": labels}


def make_regression(n, noise, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    x = torch.empty(n, 1).uniform_(-3.0, 3.0, generator=g)
    z = torch.randn(n, 1, generator=g).numpy()
    clean = np.array([math.sin(v) for v in x.reshape(-1).tolist()], dtype=np.float64).astype(np.float32)
    y = clean.reshape(n, 1) + np.float32(noise) * z
    assert y.dtype == np.float32
    return {"n": n, "noise": noise, "seed": seed, "x": floats(x.numpy()), "y": floats(y)}


def digits_class_counts():
    counts = [0] * 10
    with gzip.open(os.path.join(ROOT, "assets", "digits.csv.gz"), "rt") as f:
        for row in csv.reader(f):
            counts[int(row[-1])] += 1
    return counts


def main():
    out = {
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "loader": loader_cases(),
        "loader_interleaved": [interleaved_case(0, n, b, d) for (n, b, d) in
                               [(10, 3, False), (9, 3, False), (10, 3, True), (9, 3, True), (2, 3, True)]],
        # n below and above 16 (randn's two paths), odd n (moons of unequal size), noise 0.
        "moons": [make_moons(n, noise, seed) for (n, noise, seed) in
                  [(7, 0.1, 0), (100, 0.1, 0), (101, 0.2, 42), (20, 0.0, 42)]],
        "spiral": [make_spiral(npc, k, noise, seed) for (npc, k, noise, seed) in
                   [(5, 3, 0.2, 0), (100, 3, 0.2, 42), (1, 2, 0.2, 0), (17, 4, 0.0, 0)]],
        "regression": [make_regression(n, noise, seed) for (n, noise, seed) in
                       [(5, 0.1, 0), (64, 0.1, 42), (33, 0.0, 0)]],
        "digits_class_counts": digits_class_counts(),
        # whole lengths; fractions with no remainder; fractions whose floors leave 2 (one each to
        # parts 0 and 1); a part of length 0; a larger data set
        "random_split": [split_case(n, lengths, seed, which) for (n, lengths, seed, which) in
                         [(10, [3, 7], 42, "explicit"), (30, [0.3, 0.3, 0.4], 42, "explicit"),
                          (11, [0.25, 0.25, 0.5], 0, "default"), (5, [0, 5], 0, "default"),
                          (100, [0.8, 0.2], 1337, "default")]],
    }
    print("wrote", write_json(OUT, out))


if __name__ == "__main__":
    main()
