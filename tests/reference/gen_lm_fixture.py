#!/usr/bin/python3
"""Generates the fixture of tests/lm_torch_test.cpp: the character transformer of `ember train --model transformer`
(tools/ember/lm_model.hpp) written in PyTorch 1.13, trained briefly, its state_dict saved as safetensors, with an
input and the logits PyTorch computes for it.

    /usr/bin/python3 tests/reference/gen_lm_fixture.py     # rewrites lm_tiny*.safetensors next to this file

  lm_tiny.safetensors     the state_dict: tok_emb, pos_emb (nn.Embedding), blocks.<i>.{ln1, qkv, proj, ln2, fc1,
                          fc2} (nn.ModuleList), ln_f, head. The attribute names are Ember's, so records/torch_names
                          maps them with no table of its own.
  lm_tiny_io.safetensors  "input" (I64 [2, 12] token ids), "logits" (F32 [2, 12, vocab]), "config" (I64: vocab,
                          context, d_model, heads, layers)

Attention is written out (torch 1.13 has no F.scaled_dot_product_attention): scores = q k^T / sqrt(e), a -inf
causal mask, softmax, @ v. GELU is the exact (erf) one, as Ember's gelu(). CPU, one thread and fixed seeds keep the
bytes reproducible (tests/reference_generators_test.py checks that).
"""
import math
import os

import torch
from torch import nn
from torch.nn import functional as F

from gen_torch_safetensors import save_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = (
    "A fool and his money are soon parted.\n%\n"
    "The early bird catches the worm, but the second mouse gets the cheese.\n%\n"
    "Never put off till tomorrow what you can do the day after tomorrow.\n%\n"
) * 4


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def attention(self, x):
        n, t, d = x.shape
        h, e = self.heads, d // self.heads
        q, k, v = (p.view(n, t, h, e).transpose(1, 2) for p in self.qkv(x).chunk(3, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(e)
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        y = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(n, t, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class CharTransformer(nn.Module):
    def __init__(self, vocab, context, d, heads, layers):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))[None]
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def main():
    torch.set_num_threads(1)
    torch.manual_seed(2024)
    vocab_chars = sorted(set(TEXT))
    ids = torch.tensor([vocab_chars.index(c) for c in TEXT])
    config = dict(vocab=len(vocab_chars), context=16, d=32, heads=4, layers=2)
    model = CharTransformer(**config)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(40):  # briefly: the weights are trained ones (no longer their symmetric initial values)
        starts = torch.randint(0, len(ids) - 17, (8,))
        x = torch.stack([ids[s:s + 16] for s in starts])
        y = torch.stack([ids[s + 1:s + 17] for s in starts])
        loss = F.cross_entropy(model(x).reshape(-1, config["vocab"]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    save_safetensors(model.state_dict(), os.path.join(HERE, "lm_tiny.safetensors"))
    x = torch.stack([ids[5:17], ids[40:52]])
    with torch.no_grad():
        logits = model(x)
    cfg = torch.tensor([config[k] for k in ("vocab", "context", "d", "heads", "layers")])
    save_safetensors({"input": x, "logits": logits, "config": cfg}, os.path.join(HERE, "lm_tiny_io.safetensors"))
    print(f"trained loss {loss.item():.4f}; lm_tiny.safetensors ({sum(p.numel() for p in model.parameters())} params)")


if __name__ == "__main__":
    main()
