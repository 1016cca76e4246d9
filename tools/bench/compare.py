#!/usr/bin/python3
"""One command for the side-by-side table: minigrad (bench/'s minigrad_bench) against PyTorch.

Run from the repository root, after configuring a build with the benchmarks on (the default):

    /usr/bin/python3 tools/bench/compare.py                       # build/release, 1 and 2 threads
    /usr/bin/python3 tools/bench/compare.py --unset-openblas-env  # the same without OPENBLAS_CORETYPE
                                                                  # and OPENBLAS_L2_SIZE, in this command alone
It builds the one target minigrad_bench (`cmake --build BUILD --target minigrad_bench`) and runs,
for each thread count T, minigrad_bench and tools/bench/pytorch_bench.py with the same
environment: OPENBLAS_NUM_THREADS=T and OMP_NUM_THREADS=T for both, torch.set_num_threads(T) for
PyTorch. T = "default" sets none of them: each side runs as a user runs it (PyTorch's own thread
choice, the BLAS on every core). Then it prints per workload and thread count our median, PyTorch's
median and the ratio ours / PyTorch's (below 1: minigrad is faster). The ratio is the figure that
matters; the absolute times depend on the machine and its load. At 1 thread a second ratio, of
the main thread's CPU time, is shown too: there it is all the work, and it is far less disturbed
than the wall clock when other processes share the cores (--rounds N helps the wall clock).
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TWIN = os.path.join(REPO, "tools", "bench", "pytorch_bench.py")
PYTHON = "/usr/bin/python3"                       # Debian's python3-torch lives there
FORCED_OPENBLAS = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"]
THREAD_VARIABLES = ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"]


def environment(threads, unset_openblas_env):
    """The environment both sides run in for one thread count."""
    env = dict(os.environ)
    if unset_openblas_env:
        for key in FORCED_OPENBLAS:
            env.pop(key, None)
    if threads != "default":
        for key in THREAD_VARIABLES:
            env[key] = threads
    return env


def google_benchmark_name(run_name):
    """'ff_train_step/rows:2048/repeats:10/real_time' -> 'ff_train_step/rows:2048' (the twin's name)."""
    return re.sub(r"/(repeats|min_time|min_warmup_time|real_time|process_time)(:[^/]*)?", "", run_name)


def run_or_exit(command, env):
    """Runs one side, its output kept quiet; stops the comparison with the reason if it fails
    (e.g. SIGILL when OPENBLAS_CORETYPE names a kernel this CPU cannot run)."""
    result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        reason = f"signal {-result.returncode}" if result.returncode < 0 else f"exit code {result.returncode}"
        threads = {key: value for key, value in env.items() if key.startswith(("OPENBLAS_", "OMP_"))}
        sys.exit(f"{result.stderr[-2000:]}\ncompare: {' '.join(command[:2])} ... failed ({reason}) with {threads}")


def google_filter(binary, pattern):
    """A --benchmark_filter that selects exactly the workloads whose short name matches `pattern`
    (Google Benchmark matches its full names, which end in /repeats:10/real_time)."""
    listing = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True, text=True, check=True)
    names = {google_benchmark_name(line.strip()) for line in listing.stdout.splitlines() if line.strip()}
    chosen = sorted(name for name in names if re.search(pattern, name))
    if not chosen:
        sys.exit(f"compare: no workload of minigrad_bench matches --filter {pattern!r}")
    return "^(" + "|".join(re.escape(name) for name in chosen) + ")/"


def run_ours(binary, env, args, workdir):
    """{name: (median wall ns, median CPU ns)} from minigrad_bench's JSON output."""
    out = os.path.join(workdir, "minigrad.json")
    command = [binary, f"--benchmark_min_time={args.min_time}", "--benchmark_format=console",
               f"--benchmark_out={out}", "--benchmark_out_format=json"]
    if args.filter:
        command.append(f"--benchmark_filter={google_filter(binary, args.filter)}")
    run_or_exit(command, env)
    with open(out) as file:
        report = json.load(file)
    medians = {}
    for entry in report["benchmarks"]:
        if entry.get("run_type") == "aggregate" and entry.get("aggregate_name") == "median":
            scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[entry["time_unit"]]
            medians[google_benchmark_name(entry["run_name"])] = (entry["real_time"] * scale,
                                                                 entry["cpu_time"] * scale)
    return medians


def run_theirs(threads, env, args, workdir):
    """(results by name, context) from pytorch_bench.py."""
    out = os.path.join(workdir, "pytorch.json")
    command = [PYTHON, TWIN, f"--threads={threads}", f"--min-time={args.min_time}", f"--json={out}"]
    if args.filter:
        command.append(f"--filter={args.filter}")
    run_or_exit(command, env)
    with open(out) as file:
        report = json.load(file)
    return {r["name"]: r for r in report["results"]}, report["context"]


def best(rounds):
    """Per name, the smallest median over the rounds: load from other processes only adds time."""
    merged = {}
    for medians in rounds:
        for name, (wall, cpu) in medians.items():
            old = merged.get(name, (float("inf"), float("inf")))
            merged[name] = (min(old[0], wall), min(old[1], cpu))
    return merged


def time_text(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.1f} us"


def machine():
    """'AMD EPYC, 2 cores', from lscpu."""
    fields = {}
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return f"{fields.get('Model name', '?')}, {fields.get('CPU(s)', '?')} cores"


def load_average():
    with open("/proc/loadavg") as file:
        return " ".join(file.read().split()[:3])


