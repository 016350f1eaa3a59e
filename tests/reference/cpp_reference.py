"""What the reference generators (gen_math_reference.py, gen_trig_reference.py) share: float32-exact inputs and
the C++ spelling of the constexpr arrays they write into their headers."""
import math

import numpy as np


def f32(values):
    """Values rounded to float32 and held as float64: inputs every backend represents exactly."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def lit(v):
    """A double as a C++ literal; the headers define kNaN and kInf."""
    v = float(v)
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(v)


class ReferenceLines(list):
    """The body of one generated header, line by line."""

    def emit(self, name, values, comment=None):
        values = np.asarray(values, dtype=np.float64).ravel()
        if comment:
            self.append(f"// {comment}")
        self.append(f"inline constexpr double {name}[] = {{{', '.join(lit(v) for v in values)}}};")

    def emit_int(self, name, values, comment=None):
        values = np.asarray(values).ravel()
        if comment:
            self.append(f"// {comment}")
        # INT64_MIN has no literal (9223372036854775808 does not fit int64): spell it as C++ must.
        body = ", ".join("INT64_MIN" if int(v) == -2 ** 63 else str(int(v)) for v in values)
        self.append(f"inline constexpr int64_t {name}[] = {{{body}}};")

    def emit_shape(self, name, shape):
        dims = ", ".join(str(int(d)) for d in shape)
        self.append(f"inline constexpr std::array<int64_t, {len(shape)}> {name} = {{{dims}}};")

    def section(self, title):
        self.append("")
        self.append(f"// ---------------------------------------------------------------- {title}")
