#!/usr/bin/python3
"""The PyTorch twin of bench/: the same workloads as minigrad_bench, timed the same way.

Run with Debian's python3-torch 1.13.1 from the repository root, with the BLAS's thread count
fixed in the environment (it is read when torch loads, so it cannot be set from inside):

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 tools/bench/pytorch_bench.py --threads 1

tools/bench/compare.py runs it beside minigrad_bench and prints the two medians and their ratio.
Every workload is float32, seeded with torch.manual_seed(0), and written as a learner writes it;
its name is the name Google Benchmark gives the C++ twin, so the two results pair up by name.

Timing mirrors Google Benchmark's: a warm-up, an iteration count n grown until n calls take at
least --min-time seconds, then --repetitions runs of n calls. The figure reported is the median
over the runs of the mean wall-clock time per call (perf_counter_ns), with the main thread's CPU
time per call beside it (thread_time_ns, the clock Google Benchmark's "CPU" column uses).
"""

import argparse
import ctypes
import json
import os
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing the lesson must leave no __pycache__ in tools/reference
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
from feedforward_lesson import FeedForward  # noqa: E402  (the lesson's class, unchanged)

ROWS = [1, 2, 64, 2048]


def input_shape(rows):
    """N rows of width C = 128; the 2048-row case is the course's batch [B, T, C] = [32, 64, 128]."""
    return (32, 64, 128) if rows == 2048 else (rows, 128)


def shape_text(shape):
    return "[" + ",".join(str(size) for size in shape) + "]"


# ---- workloads: each maker builds its data (seed 0) and returns the call to time ---------------

def ff_forward_no_grad(rows):
    torch.manual_seed(0)
    ff = FeedForward()
    x = torch.randn(input_shape(rows))

    def call():
        with torch.no_grad():
            ff(x)
    return call


def ff_forward_backward(rows):
    torch.manual_seed(0)
    ff = FeedForward()
    x = torch.randn(input_shape(rows))

    def call():
        ff.zero_grad(set_to_none=True)
        ff(x).sum().backward()
    return call


def ff_train_step(rows):
    torch.manual_seed(0)
    ff = FeedForward()
    x = torch.randn(input_shape(rows))
    y = torch.randn(input_shape(rows))
    optimizer = torch.optim.AdamW(ff.parameters())  # lr 1e-3, weight_decay 1e-2

    def call():
        optimizer.zero_grad(set_to_none=True)
        loss = F.mse_loss(ff(x), y)
        loss.backward()
        optimizer.step()
    return call


def matmul(a_shape, b_shape):
    torch.manual_seed(0)
    a = torch.randn(a_shape)
    b = torch.randn(b_shape)
    return lambda: a @ b


def on_2048x512(op):
    torch.manual_seed(0)
    a = torch.randn(2048, 512)
    b = torch.randn(2048, 512)
    return lambda: op(a, b)


# The GPT's own ops at the course's size (bench/bench_gpt_ops.cpp): H = 32 sequences x 4 heads.
HEADS = 32 * 4


def dropout(shape, backward):
    torch.manual_seed(0)
    x = torch.randn(shape, requires_grad=backward)
    g = torch.randn(shape)
    if not backward:
        return lambda: F.dropout(x, 0.2, training=True)

    def call():
        x.grad = None
        F.dropout(x, 0.2, training=True).backward(g)
    return call


def bmm(n, k, m, backward):
    torch.manual_seed(0)
    a = torch.randn(HEADS, n, k, requires_grad=backward)
    b = torch.randn(HEADS, k, m, requires_grad=backward)
    g = torch.randn(HEADS, n, m)
    if not backward:
        return lambda: a @ b

    def call():
        a.grad = None
        b.grad = None
        (a @ b).backward(g)
    return call


def causal_softmax(backward):
    torch.manual_seed(0)
    wei = torch.randn(HEADS, 64, 64, requires_grad=backward)
    tril = torch.tril(torch.ones(64, 64))
    g = torch.randn(HEADS, 64, 64)
    if not backward:
        return lambda: wei.masked_fill(tril == 0, float("-inf")).softmax(-1)

    def call():
        wei.grad = None
        wei.masked_fill(tril == 0, float("-inf")).softmax(-1).backward(g)
    return call