def print_context(unset_openblas_env):
    """Machine, date, load and the OpenBLAS variables this machine forces, before the run."""
    forced = {key: os.environ[key] for key in FORCED_OPENBLAS if key in os.environ}
    print(f"machine: {machine()}; date: {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")
    print(f"load average before: {load_average()}")
    print(f"OpenBLAS environment: {forced or 'none forced'}"
          f"{' (unset for this run)' if unset_openblas_env and forced else ''}")


def measure(threads, binary, args):
    """(threads, PyTorch's results, our best medians, PyTorch's best medians) for one thread count;
    with several rounds the two sides alternate, so a burst of load hits both alike."""
    env = environment(threads, args.unset_openblas_env)
    ours_rounds, theirs_rounds = [], []
    with tempfile.TemporaryDirectory() as workdir:
        for _ in range(args.rounds):
            ours_rounds.append(run_ours(binary, env, args, workdir))
            theirs, context = run_theirs(threads, env, args, workdir)
            theirs_rounds.append({name: (r["real_time_ns"], r["cpu_time_ns"]) for name, r in theirs.items()})
    print(f"threads={threads}: OpenBLAS core {context['openblas_core']}, "
          f"torch threads {context['torch_num_threads']}, environment {context['environment']}")
    return threads, theirs, best(ours_rounds), best(theirs_rounds)


def print_table(rows, markdown):
    header = ["workload", "threads", "minigrad", "PyTorch", "ratio", "CPU ratio"]
    lines = [[desc, threads, time_text(ours[0]), time_text(theirs[0]), f"{ours[0] / theirs[0]:.2f}",
              f"{ours[1] / theirs[1]:.2f}" if threads == "1" else "-"]
             for desc, threads, ours, theirs in rows]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        for line in lines:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(str(line[i])) for line in lines + [header]) for i in range(len(header))]
    for line in [header] + lines:
        print("  ".join(str(cell).ljust(widths[0]) if i == 0 else str(cell).rjust(widths[i])
                        for i, cell in enumerate(line)))


def print_floor(by_thread):
    """The least a 1-row forward can take on one core (ff_weights_read: its 512 KiB of weights read
    once, no arithmetic) beside a tenth of PyTorch's 1-row forward, the issue's target."""
    for threads, _, ours, theirs in by_thread:
        forward = "ff_forward_no_grad/rows:1"
        if threads != "1" or "ff_weights_read" not in ours or forward not in theirs:
            continue
        floor, target = ours["ff_weights_read"][0], theirs[forward][0] / 10
        print(f"\nat 1 thread, reading the FeedForward's two weight matrices once takes {time_text(floor)} "
              f"({floor / theirs[forward][0]:.3f} of PyTorch's 1-row forward); "
              f"a ratio of 0.1 for that forward is {time_text(target)}.")


# Each workload with a floor of its own: the name of the benchmark that times its products alone.
GPT_FLOORS = {"gpt_train_step/dropout:20": "gpt_matmul_floor", "gpt_train_step/dropout:0": "gpt_matmul_floor",
              "gpt_generate": "gpt_generate_matmul_floor"}


def print_gpt_floor(by_thread):
    """The GPT training step and generate beside their floors: their own matrix products timed alone
    (gpt_matmul_floor and gpt_generate_matmul_floor, ours only), as wall time and as the main
    thread's CPU time; the issue's target for the step is within 1.15x at 1 thread."""
    for threads, _, ours, _ in by_thread:
        for name, floor_name in GPT_FLOORS.items():
            if name in ours and floor_name in ours:
                step, floor = ours[name], ours[floor_name]
                print(f"threads={threads}: {name} {time_text(step[0])} against its matrix products alone "
                      f"{time_text(floor[0])}: {step[0] / floor[0]:.2f}x the floor "
                      f"(CPU time {step[1] / floor[1]:.2f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build", "release"),
                        help="a configured CMake build folder (default: build/release)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts; 'default' as a user runs")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per repetition, at least")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run both sides this many times, alternating, and keep each side's best median")
    parser.add_argument("--filter", default="", help="regular expression on workload names, e.g. 'ff_train'")
    parser.add_argument("--unset-openblas-env", action="store_true",
                        help="unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for both sides, in this command alone")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/performance.md)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # progress lines before any error message

    build = subprocess.run(["cmake", "--build", args.build_dir, "--target", "minigrad_bench"],
                           capture_output=True, text=True)
    binary = os.path.join(args.build_dir, "bench", "minigrad_bench")
    if build.returncode != 0 or not os.path.exists(binary):
        sys.stderr.write(build.stdout[-4000:] + build.stderr[-4000:])
        sys.exit(f"compare: could not build minigrad_bench in {args.build_dir}; configure it first, e.g.\n"
                 f"  cmake --preset release -DMINIGRAD_BUILD_BENCHMARKS=ON")

    print_context(args.unset_openblas_env)
    by_thread = [measure(threads, binary, args) for threads in args.threads.split(",")]
    print(f"load average after: {load_average()}")

    rows = []  # each workload's thread counts on adjacent lines
    for name, result in by_thread[0][1].items():
        for threads, _, ours, theirs in by_thread:
            if name in ours and name in theirs:
                rows.append((result["description"], threads, ours[name], theirs[name]))
            else:
                print(f"warning: {name} did not run on both sides at threads={threads}", file=sys.stderr)
    print()
    print_table(rows, args.markdown)
    print_floor(by_thread)
    print_gpt_floor(by_thread)


if __name__ == "__main__":
    main()
