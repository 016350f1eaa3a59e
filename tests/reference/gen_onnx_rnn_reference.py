#!/usr/bin/python3
"""Generates tests/reference/onnx_rnn_reference.hpp: ONNX LSTM / GRU / RNN outputs and gradients (float64) for
tests/onnx/rnn_ops_test.cpp:

    /usr/bin/python3 tests/reference/gen_onnx_rnn_reference.py      # rewrites onnx_rnn_reference.hpp

The values come from a per-sample, per-step PyTorch transcription of the ONNX operator definitions (autograd gives
the gradients of sum(Y * gY) + sum(Y_h * gY_h) + sum(Y_c * gY_c)). Before writing, the generator checks that
transcription against implementations it does not share code with: torch.nn.LSTM / GRU / RNN over packed
sequences (both directions, sequence lengths; ONNX's GRU with linear_before_reset is PyTorch's GRU) and ONNX's own
reference helpers (onnx.backend.test.case.node: peepholes, GRU without linear_before_reset)."""
import os

import numpy as np
import torch
from onnx.backend.test.case.node.gru import GRU_Helper
from onnx.backend.test.case.node.lstm import LSTM_Helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "onnx_rnn_reference.hpp")
torch.set_default_dtype(torch.float64)

# name -> (takes alpha, takes beta, default alpha, default beta), as the converter reads them.
ACTS = {
    "sigmoid": (0, 0, 0, 0), "tanh": (0, 0, 0, 0), "relu": (0, 0, 0, 0), "affine": (1, 1, 1.0, 0.0),
    "leakyrelu": (1, 0, 0.01, 0), "thresholdedrelu": (1, 0, 1.0, 0), "scaledtanh": (1, 1, 1.0, 1.0),
    "hardsigmoid": (1, 1, 0.2, 0.5), "elu": (1, 0, 1.0, 0), "softsign": (0, 0, 0, 0), "softplus": (0, 0, 0, 0),
}
DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def resolve_acts(names, alphas, betas):
    out, ia, ib = [], 0, 0
    for n in names:
        ta, tb, a, b = ACTS[n.lower()]
        if ta and ia < len(alphas):
            a, ia = alphas[ia], ia + 1
        if tb and ib < len(betas):
            b, ib = betas[ib], ib + 1
        out.append((n.lower(), a, b))
    return out


def activate(act, x):
    name, a, b = act
    return {
        "sigmoid": lambda: torch.sigmoid(x), "tanh": lambda: torch.tanh(x), "relu": lambda: torch.relu(x),
        "affine": lambda: a * x + b, "leakyrelu": lambda: torch.where(x >= 0, x, a * x),
        "thresholdedrelu": lambda: torch.where(x > a, x, torch.zeros_like(x)),
        "scaledtanh": lambda: a * torch.tanh(b * x), "hardsigmoid": lambda: torch.clamp(a * x + b, 0, 1),
        "elu": lambda: torch.where(x >= 0, x, a * (torch.exp(x) - 1)), "softsign": lambda: x / (1 + x.abs()),
        "softplus": lambda: torch.log(1 + torch.exp(x)),
    }[name]()


