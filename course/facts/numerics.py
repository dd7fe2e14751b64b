"""Facts of number formats and activation functions themselves (no data file), computed by the
swiglu-clamp widget's model: one copy of the bit formulas and of SiLU, for prose and widget alike."""
import math

from ..widgets import load_model


def facts(data):
    sc = load_model("swiglu-clamp")
    limit = sc.fp16_max()
    return {"silu10_times10": sc.product(10.0, 10.0),
            "fp16": {"silu_overflow_x": sc.overflow_x_fp16(), "max": limit, "sqrt_max": math.sqrt(limit)},
            "bf16": {"max": sc.bf16_max()}, "fp8_e4m3": {"max": sc.fp8_e4m3_max()}}
