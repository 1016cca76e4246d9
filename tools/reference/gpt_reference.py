"""Our PyTorch twin of the course's last program, gpt.py of Karpathy's "Let's build GPT" lecture
(karpathy/ng-video-lecture): the character-level GPT on tiny Shakespeare, written from the facts
the course states, at the course's size. examples/gpt.cpp is its C++ twin, line for line.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/gpt_reference.py                  # the course's run, printed
    /usr/bin/python3 tools/reference/gpt_reference.py --max-iters 0    # the untrained model's text
    /usr/bin/python3 tools/reference/gpt_reference.py --fixtures       # writes tests/fixtures/gpt*.json

Flags named after the script's variables override its defaults, as examples/gpt.cpp's do.
--fixtures runs the seeded runs the tests compare against (see write_fixtures) and writes what they
print and record: the parameter count, a summary of every initial parameter, the first batches'
indices, the training-batch losses, the evaluation lines and generated text.
"""

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
from torch.nn import functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, fixture_header, values, write_json  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TEXT = os.path.join(ROOT, "assets", "tinyshakespeare.txt")

# The course's size (gpt.py's own defaults are bigger; the course runs it at this size).
COURSE = {"batch_size": 32, "block_size": 64, "max_iters": 5000, "eval_interval": 500,
          "learning_rate": 3e-4, "eval_iters": 200, "n_embd": 128, "n_head": 4, "n_layer": 4,
          "dropout": 0.2, "seed": 1337, "max_new_tokens": 500}


class Head(nn.Module):
    """One head of causal self-attention."""

    def __init__(self, c, head_size):
        super().__init__()
        self.key = nn.Linear(c["n_embd"], head_size, bias=False)
        self.query = nn.Linear(c["n_embd"], head_size, bias=False)
        self.value = nn.Linear(c["n_embd"], head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(c["block_size"], c["block_size"])))
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)  # (B, T, hs)
        q = self.query(x)  # (B, T, hs)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)
        return wei @ v  # (B, T, hs)


class MultiHeadAttention(nn.Module):
    def __init__(self, c, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(c, head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, c["n_embd"])
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        return self.dropout(self.proj(out))


class FeedForward(nn.Module):
    """The lesson's FeedForward (Linear, ReLU, Linear) with a final Dropout."""

    def __init__(self, c):
        super().__init__()
        n_embd = c["n_embd"]
        self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(c["dropout"]))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        head_size = c["n_embd"] // c["n_head"]
        self.sa = MultiHeadAttention(c, c["n_head"], head_size)
        self.ffwd = FeedForward(c)
        self.ln1 = nn.LayerNorm(c["n_embd"])
        self.ln2 = nn.LayerNorm(c["n_embd"])

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        return x + self.ffwd(self.ln2(x))


