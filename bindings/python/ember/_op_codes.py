"""The op codes of ember.h's enums that the Tensor methods pass to libember (ember_unary_op, ember_scalar_op,
ember_binary_op, ember_compare_op, ember_predicate_op, ember_logic_op, ember_reduce_op), under the names the
Tensor methods use.

Every value comes from _ops.py, generated from the op table (engine/backend/ops.def; meson test op_tables checks
it). Both are leaves (no other ember imports), so every tensor mixin can use the codes without importing
ember.tensor.
"""
from . import _ops

# "recip" is PyTorch's "reciprocal".
UNARY = {("reciprocal" if k == "recip" else k): v for k, v in _ops.UNARY.items()}
S_ADD, S_SUB, S_MUL, S_DIV, S_POW, S_CLAMP_MIN, S_CLAMP_MAX, S_RSUB, S_RDIV, S_REMAINDER = (_ops.SCALAR[k] for k in (
    "add", "sub", "mul", "div", "pow", "clamp_min", "clamp_max", "rsub", "rdiv", "remainder"))
B_POW, B_MAXIMUM, B_MINIMUM, B_ATAN2, B_REMAINDER = (_ops.BINARY[k] for k in (
    "pow", "maximum", "minimum", "atan2", "remainder"))
CMP = dict(_ops.COMPARE)
PREDICATE = dict(_ops.PREDICATE)
LOGIC = dict(_ops.LOGIC)
R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN = (_ops.REDUCE[k] for k in ("sum", "mean", "prod", "max", "min"))