def onnx_rnn(op, c):
    """ONNX's equations, one batch entry and one step at a time. c: the case dict (inputs as torch tensors)."""
    x, w, r = c["X"], c["W"], c["R"]
    layout, hidden = c.get("layout", 0), c["hidden_size"]
    if layout == 1:
        x = x.transpose(0, 1)
    seq, batch, _ = x.shape
    direction = c.get("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    names = c.get("activations", DEFAULT_ACTS[op] * dirs)
    acts = resolve_acts(names, c.get("activation_alpha", []), c.get("activation_beta", []))
    per = len(DEFAULT_ACTS[op])
    clip = c.get("clip")
    cl = (lambda v: torch.clamp(v, -clip, clip)) if clip is not None else (lambda v: v)

    def state(key, d, b):
        if key not in c:
            return torch.zeros(hidden)
        s = c[key]
        return s[d, b] if layout == 0 else s[b, d]

    lens = c["sequence_lens"].tolist() if "sequence_lens" in c else [seq] * batch
    ys = [[[torch.zeros(hidden) for _ in range(batch)] for _ in range(dirs)] for _ in range(seq)]
    last = {"h": [[None] * batch for _ in range(dirs)], "c": [[None] * batch for _ in range(dirs)]}
    for d in range(dirs):
        rev = direction == "reverse" or d == 1
        f = acts[d * per:(d + 1) * per]
        wd, rd = w[d], r[d]
        bd = c["B"][d] if "B" in c else torch.zeros(2 * g * hidden)
        wb, rb = bd[:g * hidden], bd[g * hidden:]
        pd = c["P"][d] if "P" in c else torch.zeros(3 * hidden)
        for b in range(batch):
            h, cs = state("initial_h", d, b), state("initial_c", d, b)
            steps = range(lens[b] - 1, -1, -1) if rev else range(lens[b])
            for t in steps:
                xt = x[t, b]
                if op == "LSTM":
                    gates = wd @ xt + rd @ h + wb + rb
                    gi, go, gf, gc = gates.split(hidden)
                    i = activate(f[0], cl(gi + pd[:hidden] * cs))
                    ff = 1 - i if c.get("input_forget", 0) else activate(f[0], cl(gf + pd[2 * hidden:] * cs))
                    cc = activate(f[1], cl(gc))
                    cs = ff * cs + i * cc
                    o = activate(f[0], cl(go + pd[hidden:2 * hidden] * cs))
                    h = o * activate(f[2], cs)
                elif op == "GRU":
                    H = hidden
                    z = activate(f[0], cl(wd[:H] @ xt + rd[:H] @ h + wb[:H] + rb[:H]))
                    rr = activate(f[0], cl(wd[H:2 * H] @ xt + rd[H:2 * H] @ h + wb[H:2 * H] + rb[H:2 * H]))
                    if c.get("linear_before_reset", 0):
                        hh = wd[2 * H:] @ xt + rr * (rd[2 * H:] @ h + rb[2 * H:]) + wb[2 * H:]
                    else:
                        hh = wd[2 * H:] @ xt + rd[2 * H:] @ (rr * h) + rb[2 * H:] + wb[2 * H:]
                    hc = activate(f[1], cl(hh))
                    h = (1 - z) * hc + z * h
                else:
                    h = activate(f[0], cl(wd @ xt + rd @ h + wb + rb))
                ys[t][d][b] = h
            last["h"][d][b], last["c"][d][b] = h, cs
    y = torch.stack([torch.stack([torch.stack(row) for row in per_dir]) for per_dir in ys])  # [seq, dirs, batch, H]
    yh = torch.stack([torch.stack(row) for row in last["h"]])
    out = {"Y": y, "Y_h": yh}
    if op == "LSTM":
        out["Y_c"] = torch.stack([torch.stack(row) for row in last["c"]])
    if layout == 1:
        out = {k: (v.permute(2, 0, 1, 3) if k == "Y" else v.transpose(0, 1)) for k, v in out.items()}
    return out


def rnd(gen, *shape, scale=1.0):
    return torch.tensor(gen.standard_normal(shape) * scale)


def make_case(op, seed, seq, batch, inp, hidden, bias=True, init=False, peephole=False, **attrs):
    gen = np.random.default_rng(seed)
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    g = GATES[op]
    c = dict(attrs, hidden_size=hidden)
    layout = attrs.get("layout", 0)
    c["X"] = rnd(gen, *((seq, batch, inp) if layout == 0 else (batch, seq, inp)))
    c["W"] = rnd(gen, dirs, g * hidden, inp, scale=0.5)
    c["R"] = rnd(gen, dirs, g * hidden, hidden, scale=0.5)
    if bias:
        c["B"] = rnd(gen, dirs, 2 * g * hidden, scale=0.5)
    if init:
        shape = (dirs, batch, hidden) if layout == 0 else (batch, dirs, hidden)
        c["initial_h"] = rnd(gen, *shape)
        if op == "LSTM":
            c["initial_c"] = rnd(gen, *shape)
    if peephole:
        c["P"] = rnd(gen, dirs, 3 * hidden, scale=0.5)
    if "sequence_lens" in c:
        c["sequence_lens"] = torch.tensor(c["sequence_lens"], dtype=torch.int64)
    return c


CASES = [
    ("lstm_bidirectional_lens", "LSTM", make_case("LSTM", 1, 4, 3, 3, 2, direction="bidirectional",
                                                  sequence_lens=[4, 2, 3], init=True)),
    ("lstm_peephole_clip_forget_batchwise", "LSTM", make_case("LSTM", 2, 3, 2, 2, 3, layout=1, peephole=True,
                                                              clip=0.7, input_forget=1, init=True)),
    ("lstm_reverse_activations", "LSTM", make_case("LSTM", 3, 3, 2, 3, 2, direction="reverse",
                                                   activations=["HardSigmoid", "LeakyRelu", "Softsign"],
                                                   activation_alpha=[0.3, 0.2], activation_beta=[0.4])),
    ("gru_linear_before_reset_bidirectional_lens", "GRU", make_case("GRU", 4, 4, 3, 2, 3, direction="bidirectional",
                                                                    linear_before_reset=1, sequence_lens=[1, 4, 3],
                                                                    init=True)),
    ("gru_reverse_batchwise", "GRU", make_case("GRU", 5, 3, 2, 3, 2, direction="reverse", layout=1, init=True)),
    ("gru_no_bias_clip", "GRU", make_case("GRU", 6, 3, 2, 2, 3, bias=False, clip=0.5)),
    ("rnn_relu_bidirectional_lens", "RNN", make_case("RNN", 7, 4, 2, 3, 3, direction="bidirectional",
                                                     activations=["Relu", "Relu"], sequence_lens=[2, 4], init=True)),
    ("rnn_reverse_lens_batchwise", "RNN", make_case("RNN", 8, 3, 3, 2, 2, direction="reverse", layout=1,
                                                    sequence_lens=[3, 1, 2])),
]
for i, (act, alpha, beta) in enumerate([("Sigmoid", [], []), ("Affine", [0.5], [0.25]),
                                         ("ThresholdedRelu", [0.2], []), ("ScaledTanh", [1.5], [0.5]),
                                         ("Elu", [0.7], []), ("Softplus", [], []), ("LeakyRelu", [], []),
                                         ("HardSigmoid", [], [])]):
    CASES.append((f"rnn_activation_{act.lower()}", "RNN",
                  make_case("RNN", 20 + i, 3, 2, 2, 3, activations=[act], activation_alpha=alpha,
                            activation_beta=beta)))


# ---------------------------------------------------------------- independent checks of onnx_rnn

# The cases torch.nn can run (its gate functions, both directions or forward, biases).
TORCH_CHECKED = {"lstm_bidirectional_lens", "gru_linear_before_reset_bidirectional_lens",
                 "rnn_relu_bidirectional_lens"}


def torch_module_check(op, c):
    """ONNX's weights in torch.nn's gate order; torch.nn over a packed batch must give onnx_rnn's outputs."""
    hidden, x = c["hidden_size"], c["X"]
    bidir = c.get("direction") == "bidirectional"
    batch_first = c.get("layout", 0) == 1
    inp = x.shape[2]
    if op == "LSTM":
        m = torch.nn.LSTM(inp, hidden, bidirectional=bidir, batch_first=batch_first)
        order = [0, 2, 3, 1]  # torch i f g o <- ONNX i o f c
    elif op == "GRU":
        m = torch.nn.GRU(inp, hidden, bidirectional=bidir, batch_first=batch_first)
        order = [1, 0, 2]  # torch r z n <- ONNX z r h
    else:
        nl = c.get("activations", ["Tanh"])[0].lower()
        m = torch.nn.RNN(inp, hidden, bidirectional=bidir, batch_first=batch_first, nonlinearity=nl)
        order = [0]

    def reorder(t):
        return torch.cat([t.split(hidden)[k] for k in order])

    with torch.no_grad():
        for d in range(2 if bidir else 1):
            sfx = "_reverse" if d else ""
            getattr(m, "weight_ih_l0" + sfx).copy_(reorder(c["W"][d]))
            getattr(m, "weight_hh_l0" + sfx).copy_(reorder(c["R"][d]))
            g = GATES[op] * hidden
            getattr(m, "bias_ih_l0" + sfx).copy_(reorder(c["B"][d][:g]))
            getattr(m, "bias_hh_l0" + sfx).copy_(reorder(c["B"][d][g:]))
    seq = x.shape[1] if batch_first else x.shape[0]
    batch = x.shape[0] if batch_first else x.shape[1]
    lens = c["sequence_lens"] if "sequence_lens" in c else torch.full((batch,), seq)
    state = None
    if "initial_h" in c:
        h0 = c["initial_h"] if not batch_first else c["initial_h"].transpose(0, 1)
        state = (h0, c["initial_c"] if not batch_first else c["initial_c"].transpose(0, 1)) if op == "LSTM" else h0
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=batch_first, enforce_sorted=False)
    y, hn = m(packed, state)
    y, _ = torch.nn.utils.rnn.pad_packed_sequence(y, batch_first=batch_first, total_length=seq)
    ref = onnx_rnn(op, c)
    dirs = 2 if bidir else 1
    # torch's output [seq, batch, dirs * H] is ONNX's Y [seq, dirs, batch, H] with the dirs next to H
    y_onnx = ref["Y"] if not batch_first else ref["Y"].permute(1, 2, 0, 3)
    y_torch = y.reshape(seq, batch, dirs, hidden).permute(0, 2, 1, 3) if not batch_first else \
        y.reshape(batch, seq, dirs, hidden).permute(1, 2, 0, 3)
    assert torch.allclose(y_onnx, y_torch, atol=1e-12), op
    h_torch = hn[0] if op == "LSTM" else hn
    assert torch.allclose(ref["Y_h"] if not batch_first else ref["Y_h"].transpose(0, 1), h_torch, atol=1e-12)
    if op == "LSTM":
        assert torch.allclose(ref["Y_c"] if not batch_first else ref["Y_c"].transpose(0, 1), hn[1], atol=1e-12)


