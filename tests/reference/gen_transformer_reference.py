#!/usr/bin/python3
"""Generates tests/reference/transformer_reference.hpp: PyTorch 1.13's nn.MultiheadAttention, a 2-layer
nn.TransformerEncoder (post- and pre-norm), an nn.TransformerDecoderLayer, and rotary embeddings (torch 1.13 has
none: GPT-NeoX's rotate_half formula written out in torch), forward and gradients, in float64, for
tests/nn/transformer_reference_test.cpp and tests/nn/positional_embedding_test.cpp:

    /usr/bin/python3 tests/reference/gen_transformer_reference.py    # rewrites transformer_reference.hpp here

Each case writes its inputs, the module's state_dict under PyTorch's names and layouts (the test loads it through
records/torch_names, so the name map is checked too), the outputs, and the gradients of
loss = sum(out * w_out) [+ sum(attn_weights * w_attn)] for fixed random w_*, with respect to every input and param.
Dropout is 0; modules are in train mode (torch's fast path never runs, as gradients are enabled).
Masks: bool (true = not attended) and float (added to the scores). Combinations are the ones torch 1.13 accepts
with the same meaning as Ember's additive merge (a float key_padding_mask only without attn_mask).
"""
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "transformer_reference.hpp")
torch.manual_seed(1313)
torch.set_default_dtype(torch.float64)
lines = []


def rnd(*shape):
    return torch.rand(*shape) * 2.0 - 1.0


def emit_array(name, t):
    a = t.detach().cpu().numpy().astype(np.float64).reshape(-1)
    body, row = [], "   "
    for v in a:
        s = " " + ("kInf" if v == np.inf else "-kInf" if v == -np.inf else repr(float(v))) + ","
        if len(row) + len(s) > 116:
            body.append(row)
            row = "   "
        row += s
    body.append(row)
    lines.append(f"inline constexpr double {name}[] = {{")
    lines.extend(body)
    lines.append("};")


def emit_table(name, named):
    """named: [(key, tensor)] -> RefTensor {key, data, size, rank, shape} rows (none for an empty list: C++ has no
    zero-length arrays)."""
    if not named:
        return
    rows = []
    for i, (key, t) in enumerate(named):
        arr = f"{name}_{i}"
        emit_array(arr, t)
        shape = list(t.shape) + [1] * (4 - t.dim())
        rows.append(f'    {{"{key}", {arr}, {t.numel()}, {t.dim()}, {{{", ".join(str(s) for s in shape)}}}}},')
    lines.append(f"inline constexpr RefTensor {name}[] = {{")
    lines.extend(rows)
    lines.append("};")


def run_case(name, module, inputs, run):
    module.train()
    # masks are constants: gradients flow to the data inputs and the params only
    leaves = [(k, t.clone().requires_grad_(t.is_floating_point() and "mask" not in k)) for k, t in inputs]
    out, weights = run(module, *[t for _, t in leaves])
    w_out = rnd(*out.shape)
    loss = (out * w_out).sum()
    loss_weights = [("out", w_out)]
    if weights is not None:
        w_attn = rnd(*weights.shape)
        loss = loss + (weights * w_attn).sum()
        loss_weights.append(("weights", w_attn))
    loss.backward()
    lines.append("")
    lines.append(f"// ---------------------------------------------------------------- {name}")
    emit_table(f"{name}_inputs", [(k, t.detach()) for k, t in leaves])
    emit_table(f"{name}_state", [(k, v.detach()) for k, v in module.state_dict().items()])
    outs = [("out", out.detach())] + ([("weights", weights.detach())] if weights is not None else [])
    emit_table(f"{name}_outputs", outs)
    emit_table(f"{name}_loss_weights", loss_weights)
    grads = [(k, t.grad) for k, t in leaves if t.requires_grad]
    grads += [(k, p.grad) for k, p in module.named_parameters()]
    emit_table(f"{name}_grads", grads)


