"""The lecture's first steps, from the raw text to a tensor of tokens, printed as
examples/lessons/text_to_tokens.cpp prints them.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/lessons/text_to_tokens.py > tests/fixtures/lessons/text_to_tokens.expected

The text is tiny Shakespeare (assets/tinyshakespeare.txt); its characters, sorted, are the
vocabulary, and each character becomes its index. A shape prints as its list and a dtype
without its `torch.` prefix ([1115394] int64), as the C++ program prints them.
"""

import torch

with open('assets/tinyshakespeare.txt', 'r', encoding='utf-8') as f:
    text = f.read()
print("length of dataset in characters: ", len(text))
print(text[:1000])

# here are all the unique characters that occur in this text
chars = sorted(list(set(text)))
vocab_size = len(chars)
print(''.join(chars))
print(vocab_size)

# create a mapping from characters to integers
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]  # encoder: take a string, output a list of integers
decode = lambda l: ''.join([itos[i] for i in l])  # decoder: take a list of integers, output a string
print(encode("hii there"))
print(decode(encode("hii there")))

# encode the entire text dataset and store it into a torch.Tensor
data = torch.tensor(encode(text), dtype=torch.long)
print(list(data.shape), str(data.dtype).replace('torch.', ''))
print(data[:1000])  # the 1000 characters we looked at earlier

# split up the data into train and validation sets
n = int(0.9 * len(data))  # first 90% will be train, rest val
train_data = data[:n]
val_data = data[n:]
print(len(train_data), len(val_data))