def onnx_helper_check():
    """ONNX's own reference helpers (one direction, no sequence_lens): peepholes, GRU without linear_before_reset."""
    c = make_case("LSTM", 40, 3, 2, 3, 2, peephole=True, init=True)
    np_in = {k: v.numpy() for k, v in c.items() if isinstance(v, torch.Tensor)}
    _, yh = LSTM_Helper(X=np_in["X"], W=np_in["W"], R=np_in["R"], B=np_in["B"], P=np_in["P"],
                        initial_h=np_in["initial_h"], initial_c=np_in["initial_c"]).step()
    assert np.allclose(onnx_rnn("LSTM", c)["Y_h"].numpy(), yh, atol=1e-12)
    for lbr in (0, 1):
        c = make_case("GRU", 41, 3, 2, 3, 2, linear_before_reset=lbr, init=True)
        np_in = {k: v.numpy() for k, v in c.items() if isinstance(v, torch.Tensor)}
        _, yh = GRU_Helper(X=np_in["X"], W=np_in["W"], R=np_in["R"], B=np_in["B"], initial_h=np_in["initial_h"],
                           linear_before_reset=np.array([lbr])).step()
        assert np.allclose(onnx_rnn("GRU", c)["Y_h"].numpy(), yh, atol=1e-12)


