// The f32 arithmetic of the elementwise ops, one function per family (UnaryOp / ScalarOp / BinaryOp codes of
// op_codes.glsl). The eager shaders (unary.comp, scalar.comp, binary.comp) call them with their op as a
// specialization constant; the fused chains generated at run time (fused_chain_glsl.cpp) call them with literal
// codes. Both fold the switch away, and a fused chain computes each op with the eager op's own formula.
// Needs op_codes.glsl, math.glsl and math_trig.glsl first.

float unary_f32(uint op, float v) {
  switch (op) {
    case UNARY_NEG: return -v;
    case UNARY_ABS: return abs(v);
    case UNARY_EXP: return ember_exp(v);
    case UNARY_LOG: return ember_log(v);
    case UNARY_LOG1P: return ember_log1p(v);
    case UNARY_SQRT: return ember_sqrt(v);
    case UNARY_SIN: return isinf(v) ? F_NAN : sin(v);
    case UNARY_COS: return isinf(v) ? F_NAN : cos(v);
    case UNARY_TANH: return ember_tanh(v);
    case UNARY_SIGMOID: return 1.0 / (1.0 + ember_exp(-v));
    case UNARY_ERF: return ember_erf(v);
    case UNARY_RECIP: return 1.0 / v;
    case UNARY_SIGN: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v);  // keeps NaN and signed zero
    case UNARY_FLOOR: return floor(v);
    case UNARY_CEIL: return ceil(v);
    case UNARY_ROUND: return roundEven(v);
    case UNARY_RELU: return v < 0.0 ? 0.0 : v;  // NaN passes through
    case UNARY_GELU: return 0.5 * v * (1.0 + ember_erf(v * 0.70710678118654752));
    case UNARY_GELU_TANH: return 0.5 * v * (1.0 + ember_tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
    case UNARY_ASIN: return ember_asin(v);
    case UNARY_ACOS: return ember_acos(v);
    case UNARY_ATAN: return ember_atan(v);
    case UNARY_SINH: return ember_sinh(v);
    case UNARY_COSH: return ember_cosh(v);
    case UNARY_ASINH: return ember_asinh(v);
    case UNARY_ACOSH: return ember_acosh(v);
    case UNARY_ATANH: return ember_atanh(v);
  }
  return v;
}

float scalar_f32(uint op, float v, float s) {
  switch (op) {
    case SCALAR_ADD: return v + s;
    case SCALAR_SUB: return v - s;
    case SCALAR_MUL: return v * s;
    case SCALAR_DIV: return v / s;
    case SCALAR_POW: return ember_pow(v, s);
    case SCALAR_CLAMP_MIN: return v < s ? s : v;  // NaN passes through
    case SCALAR_CLAMP_MAX: return v > s ? s : v;
    case SCALAR_RSUB: return s - v;
    case SCALAR_RDIV: return s / v;
    case SCALAR_REMAINDER: return ember_remainder(v, s);
  }
  return v;
}

float binary_f32(uint op, float x, float z) {
  switch (op) {
    case BINARY_ADD: return x + z;
    case BINARY_SUB: return x - z;
    case BINARY_MUL: return x * z;
    case BINARY_DIV: return x / z;
    case BINARY_POW: return ember_pow(x, z);
    case BINARY_MAXIMUM: return (isnan(x) || x > z) ? x : z;  // NaN propagates, like torch.maximum
    case BINARY_MINIMUM: return (isnan(x) || x < z) ? x : z;
    case BINARY_ATAN2: return ember_atan2(x, z);
    case BINARY_REMAINDER: return ember_remainder(x, z);
  }
  return x;
}
