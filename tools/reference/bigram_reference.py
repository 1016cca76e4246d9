"""Our PyTorch twin of the course's first language model, bigram.py of Karpathy's "Let's build GPT"
lecture (karpathy/ng-video-lecture): an embedding table whose row for the current character holds
the logits of the next one, trained on tiny Shakespeare. examples/bigram.cpp is its C++ twin.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/bigram_reference.py             # the course's run, printed
    /usr/bin/python3 tools/reference/bigram_reference.py --fixtures  # writes tests/fixtures/bigram.json

--fixtures writes what the course's run prints (the ten evaluation lines and the 500 generated
characters) and, for a short run, the first batches' indices and every training-batch loss.
"""

import argparse
import os
import sys

import torch
import torch.nn as nn
from torch.nn import functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, fixture_header, values, write_json  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TEXT = os.path.join(ROOT, "assets", "tinyshakespeare.txt")

# bigram.py's hyperparameters.
COURSE = {"batch_size": 32, "block_size": 8, "max_iters": 3000, "eval_interval": 300,
          "learning_rate": 1e-2, "eval_iters": 200, "seed": 1337, "max_new_tokens": 500}


class BigramLanguageModel(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table(idx)  # (B, T, vocab)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits, _ = self(idx)
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def run(c, out=print, record=None):
    """bigram.py with configuration c: prints what it prints through `out` and fills `record` (a
    dict) with the first batches' indices and the training losses. Returns the printed lines."""
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
        x = torch.stack([d[i:i + c["block_size"]] for i in ix])
        y = torch.stack([d[i + 1:i + c["block_size"] + 1] for i in ix])
        if batches is not None and len(batches) < 3:
            batches.append({"split": split, "ix": values(ix), "x": values(x), "y": values(y)})
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

    model = BigramLanguageModel(len(chars))
    if record is not None:
        record["vocab"] = "".join(chars)
        record["losses"] = []
        record["batches"] = batches
    optimizer = torch.optim.AdamW(model.parameters(), lr=c["learning_rate"])
    for it in range(c["max_iters"]):
        if it % c["eval_interval"] == 0:
            losses = estimate_loss()
            say(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        xb, yb = get_batch("train")
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if record is not None:
            record["losses"].append(loss.item())

    context = torch.zeros((1, 1), dtype=torch.long)
    say(decode(model.generate(context, max_new_tokens=c["max_new_tokens"])[0].tolist()))
    return lines


def data_record():
    """What the data library's tests compare: the vocabulary, the first 100 characters encoded, the
    split sizes, and three batches of 4 windows of 8 tokens drawn right after torch.manual_seed(1337)
    (train, train, val), with their window starts."""
    torch.manual_seed(1337)
    with open(TEXT, "r", encoding="utf-8") as f:
        text = f.read()
    chars = sorted(list(set(text)))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    n = int(0.9 * len(data))
    splits = {"train": data[:n], "val": data[n:]}
    batches = []
    for split in ["train", "train", "val"]:
        d = splits[split]
        ix = torch.randint(len(d) - 8, (4,))
        x = torch.stack([d[i:i + 8] for i in ix])
        y = torch.stack([d[i + 1:i + 9] for i in ix])
        batches.append({"split": split, "batch_size": 4, "block_size": 8, "ix": values(ix), "x": values(x),
                        "y": values(y)})
    return {"characters": len(text), "vocab": "".join(chars), "first_100": values(data[:100]),
            "train_tokens": n, "val_tokens": len(data) - n, "batches": batches}


def write_fixtures():
    """The data library's record (data_record), the course's run (its output only) and a short one
    at bigram.py's size (20 steps, evaluations over 4 batches every 10 steps) with its batches and
    losses."""
    course = run(COURSE, out=lambda line: None)
    short_config = {**COURSE, "max_iters": 20, "eval_interval": 10, "eval_iters": 4, "max_new_tokens": 100}
    record = {}
    short = run(short_config, out=lambda line: None, record=record)
    runs = [{"name": "course", "config": COURSE, "output": course},
            {"name": "short", "config": short_config, "output": short, **record}]
    path = write_json(os.path.join(FIXTURES, "bigram.json"),
                      {"header": fixture_header("bigram_reference.py --fixtures"), "data": data_record(),
                       "runs": runs})
    print("\n".join(course))
    print("wrote", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for key, value in COURSE.items():
        parser.add_argument("--" + key.replace("_", "-"), type=type(value), default=value)
    parser.add_argument("--fixtures", action="store_true", help="write tests/fixtures/bigram.json")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one summation order, run to run
    if args.fixtures:
        write_fixtures()
        return
    run({key: getattr(args, key) for key in COURSE})


if __name__ == "__main__":
    main()
