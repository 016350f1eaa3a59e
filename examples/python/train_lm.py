#!/usr/bin/env python3
"""Trains the character transformer of `ember train --model transformer` through the ember Python binding alone.

    python3 examples/python/train_lm.py [--data FILE_OR_DIR] [--steps N] [--tiny] [--seed S]

The model is the C++ one (tools/ember/lm_model.hpp), layer for layer and with the same attribute names: token and
learned positional embeddings, pre-norm blocks (LayerNorm, causal multi-head self-attention from a fused qkv
Linear, LayerNorm, Linear-GELU-Linear MLP), a final LayerNorm and a Linear head; AdamW. The corpus is Debian's
fortunes-min (data/README.md); a "character" is a byte. Attention is ember.nn.functional's
scaled_dot_product_attention when the binding has it, otherwise composed from matmul, a causal mask and softmax.
After training it samples text (temperature 0.8, top-k 10) and exits 1 unless the loss fell below a uniform
guess's (the meson test runs --tiny: a tiny model on a repeated proverb, which it must learn).
"""
import argparse
import array
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402

FORTUNES = ["/usr/share/games/fortunes/" + f for f in ("fortunes", "literature", "riddles")]
PROVERB = "A fool and his money are soon parted.\n%\nThe early bird catches the worm.\n%\n" * 40


def causal_attention(q, k, v):
    """q, k, v [N, H, T, E] -> [N, H, T, E]; position i attends to positions <= i."""
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=True)
    t, e = q.shape[2], q.shape[3]
    scores = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(e))
    pos = ember.arange(t)
    future = pos.reshape(1, t) > pos.reshape(t, 1)  # [T, T], True above the diagonal
    return scores.masked_fill(future, float("-inf")).softmax(-1) @ v


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
        h = self.heads
        qkv = self.qkv(x)
        q, k, v = (qkv[:, :, i * d:(i + 1) * d].reshape(n, t, h, d // h).transpose(1, 2) for i in range(3))
        return self.proj(causal_attention(q, k, v).transpose(1, 2).reshape(n, t, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class CharTransformer(nn.Module):
    def __init__(self, vocab, context, d, heads, layers):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Embedding(context, d)
        for emb in (self.tok_emb, self.pos_emb):  # N(0, 0.02), as the C++ model (GPT-2's)
            nn.init.normal_(emb.weight, 0.0, 0.02)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tok_emb(ids) + self.pos_emb(ember.arange(t).reshape(1, t))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def load_text(path):
    if path is None:
        return b"".join(open(f, "rb").read() for f in FORTUNES)
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if not n.endswith((".dat", ".u8")))
        return b"".join(open(os.path.join(path, n), "rb").read() for n in names)
    return open(path, "rb").read()


def batch(ids, begin, end, n, context, rng):
    xs, ys = array.array("q"), array.array("q")
    for _ in range(n):
        s = rng.randrange(begin, end - context)
        xs.extend(ids[s:s + context])
        ys.extend(ids[s + 1:s + context + 1])
    x = ember.tensor(xs, shape=[n, context], dtype="int64")
    y = ember.tensor(ys, shape=[n * context], dtype="int64")
    return x, y


def sample(model, vocab, prompt, length, context, rng, temperature=0.8, top_k=10):
    ids = [vocab.index(c) for c in prompt.encode("latin-1")]
    model.eval()
    with ember.no_grad():
        for _ in range(length):
            window = ids[-context:]
            logits = model(ember.tensor(array.array("q", window), shape=[1, len(window)], dtype="int64"))
            last = logits[0, len(window) - 1].tolist()
            top = sorted(range(len(last)), key=lambda i: -last[i])[:top_k]
            w = [math.exp((last[i] - last[top[0]]) / temperature) for i in top]
            ids.append(rng.choices(top, weights=w)[0])
    model.train()
    return bytes(vocab[i] for i in ids).decode("latin-1")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="a text file or a fortunes directory (default: fortunes-min's files)")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--tiny", action="store_true", help="a tiny model on a repeated proverb (the quick test)")
    args = ap.parse_args()

    ember.manual_seed(args.seed)
    rng = random.Random(args.seed)
    if args.tiny:
        text, (context, d, heads, layers), steps, bsz, lr = PROVERB.encode(), (16, 32, 2, 1), 150, 8, 1e-2
    else:
        text, (context, d, heads, layers), steps, bsz, lr = load_text(args.data), (64, 128, 4, 2), args.steps, \
            args.batch_size, args.lr
    vocab = sorted(set(text))
    ids = [vocab.index(c) for c in text]
    model = CharTransformer(len(vocab), context, d, heads, layers)
    opt = ember.optim.AdamW(model.parameters(), lr=lr)
    print(f"corpus {len(ids)} characters, vocabulary {len(vocab)}; {layers}-layer transformer d_model {d}, "
          f"{heads} heads, context {context}; {steps} AdamW steps, batch {bsz}")
    last = None
    window = []
    for step in range(1, steps + 1):
        x, y = batch(ids, 0, len(ids), bsz, context, rng)
        loss = F.cross_entropy(model(x).reshape(bsz * context, len(vocab)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        window.append(loss.item())
        if step % 50 == 0 or step == steps:
            mean = sum(window) / len(window)
            last = mean
            print(f"step {step:5d}/{steps}  loss {mean:.4f}  perplexity {math.exp(mean):7.2f}", flush=True)
            window = []
    prompt = "The early" if args.tiny else "The "
    text = sample(model, vocab, prompt, 40 if args.tiny else 300, context, rng, top_k=1 if args.tiny else 10)
    print(text)
    # Below a uniform guess's loss, log(vocabulary): the model learnt something.
    ok = last < math.log(len(vocab)) and (not args.tiny or (last < 0.5 and text.startswith("The early bird")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