def layer_norm(backward):
    torch.manual_seed(0)
    x = torch.randn(32, 64, 128, requires_grad=backward)
    w = (torch.randn(128) * 0.1 + 1).requires_grad_(backward)
    b = (torch.randn(128) * 0.1).requires_grad_(backward)
    g = torch.randn(32, 64, 128)
    if not backward:
        return lambda: F.layer_norm(x, [128], w, b)

    def call():
        x.grad = w.grad = b.grad = None
        F.layer_norm(x, [128], w, b).backward(g)
    return call


def gpt_ops():
    """(name, description, maker) of bench_gpt_ops.cpp's workloads, in its order."""
    return [
        ("gpt_dropout_hidden", "dropout 0.2 [32,64,512]", lambda: dropout((32, 64, 512), False)),
        ("gpt_dropout_attention", "dropout 0.2 [32,4,64,64]", lambda: dropout((32, 4, 64, 64), False)),
        ("gpt_dropout_attention_backward", "dropout 0.2 + backward [32,4,64,64]",
         lambda: dropout((32, 4, 64, 64), True)),
        ("gpt_bmm_scores", "bmm [128,64,32]x[128,32,64]", lambda: bmm(64, 32, 64, False)),
        ("gpt_bmm_scores_backward", "bmm + backward [128,64,32]x[128,32,64]", lambda: bmm(64, 32, 64, True)),
        ("gpt_bmm_values", "bmm [128,64,64]x[128,64,32]", lambda: bmm(64, 64, 32, False)),
        ("gpt_bmm_values_backward", "bmm + backward [128,64,64]x[128,64,32]", lambda: bmm(64, 64, 32, True)),
        ("gpt_softmax_causal", "causal masked_fill + softmax [128,64,64]", lambda: causal_softmax(False)),
        ("gpt_softmax_causal_backward", "causal masked_fill + softmax + backward [128,64,64]",
         lambda: causal_softmax(True)),
        ("gpt_layer_norm", "layer_norm [32,64,128]", lambda: layer_norm(False)),
        ("gpt_layer_norm_backward", "layer_norm + backward [32,64,128]", lambda: layer_norm(True)),
    ]


# The course's GPT (bench/bench_gpt.cpp): tools/reference/gpt_reference.py's model at the course's size.
def gpt_course(dropout):
    """(model, train_data, config), seeded as the course seeds them."""
    import gpt_reference  # noqa: E402  (tools/reference is on sys.path)
    c = dict(gpt_reference.COURSE, dropout=dropout)
    torch.manual_seed(c["seed"])
    with open(gpt_reference.TEXT, "r", encoding="utf-8") as f:
        text = f.read()
    stoi = {ch: i for i, ch in enumerate(sorted(set(text)))}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    return gpt_reference.GPTLanguageModel(c, len(stoi)), data[:int(0.9 * len(data))], c


def gpt_get_batch(data, c):
    ix = torch.randint(len(data) - c["block_size"], (c["batch_size"],))
    x = torch.stack([data[i:i + c["block_size"]] for i in ix])
    y = torch.stack([data[i + 1:i + c["block_size"] + 1] for i in ix])
    return x, y


def gpt_train_step(dropout):
    model, data, c = gpt_course(dropout)
    optimizer = torch.optim.AdamW(model.parameters(), lr=c["learning_rate"])

    def call():
        xb, yb = gpt_get_batch(data, c)
        _, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss.item()
    return call


def gpt_forward_no_grad():
    model, data, c = gpt_course(0.2)
    model.eval()
    xb, _ = gpt_get_batch(data, c)

    def call():
        with torch.no_grad():
            model(xb)
    return call


def gpt_generate():
    model, _, _ = gpt_course(0.2)
    model.eval()
    context = torch.zeros((1, 1), dtype=torch.long)

    def call():
        with torch.no_grad():
            model.generate(context, 200)
    return call


def gpt_model():
    """(name, description, maker) of bench_gpt.cpp's workloads (its matrix-product floor is ours alone)."""
    return [
        ("gpt_train_step/dropout:20", "GPT training step, dropout 0.2", lambda: gpt_train_step(0.2)),
        ("gpt_train_step/dropout:0", "GPT training step, dropout 0", lambda: gpt_train_step(0.0)),
        ("gpt_forward_no_grad", "GPT forward, eval, no_grad [32,64]", gpt_forward_no_grad),
        ("gpt_generate", "GPT generate 200 tokens, eval", gpt_generate),
    ]