# ---------------------------------------------------------------- header

INPUTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
OUTPUTS = ["Y", "Y_h", "Y_c"]
GRAD_OF = ["X", "W", "R", "B", "initial_h", "initial_c", "P"]


def lit(v):
    return repr(float(v))


def main():
    for name, op, c in CASES:
        if name in TORCH_CHECKED:
            torch_module_check(op, c)
    onnx_helper_check()

    lines = [
        "// Generated by tests/reference/gen_onnx_rnn_reference.py (PyTorch 1.13, float64); do not edit.",
        "#pragma once",
        "#include <array>",
        "#include <cmath>",
        "#include <cstddef>",
        "#include <cstdint>",
        "",
        "namespace ember::test::onnx_rnn_ref {",
        "",
        "struct Tensor {  // values == nullptr: absent",
        "  std::size_t rank;",
        "  std::array<int64_t, 4> shape;",
        "  const double* values;",
        "};",
        "struct Case {",
        "  const char* name;",
        "  const char* op;",
        "  int64_t hidden_size, layout, input_forget, linear_before_reset;",
        "  const char* direction;",
        "  double clip;  // NaN: no clip attribute",
        "  const char* activations;  // comma-separated; \"\": the default",
        "  std::array<double, 4> alpha, beta;",
        "  std::size_t num_alpha, num_beta;",
        "  std::array<Tensor, 8> inputs;  // X W R B sequence_lens initial_h initial_c P",
        "  std::array<Tensor, 3> outputs;  // Y Y_h Y_c",
        "  std::array<Tensor, 3> seeds;  // gY gY_h gY_c: the loss is sum(output * seed)",
        "  std::array<Tensor, 7> grads;  // of X W R B initial_h initial_c P",
        "};",
    ]
    absent = "Tensor{0, {0, 0, 0, 0}, nullptr}"

    def emit(var, t):
        t = t.detach()
        shape = list(t.shape) + [0] * (4 - t.dim())
        vals = t.reshape(-1).tolist()
        lines.append(f"inline constexpr double {var}[] = {{{', '.join(lit(v) for v in vals)}}};")
        return f"Tensor{{{t.dim()}, {{{', '.join(str(s) for s in shape)}}}, {var}}}"

    rows = []
    for index, (name, op, c) in enumerate(CASES):
        lines.append("")
        lines.append(f"// {name}")
        gen = np.random.default_rng(1000 + index)
        leaves = {k: c[k].clone().requires_grad_(True) for k in GRAD_OF if k in c}
        cc = dict(c, **leaves)
        out = onnx_rnn(op, cc)
        seeds = {k: torch.tensor(gen.standard_normal(tuple(v.shape))) for k, v in out.items()}
        loss = sum((out[k] * seeds[k]).sum() for k in out)
        loss.backward()
        ins = [emit(f"{name}_{k}", c[k].double()) if k in c else absent for k in INPUTS]
        outs = [emit(f"{name}_{k}", out[k]) if k in out else absent for k in OUTPUTS]
        sds = [emit(f"{name}_seed_{k}", seeds[k]) if k in seeds else absent for k in OUTPUTS]
        grads = [emit(f"{name}_grad_{k}", leaves[k].grad) if k in leaves else absent for k in GRAD_OF]
        alpha, beta = c.get("activation_alpha", []), c.get("activation_beta", [])
        clip = lit(c["clip"]) if "clip" in c else "NAN"
        rows.append(
            f"    Case{{\"{name}\", \"{op}\", {c['hidden_size']}, {c.get('layout', 0)}, {c.get('input_forget', 0)}, "
            f"{c.get('linear_before_reset', 0)}, \"{c.get('direction', 'forward')}\", {clip}, "
            f"\"{','.join(c.get('activations', []))}\", "
            f"{{{', '.join(lit(v) for v in (alpha + [0] * 4)[:4])}}}, "
            f"{{{', '.join(lit(v) for v in (beta + [0] * 4)[:4])}}}, {len(alpha)}, {len(beta)},\n"
            f"         {{{', '.join(ins)}}},\n         {{{', '.join(outs)}}},\n         {{{', '.join(sds)}}},\n"
            f"         {{{', '.join(grads)}}}}},")
    lines.append("")
    lines.append(f"inline const std::array<Case, {len(rows)}> kCases = {{")
    lines.extend(rows)
    lines.append("};")
    lines.append("")
    lines.append("}  // namespace ember::test::onnx_rnn_ref")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