class GPTLanguageModel(nn.Module):
    def __init__(self, c, vocab_size):
        super().__init__()
        self.block_size = c["block_size"]
        self.token_embedding_table = nn.Embedding(vocab_size, c["n_embd"])
        self.position_embedding_table = nn.Embedding(c["block_size"], c["n_embd"])
        self.blocks = nn.Sequential(*[Block(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(c["n_embd"])
        self.lm_head = nn.Linear(c["n_embd"], vocab_size)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        tok_emb = self.token_embedding_table(idx)  # (B, T, C)
        pos_emb = self.position_embedding_table(torch.arange(T))  # (T, C)
        x = self.ln_f(self.blocks(tok_emb + pos_emb))
        logits = self.lm_head(x)  # (B, T, vocab)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def run(c, out=print, record=None, generate_eval=False):
    """gpt.py with configuration c: prints what it prints through `out`; fills `record` (a dict) with
    the values the tests compare. Returns the printed lines."""
    lines = []

    def say(line):
        lines.append(line)
        out(line)

    torch.manual_seed(c["seed"])
    with open(TEXT, "r", encoding="utf-8") as f:
        text = f.read()
    chars = sorted(list(set(text)))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[ch] for ch in s]  # noqa: E731
    decode = lambda l: "".join([itos[i] for i in l])  # noqa: E731

    data = torch.tensor(encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]
    batches = [] if record is not None else None

    def get_batch(split):
        d = train_data if split == "train" else val_data
        ix = torch.randint(len(d) - c["block_size"], (c["batch_size"],))
        if batches is not None and len(batches) < 3:
            batches.append({"split": split, "ix": values(ix)})
        x = torch.stack([d[i:i + c["block_size"]] for i in ix])
        y = torch.stack([d[i + 1:i + c["block_size"] + 1] for i in ix])
        return x, y

    @torch.no_grad()
    def estimate_loss():
        result = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(c["eval_iters"])
            for k in range(c["eval_iters"]):
                X, Y = get_batch(split)
                _, loss = model(X, Y)
                losses[k] = loss.item()
            result[split] = losses.mean()
        model.train()
        return result

    model = GPTLanguageModel(c, len(chars))
    say(f"{sum(p.numel() for p in model.parameters()) / 1e6} M parameters")
    if record is not None:
        record["parameters"] = sum(p.numel() for p in model.parameters())
        record["initial"] = [summary(name, p) for name, p in model.named_parameters()]
        record["losses"] = []
        record["batches"] = batches

    optimizer = torch.optim.AdamW(model.parameters(), lr=c["learning_rate"])
    for it in range(c["max_iters"]):
        if it % c["eval_interval"] == 0 or it == c["max_iters"] - 1:
            losses = estimate_loss()
            say(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        xb, yb = get_batch("train")
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if record is not None:
            record["losses"].append(loss.item())

    if generate_eval:
        model.eval()
    context = torch.zeros((1, 1), dtype=torch.long)
    say(decode(model.generate(context, max_new_tokens=c["max_new_tokens"])[0].tolist()))
    return lines


def summary(name, p):
    """What a test needs to check one initial parameter without the whole tensor: its shape, its
    first and last 8 elements (exact) and the sum of its elements in double."""
    v = values(p)
    return {"name": name, "shape": list(p.shape), "head": v[:8], "tail": v[-8:],
            "sum": float(p.detach().double().sum()), "sum_of_squares": float(p.detach().double().pow(2).sum())}


# The reduced size of the quick tests: the same program, small enough for a test to run in a second.
SMALL = {**COURSE, "batch_size": 8, "block_size": 16, "n_embd": 32, "n_head": 4, "n_layer": 2,
         "max_iters": 30, "eval_interval": 10, "eval_iters": 5, "max_new_tokens": 100}


def fixture_run(name, c, generate_eval=False, **more):
    record = {}
    lines = run(c, out=lambda line: None, record=record, generate_eval=generate_eval)
    print(f"{name}: {lines[0]} ... {len(record['losses'])} steps")
    return {"name": name, "config": c, "generate_eval": generate_eval, "output": lines, **record, **more}


def write_fixtures():
    """The runs the tests compare against:
    - course_init: the course's size untrained (--max-iters 0): parameter count, initial parameters,
      100 characters generated in train mode (as gpt.py generates);
    - course_init_eval: the same generated in eval mode (dropout off);
    - course_50: the course's size, 50 steps with evaluations over 10 batches: the first batches'
      indices and the 50 training-batch losses, dropout 0.2 included;
    - small: the reduced size, 30 steps: everything it prints."""
    runs = [
        fixture_run("course_init", {**COURSE, "max_iters": 0, "max_new_tokens": 100}),
        fixture_run("course_init_eval", {**COURSE, "max_iters": 0, "max_new_tokens": 100}, generate_eval=True),
        fixture_run("course_50", {**COURSE, "max_iters": 50, "eval_iters": 10, "max_new_tokens": 100}),
        fixture_run("small", SMALL),
        fixture_run("small_eval", SMALL, generate_eval=True),
    ]
    for r in runs[1:]:
        if r["name"] != "small":
            r.pop("initial")  # one summary per configuration is enough
    path = write_json(os.path.join(FIXTURES, "gpt.json"),
                      {"header": fixture_header("gpt_reference.py --fixtures"), "runs": runs})
    print("wrote", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for key, value in COURSE.items():
        parser.add_argument("--" + key.replace("_", "-"), type=type(value), default=value)
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    parser.add_argument("--eval-mode", action="store_true", help="generate with model.eval() (dropout off)")
    parser.add_argument("--fixtures", action="store_true", help="write tests/fixtures/gpt.json")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.fixtures:
        torch.set_num_threads(1)  # one summation order, run to run
        write_fixtures()
        return
    c = {key: getattr(args, key) for key in COURSE}
    start = time.time()
    run(c, out=lambda line: print(line, flush=True), generate_eval=args.eval_mode)
    print(f"[{time.time() - start:.1f} s]", file=sys.stderr)


if __name__ == "__main__":
    main()