def workloads():
    """(name, description, maker) for every workload, in minigrad_bench's order."""
    found = []
    for name, what, maker in [("ff_forward_no_grad", "FeedForward forward, no_grad", ff_forward_no_grad),
                              ("ff_forward_backward", "FeedForward forward + backward", ff_forward_backward),
                              ("ff_train_step", "FeedForward training step (AdamW)", ff_train_step)]:
        for rows in ROWS:
            found.append((f"{name}/rows:{rows}", f"{what} {shape_text(input_shape(rows))}",
                          lambda maker=maker, rows=rows: maker(rows)))
    for name, what, shapes in [("matmul_x_wt", "matmul x @ W^T", lambda n: ((n, 128), (128, 512))),
                               ("matmul_grad_w", "matmul grad @ W", lambda n: ((n, 512), (512, 128))),
                               ("matmul_gradt_x", "matmul grad^T @ x", lambda n: ((512, n), (n, 128)))]:
        for rows in ROWS:
            a_shape, b_shape = shapes(rows)
            found.append((f"{name}/rows:{rows}", f"{what} {shape_text(a_shape)}x{shape_text(b_shape)}",
                          lambda a_shape=a_shape, b_shape=b_shape: matmul(a_shape, b_shape)))
    for name, op in [("elementwise/add", lambda a, b: a + b),
                     ("elementwise/mul", lambda a, b: a * b),
                     ("elementwise/relu", lambda a, b: a.relu()),
                     ("elementwise/exp", lambda a, b: a.exp()),
                     ("reduction/sum", lambda a, b: a.sum()),
                     ("reduction/sum_dim1", lambda a, b: a.sum(1)),
                     ("reduction/softmax_dim_last", lambda a, b: a.softmax(-1))]:
        what = name.split("/")[1].replace("_dim_last", " dim -1").replace("_dim1", " dim 1")
        found.append((name, f"{what} [2048,512]", lambda op=op: on_2048x512(op)))
    return found + gpt_ops() + gpt_model()


# ---- timing ------------------------------------------------------------------------------------

def run_calls(call, n):
    """Wall and main-thread CPU nanoseconds of n calls."""
    wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
    for _ in range(n):
        call()
    return time.perf_counter_ns() - wall, time.thread_time_ns() - cpu


def measure(call, repetitions, min_time, warmup_time):
    """(median wall ns per call, median CPU ns per call, n), as described at the top."""
    deadline = time.perf_counter() + warmup_time
    call()
    while time.perf_counter() < deadline:
        call()

    n = 1
    while True:  # grow n as Google Benchmark does: aim 40% past min_time, at most 10x per step
        wall, _ = run_calls(call, n)
        if wall >= min_time * 1e9:
            break
        n = max(n + 1, min(10 * n, int(n * 1.4 * min_time * 1e9 / max(wall, 1))))

    walls, cpus = [], []
    for _ in range(repetitions):
        wall, cpu = run_calls(call, n)
        walls.append(wall / n)
        cpus.append(cpu / n)
    return statistics.median(walls), statistics.median(cpus), n


def openblas_core():
    """The kernel family OpenBLAS chose (it follows OPENBLAS_CORETYPE when that is set)."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="default",
                        help="torch.set_num_threads(N); 'default' leaves PyTorch's own choice")
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per repetition, at least")
    parser.add_argument("--warmup-time", type=float, default=0.05, help="seconds of warm-up per workload")
    parser.add_argument("--filter", default="", help="regular expression: run the workloads whose name matches")
    parser.add_argument("--json", help="write the results here (default: standard output)")
    args = parser.parse_args()

    if args.threads != "default":
        torch.set_num_threads(int(args.threads))
    results = []
    for name, description, maker in workloads():
        if not re.search(args.filter, name):
            continue
        wall, cpu, n = measure(maker(), args.repetitions, args.min_time, args.warmup_time)
        results.append({"name": name, "description": description, "real_time_ns": wall, "cpu_time_ns": cpu,
                        "iterations": n})
        print(f"{name:34} {wall / 1e3:12.2f} us  ({n} calls x {args.repetitions})", file=sys.stderr)

    report = {
        "context": {
            "torch": torch.__version__,
            "torch_num_threads": torch.get_num_threads(),
            "openblas_core": openblas_core(),
            "environment": {key: os.environ[key] for key in sorted(os.environ)
                            if key.startswith(("OPENBLAS_", "OMP_", "MKL_"))},
            "repetitions": args.repetitions,
            "min_time": args.min_time,
        },
        "results": results,
    }
    text = json.dumps(report, indent=1)
    if args.json:
        with open(args.json, "w") as out:
            out.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
