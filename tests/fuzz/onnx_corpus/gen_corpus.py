#!/usr/bin/env python3
"""Seeds of the ONNX importer fuzzer (tests/fuzz/onnx_import_fuzz.cpp): small valid models and hostile ones, made
with ONNX's own helpers (Debian python3-onnx) and checked in. Run with /usr/bin/python3 from this directory.
Valid seeds give libFuzzer the protobuf structure to mutate; the hostile ones start it at the parser's checks (the
same cases as tests/onnx/parse_test.cpp)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_corpus")


def save(name, m):
    with open(name, "wb") as f:
        f.write(m.SerializeToString())


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])
w2 = helper.make_tensor_value_info("w2", TensorProto.FLOAT, [2])
w = numpy_helper.from_array(np.array([1.5, -2.0], dtype=np.float32), "w")

save("identity.onnx", model([helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["w"], ["w2"])],
                            [x], [y, w2], [w]))
save("constant.onnx", model([helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0]),
                             helper.make_node("Constant", [], ["k"], value_int=3),
                             helper.make_node("Identity", ["c"], ["w2"])],
                            [], [w2, helper.make_tensor_value_info("k", TensorProto.INT64, [])]))
then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                           [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
else_g = helper.make_graph([helper.make_node("Identity", ["w"], ["e"])], "else", [],
                           [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
save("if_subgraph.onnx", model([helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
                               [cond, x], [y], [w]))
save("cycle.onnx", model([helper.make_node("Identity", ["b"], ["a"]), helper.make_node("Identity", ["a"], ["b"]),
                          helper.make_node("Identity", ["x"], ["y"])], [x], [y]))
save("undefined_input.onnx", model([helper.make_node("Identity", ["ghost"], ["y"])], [x], [y]))


def raw_tensor(name, dims, data):  # helper.make_tensor checks sizes; these files must not be consistent
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    t.raw_data = data
    return t


huge = raw_tensor("w", [1 << 40, 1 << 40], b"\0" * 8)
save("huge_dims.onnx", model([helper.make_node("Identity", ["w"], ["w2"])], [], [w2], [huge]))
short = raw_tensor("w", [100000000], b"\0" * 8)
save("raw_data_short.onnx", model([helper.make_node("Identity", ["w"], ["w2"])], [], [w2], [short]))
ext = numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32), "w")
ext.ClearField("raw_data")
ext.data_location = TensorProto.EXTERNAL
for k, v in (("location", "../../etc/passwd"), ("offset", "4096"), ("length", "8")):
    e = ext.external_data.add()
    e.key, e.value = k, v
save("external_dotdot.onnx", model([helper.make_node("Identity", ["w"], ["w2"])], [], [w2], [ext]))
i8 = helper.make_tensor("w", TensorProto.INT8, [2], [1, 2])
save("int8.onnx", model([helper.make_node("Identity", ["w"], ["w2"])], [], [w2], [i8]))
