"""The lecture's bigram language model before and after training, printed as
examples/lessons/bigram_training.cpp prints it.

Run with Debian's python3-torch 1.13.1 from the repository root (about ten seconds):

    /usr/bin/python3 tools/reference/lessons/bigram_training.py > tests/fixtures/lessons/bigram_training.expected

As in the lecture: the batch of four blocks of eight drawn after torch.manual_seed(1337), the
model built after torch.manual_seed(1337) again, its logits' shape, its loss (about
-ln(1/65) = 4.17 when it has learnt nothing) and 400 characters it samples; then 10,000 AdamW
steps at lr 1e-3 on batches of 32, drawn from the same generator, which goes on to sample 400
more characters. A shape prints as its list, as the C++ program prints it.

The last loss is the float32 mean of 256 per-token losses, which PyTorch adds in float32 partial
sums: the same losses added in double (as minigrad adds them) give 2.3983142375946045, one
float32 step below the 2.3983144760131836 printed here; tests/examples/test_lessons.cpp compares
that one number within 5e-7 and everything else, the sampled text included, exactly.
"""

import torch
import torch.nn as nn
from torch.nn import functional as F

with open('assets/tinyshakespeare.txt', 'r', encoding='utf-8') as f:
    text = f.read()
chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]
decode = lambda l: ''.join([itos[i] for i in l])
data = torch.tensor(encode(text), dtype=torch.long)
n = int(0.9 * len(data))
train_data = data[:n]
val_data = data[n:]

torch.manual_seed(1337)
batch_size = 4
block_size = 8


def get_batch(split):
    data = train_data if split == 'train' else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
    return x, y


xb, yb = get_batch('train')

torch.manual_seed(1337)


class BigramLanguageModel(nn.Module):

    def __init__(self, vocab_size):
        super().__init__()
        # each token directly reads off the logits for the next token from a lookup table
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        # idx and targets are both (B,T) tensor of integers
        logits = self.token_embedding_table(idx)  # (B,T,C)
        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            loss = F.cross_entropy(logits, targets)
        return logits, loss

    def generate(self, idx, max_new_tokens):
        # idx is (B, T) array of indices in the current context
        for _ in range(max_new_tokens):
            logits, loss = self(idx)  # get the predictions
            logits = logits[:, -1, :]  # focus only on the last time step: becomes (B, C)
            probs = F.softmax(logits, dim=-1)  # (B, C)
            idx_next = torch.multinomial(probs, num_samples=1)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx


m = BigramLanguageModel(vocab_size)
logits, loss = m(xb, yb)
print(list(logits.shape))
print(loss)
print(decode(m.generate(idx=torch.zeros((1, 1), dtype=torch.long), max_new_tokens=400)[0].tolist()))

# create a PyTorch optimizer
optimizer = torch.optim.AdamW(m.parameters(), lr=1e-3)

batch_size = 32
for steps in range(10000):
    xb, yb = get_batch('train')  # sample a batch of data
    logits, loss = m(xb, yb)  # evaluate the loss
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
print(loss.item())

print(decode(m.generate(idx=torch.zeros((1, 1), dtype=torch.long), max_new_tokens=400)[0].tolist()))
