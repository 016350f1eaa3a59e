#!/usr/bin/python3
"""Small ONNX models for the importer's surface tests (C ABI: tests/c_api/onnx_test.cpp, Python:
bindings/python/tests/test_onnx.py, CLI: tests/onnx_cli_test.sh), made with onnx's helper API (Debian's python3-onnx
1.12), and their expected values computed by torch 1.13 (outputs, and the gradients of sum(outputs) w.r.t. the
initializers). Run with /usr/bin/python3 from anywhere; writes beside this file:

  mlp.onnx           x [batch, 3] -> Gemm(fc1, transB) -> Relu -> Gemm(fc2, transB) -> y [batch, 2]; opset 13
  two_io.onnx        a, b [2, 3] -> sum = a + b, prod = a * b * scale (scale [3] an initializer); opset 13
  reshape.onnx       x [2, 3] -> Reshape(x, shape) with shape an int64 initializer [3, 2]; opset 13
  dropout.onnx       x [4, 8] -> Dropout(ratio 0.5) -> y; opset 13 (identity in eval, zeros in train)
  unsupported.onnx   x -> Identity -> NotAnOnnxOp -> y: refused at load, naming the operator and node
  onnx_expected.hpp  the C test's inputs and expected values
  onnx_expected.json the same for the Python test
  mlp_x.npy, mlp_y.npy, two_a.npy, two_b.npy  the CLI test's inputs and expected outputs (float32)
"""
import json
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def opset(v):
    return [helper.make_opsetid("", v)]


def values(shape, scale, offset):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) * scale + offset).reshape(shape).astype(np.float32)


def mlp():
    w1 = np.sin(np.arange(12, dtype=np.float64)).reshape(4, 3).astype(np.float32) * 0.7
    b1 = np.array([0.1, -0.2, 0.05, 0.3], dtype=np.float32)
    w2 = np.cos(np.arange(8, dtype=np.float64)).reshape(2, 4).astype(np.float32) * 0.5
    b2 = np.array([-0.1, 0.25], dtype=np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in
             ((w1, "fc1.weight"), (b1, "fc1.bias"), (w2, "fc2.weight"), (b2, "fc2.bias"))]
    nodes = [helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["y"], name="fc2", transB=1)]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])], inits)
    save(helper.make_model(g, opset_imports=opset(13), producer_name="ember gen_onnx_models"), "mlp.onnx")

    x = values((5, 3), 0.37, -2.1)
    params = {n: torch.tensor(a, dtype=torch.float64, requires_grad=True) for a, n in
              ((w1, "fc1.weight"), (b1, "fc1.bias"), (w2, "fc2.weight"), (b2, "fc2.bias"))}
    xt = torch.tensor(x, dtype=torch.float64)
    h = torch.relu(xt @ params["fc1.weight"].T + params["fc1.bias"])
    y = h @ params["fc2.weight"].T + params["fc2.bias"]
    y.sum().backward()
    return {"mlp_x": x, "mlp_y": y.detach().numpy(),
            "mlp_grad_fc1_weight": params["fc1.weight"].grad.numpy(),
            "mlp_grad_fc2_bias": params["fc2.bias"].grad.numpy()}


def two_io():
    scale = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"], name="add"),
             helper.make_node("Mul", ["a", "b"], ["ab"], name="mul"),
             helper.make_node("Mul", ["ab", "scale"], ["prod"], name="scale_mul")]
    info = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])  # noqa: E731
    g = helper.make_graph(nodes, "two_io", [info("a"), info("b")], [info("sum"), info("prod")],
                          [numpy_helper.from_array(scale, "scale")])
    save(helper.make_model(g, opset_imports=opset(13)), "two_io.onnx")
    a, b = values((2, 3), 0.5, -1.0), values((2, 3), -0.25, 2.0)
    return {"two_a": a, "two_b": b, "two_sum": a + b, "two_prod": a * b * scale}


def reshape():
    shape = np.array([3, 2], dtype=np.int64)
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], "reshape",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
                          [numpy_helper.from_array(shape, "shape")])
    save(helper.make_model(g, opset_imports=opset(13)), "reshape.onnx")
    return {}


def dropout():
    g = helper.make_graph([helper.make_node("Dropout", ["x", "ratio"], ["y"], name="drop")], "dropout",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
                          [numpy_helper.from_array(np.array(0.5, dtype=np.float32), "ratio")])
    save(helper.make_model(g, opset_imports=opset(13)), "dropout.onnx")
    return {}


def unsupported():
    nodes = [helper.make_node("Identity", ["x"], ["t"], name="id"),
             helper.make_node("NotAnOnnxOp", ["t"], ["y"], name="mystery")]
    g = helper.make_graph(nodes, "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(g, opset_imports=opset(13))
    onnx.save(model, os.path.join(HERE, "unsupported.onnx"))  # the checker would refuse the unknown operator
    return {}


def main():
    data = {}
    for make in (mlp, two_io, reshape, dropout, unsupported):
        data.update(make())
    lines = ["// Generated by tests/c_api/onnx_models/gen_onnx_models.py (torch 1.13): do not edit.", "#pragma once",
             "#include <cstdint>", "#include <vector>", "", "namespace ember::onnx_expected {", ""]
    for name, a in data.items():
        a = np.asarray(a, dtype=np.float64)
        dims = ", ".join(str(d) for d in a.shape)
        vals = ", ".join("%.9g" % v for v in a.reshape(-1))
        lines.append("inline const std::vector<int64_t> %s_shape{%s};" % (name, dims))
        lines.append("inline const std::vector<float> %s{%s};" % (name, vals))
    lines += ["", "}  // namespace ember::onnx_expected", ""]
    with open(os.path.join(HERE, "onnx_expected.hpp"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(HERE, "onnx_expected.json"), "w") as f:
        json.dump({k: {"shape": list(np.shape(v)), "values": np.asarray(v, dtype=np.float64).reshape(-1).tolist()}
                   for k, v in data.items()}, f, indent=0)
        f.write("\n")
    for name in ("mlp_x", "mlp_y", "two_a", "two_b"):
        np.save(os.path.join(HERE, name + ".npy"), np.asarray(data[name], dtype=np.float32))


if __name__ == "__main__":
    main()
