"""The op codes of ember.h's enums that the Tensor methods pass to libember (ember_unary_op, ember_scalar_op,
ember_binary_op, ember_compare_op, ember_logic_op, ember_reduce_op).

A leaf module (no ember imports), so every tensor mixin can use the codes without importing ember.tensor.
"""

UNARY = {"neg": 0, "abs": 1, "exp": 2, "log": 3, "log1p": 4, "sqrt": 5, "sin": 6, "cos": 7, "tanh": 8,
         "sigmoid": 9, "erf": 10, "reciprocal": 11, "sign": 12, "floor": 13, "ceil": 14, "round": 15, "relu": 16,
         "gelu": 17, "gelu_tanh": 18}
S_ADD, S_SUB, S_MUL, S_DIV, S_POW, S_CLAMP_MIN, S_CLAMP_MAX, S_RSUB, S_RDIV = range(9)
B_POW, B_MAXIMUM, B_MINIMUM = 4, 5, 6
CMP = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5}
LOGIC = {"and": 0, "or": 1, "xor": 2}
R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN = range(5)
