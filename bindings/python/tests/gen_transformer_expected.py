#!/usr/bin/python3
"""Writes transformer_expected.json: PyTorch 1.13's nn.MultiheadAttention (masks, need_weights both ways), a
2-layer nn.TransformerEncoder (post- and pre-norm) and an nn.TransformerDecoderLayer in float64, forward and the
gradients of loss = sum(out * w) [+ sum(attn_weights * w_attn)], for test_transformer.py:

    /usr/bin/python3 bindings/python/tests/gen_transformer_expected.py    (needs Debian's python3-torch)

Each case holds the constructor arguments, the state_dict, the inputs (bool masks as bools), the outputs, the loss
weights and the gradients of the float inputs and every param. Dropout 0. Deterministic (seeded).
"""
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(2013)
torch.set_default_dtype(torch.float64)


def rnd(*shape):
    return torch.rand(*shape) * 2.0 - 1.0


def enc(t):
    return {"shape": list(t.shape), "dtype": "bool" if t.dtype == torch.bool else "float64",
            "values": [bool(v) for v in t.reshape(-1).tolist()] if t.dtype == torch.bool
            else [float(v) for v in t.reshape(-1).tolist()]}


def randomize(module):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 1:
                p.copy_(rnd(*p.shape) * 0.5 + (1.0 if "norm" in name and name.endswith("weight") else 0.0))
            else:
                p.copy_(rnd(*p.shape))


def case(kind, args, module, inputs, call):
    randomize(module)
    module.train()
    leaves = {k: v.clone().requires_grad_(v.is_floating_point() and "mask" not in k) for k, v in inputs.items()}
    out, weights = call(module, leaves)
    w_out = rnd(*out.shape)
    loss = (out * w_out).sum()
    result = {"kind": kind, "args": args, "state": {k: enc(v) for k, v in module.state_dict().items()},
              "inputs": {k: enc(v.detach()) for k, v in leaves.items()}, "out": enc(out.detach()),
              "loss_out": enc(w_out)}
    if weights is not None:
        w_attn = rnd(*weights.shape)
        loss = loss + (weights * w_attn).sum()
        result["weights"] = enc(weights.detach())
        result["loss_weights"] = enc(w_attn)
    loss.backward()
    grads = {k: enc(v.grad) for k, v in leaves.items() if v.requires_grad}
    grads.update({k: enc(p.grad) for k, p in module.named_parameters()})
    result["grads"] = grads
    return result


E, H, L, S, N = 8, 2, 3, 4, 2
cases = {}
cases["mha_masks_weights"] = case(
    "mha", {"embed_dim": E, "num_heads": H}, torch.nn.MultiheadAttention(E, H),
    {"query": rnd(L, N, E), "key": rnd(S, N, E), "value": rnd(S, N, E),
     "key_padding_mask": torch.tensor([[False, True, False, False], [False, False, False, True]]),
     "attn_mask": rnd(L, S)},
    lambda m, x: m(x["query"], x["key"], x["value"], key_padding_mask=x["key_padding_mask"],
                   attn_mask=x["attn_mask"], need_weights=True))
am3 = torch.zeros(N * H, L, S, dtype=torch.bool)
am3[1, 0, 2] = True
am3[2, 2, 1] = True
cases["mha_batch_first_no_weights"] = case(
    "mha", {"embed_dim": E, "num_heads": H, "batch_first": True}, torch.nn.MultiheadAttention(E, H, batch_first=True),
    {"query": rnd(N, L, E), "key": rnd(N, S, E), "value": rnd(N, S, E),
     "key_padding_mask": torch.tensor([[False, False, True, False], [False, False, False, False]]),
     "attn_mask": am3},
    lambda m, x: (m(x["query"], x["key"], x["value"], key_padding_mask=x["key_padding_mask"],
                    attn_mask=x["attn_mask"], need_weights=False)[0], None))
cases["mha_kvdim_head_weights"] = case(
    "mha", {"embed_dim": E, "num_heads": H, "kdim": 5, "vdim": 3}, torch.nn.MultiheadAttention(E, H, kdim=5, vdim=3),
    {"query": rnd(L, N, E), "key": rnd(S, N, 5), "value": rnd(S, N, 3), "key_padding_mask": rnd(N, S)},
    lambda m, x: m(x["query"], x["key"], x["value"], key_padding_mask=x["key_padding_mask"],
                   average_attn_weights=False))
for name, norm_first, act, bf in (("encoder_post_norm", False, "relu", False),
                                  ("encoder_pre_norm", True, "gelu", True)):
    args = {"d_model": E, "nhead": H, "dim_feedforward": 16, "dropout": 0.0, "activation": act,
            "batch_first": bf, "norm_first": norm_first, "num_layers": 2, "final_norm": norm_first}
    layer = torch.nn.TransformerEncoderLayer(E, H, 16, 0.0, act, batch_first=bf, norm_first=norm_first)
    model = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(E) if norm_first else None,
                                        enable_nested_tensor=False)
    cases[name] = case(
        "encoder", args, model,
        {"src": rnd(N, S, E) if bf else rnd(S, N, E), "mask": torch.triu(torch.ones(S, S, dtype=torch.bool), 1),
         "src_key_padding_mask": torch.tensor([[False, False, False, True], [False, False, False, False]])},
        lambda m, x: (m(x["src"], mask=x["mask"], src_key_padding_mask=x["src_key_padding_mask"]), None))
cases["decoder_layer_pre_norm"] = case(
    "decoder_layer", {"d_model": E, "nhead": H, "dim_feedforward": 16, "dropout": 0.0, "norm_first": True},
    torch.nn.TransformerDecoderLayer(E, H, 16, 0.0, norm_first=True),
    {"tgt": rnd(3, N, E), "memory": rnd(S, N, E), "tgt_mask": torch.triu(torch.full((3, 3), float("-inf")), 1),
     "memory_key_padding_mask": torch.tensor([[False, True, False, False], [False, False, False, False]])},
    lambda m, x: (m(x["tgt"], x["memory"], tgt_mask=x["tgt_mask"],
                    memory_key_padding_mask=x["memory_key_padding_mask"]), None))

with open(os.path.join(HERE, "transformer_expected.json"), "w") as f:
    json.dump({"torch": torch.__version__.split("+")[0], "cases": cases}, f, indent=None, sort_keys=True)
    f.write("\n")