def randomize(module):
    """Non-trivial biases and norms (torch starts them at 0 / 1, which would leave their use untested): biases
    U(-0.5, 0.5), LayerNorm weights 1 + U(-0.5, 0.5), matrices U(-1, 1)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 1:
                p.copy_(rnd(*p.shape) * 0.5 + (1.0 if "norm" in name and name.endswith("weight") else 0.0))
            else:
                p.copy_(rnd(*p.shape))


E, H, L, S, N = 8, 2, 3, 4, 2

# MHA 1: sequence-first, bool key_padding_mask + float 2-D attn_mask, averaged weights.
mha = torch.nn.MultiheadAttention(E, H)
randomize(mha)
kpm = torch.tensor([[False, False, True, False], [False, False, False, True]])
am = rnd(L, S)
run_case("mha_masks", mha, [("query", rnd(L, N, E)), ("key", rnd(S, N, E)), ("value", rnd(S, N, E)),
                            ("key_padding_mask", kpm), ("attn_mask", am)],
         lambda m, q, k, v, kp, a: m(q, k, v, key_padding_mask=kp, attn_mask=a, need_weights=True))

# MHA 2: batch_first, bool 3-D attn_mask [N*H, L, S] + bool key padding, no weights (the SDPA path).
mha = torch.nn.MultiheadAttention(E, H, batch_first=True)
randomize(mha)
am3 = torch.zeros(N * H, L, S, dtype=torch.bool)
am3[0, 0, 1] = True
am3[1, 2, 0] = True
am3[3, 1, 3] = True
kpm = torch.tensor([[False, True, False, False], [False, False, False, False]])
run_case("mha_bool3d", mha, [("query", rnd(N, L, E)), ("key", rnd(N, S, E)), ("value", rnd(N, S, E)),
                             ("key_padding_mask", kpm), ("attn_mask", am3)],
         lambda m, q, k, v, kp, a: (m(q, k, v, key_padding_mask=kp, attn_mask=a, need_weights=False)[0], None))

# MHA 3: kdim/vdim != embed_dim (q/k/v_proj_weight), float key_padding_mask, per-head weights.
mha = torch.nn.MultiheadAttention(E, H, kdim=5, vdim=6)
randomize(mha)
kpf = rnd(N, S)
run_case("mha_kvdim", mha, [("query", rnd(L, N, E)), ("key", rnd(S, N, 5)), ("value", rnd(S, N, 6)),
                            ("key_padding_mask", kpf)],
         lambda m, q, k, v, kp: m(q, k, v, key_padding_mask=kp, need_weights=True, average_attn_weights=False))

# Encoders: 2 layers, post-norm (relu) and pre-norm (gelu, batch_first, final norm), src mask + key padding.
for name, norm_first, act, bf in (("enc_post", False, "relu", False), ("enc_pre", True, "gelu", True)):
    layer = torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.0, activation=act,
                                             batch_first=bf, norm_first=norm_first)
    enc = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(E) if norm_first else None,
                                      enable_nested_tensor=False)
    randomize(enc)
    src = rnd(N, S, E) if bf else rnd(S, N, E)
    causal = torch.triu(torch.full((S, S), float("-inf")), diagonal=1)
    kpm = torch.tensor([[False, False, False, True], [False, False, False, False]])
    run_case(name, enc, [("src", src), ("mask", causal), ("src_key_padding_mask", kpm)],
             lambda m, x, msk, kp: (m(x, mask=msk, src_key_padding_mask=kp), None))

# Decoder layer: post-norm, relu; causal bool tgt_mask, bool memory key padding.
dec = torch.nn.TransformerDecoderLayer(E, H, dim_feedforward=16, dropout=0.0)
randomize(dec)
T = 3
tgt_mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
mkpm = torch.tensor([[False, True, False, False], [False, False, False, True]])
run_case("dec_layer", dec, [("tgt", rnd(T, N, E)), ("memory", rnd(S, N, E)), ("tgt_mask", tgt_mask),
                            ("memory_key_padding_mask", mkpm)],
         lambda m, t, mem, tm, mk: (m(t, mem, tgt_mask=tm, memory_key_padding_mask=mk), None))



class NeoXRotary(torch.nn.Module):
    """Rotary embedding as GPT-NeoX / Hugging Face LLaMA write it (rotate_half), on the first `dim` features."""

    def __init__(self, dim, base, offset):
        super().__init__()
        self.dim, self.base, self.offset = dim, base, offset

    def forward(self, x):
        T = x.shape[2]
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.float64) / self.dim))
        freqs = torch.outer(torch.arange(self.offset, self.offset + T, dtype=torch.float64), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        rot, rest = x[..., :self.dim], x[..., self.dim:]
        x1, x2 = rot[..., :self.dim // 2], rot[..., self.dim // 2:]
        out = rot * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()
        return torch.cat((out, rest), dim=-1)


# RoPE: partial rotary (dim 4 of head_dim 6) at positions 3..7.
run_case("rope", NeoXRotary(4, 10000.0, 3), [("x", rnd(2, 2, 5, 6) * 2.0)], lambda m, x: (m(x), None))

header = [
    "#pragma once",
    "// GENERATED by tests/reference/gen_transformer_reference.py -- do not edit by hand. Regenerate with",
    "//   /usr/bin/python3 tests/reference/gen_transformer_reference.py",
    "// PyTorch's MultiheadAttention / TransformerEncoder / TransformerDecoderLayer in float64: inputs, state_dict",
    "// (PyTorch names and layouts), outputs, loss weights and gradients. Bool tensors are stored as 0/1.",
    f"// torch {torch.__version__.split('+')[0]}.",
    "#include <array>",
    "#include <cstddef>",
    "#include <cstdint>",
    "#include <limits>",
    "",
    "namespace ember::test::tfref {",
    "",
    "inline constexpr double kInf = std::numeric_limits<double>::infinity();",
    "",
    "struct RefTensor {",
    "  const char* name;",
    "  const double* data;",
    "  std::size_t size;",
    "  int rank;",
    "  std::array<int64_t, 4> shape;  // padded with 1",
    "};",
]
with open(OUT, "w") as f:
    f.write("\n".join(header + lines + ["", "}  // namespace ember::test::tfref", ""]))
