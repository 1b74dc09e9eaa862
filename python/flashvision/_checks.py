"""Python-side argument checks: types and options the C++ library cannot see.

Everything about shapes, strides, dtypes and devices is checked once, by the library, and
surfaces as flashvision.Error (a ValueError); here we only check what must be right before an
array can be handed over or an output allocated. Nothing here imports torch or numpy.
"""

import math
import numbers
import sys

LAYOUTS = ("bshd", "bhsd")

_TYPE_NAMES = {"numpy": "numpy.ndarray", "torch": "torch.Tensor"}


def type_name(x):
    """The qualified type name of x for messages ("list", "torch.Tensor")."""
    cls = type(x)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def framework_of(x, name):
    """'numpy' or 'torch' for an array argument; TypeError naming the argument otherwise."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        return "numpy"
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return "torch"
    raise TypeError(f"{name} must be a numpy.ndarray or torch.Tensor, got {type_name(x)}")


def common_framework(*named):
    """The framework of (name, array) pairs, which must all agree."""
    first_name, first = named[0]
    framework = framework_of(first, first_name)
    for name, x in named[1:]:
        other = framework_of(x, name)
        if other != framework:
            raise TypeError(
                f"{name} is a {_TYPE_NAMES[other]} but {first_name} is a "
                f"{_TYPE_NAMES[framework]}; expected arrays of one framework"
            )
    return framework


def check_bool(name, value):
    """value as a bool; TypeError unless it is one."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type_name(value)}")
    return value


def check_scale(scale, name="scale"):
    """The softmax scale as the library takes it: a nonzero finite float, 0.0 meaning 1/sqrt(D)."""
    if scale is None:
        return 0.0
    if type(scale) is float and scale != 0.0 and math.isfinite(scale):  # the common case, fast
        return scale
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{name} must be a float or None, got {type_name(scale)}")
    value = float(scale)
    if value == 0.0 or not math.isfinite(value):
        raise ValueError(
            f"{name} is {value}; expected a nonzero finite number, or None for 1/sqrt(head_dim)"
        )
    return value


def check_descale(name, value):
    """An FP8 descale factor as a float; TypeError unless a real number, ValueError unless finite
    and > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a float, got {type_name(value)}")
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} is {value}; expected a finite number > 0")
    return value


def check_layout(layout):
    """The layout name, "bshd" ([B, N, H, D]) or "bhsd" ([B, H, N, D])."""
    if layout not in LAYOUTS:
        raise ValueError(
            f"layout is {layout!r}; expected 'bshd' ([B, N, H, D]) or 'bhsd' ([B, H, N, D])")
    return layout


def check_rank(name, x, rank, shape_text):
    """ValueError unless x has `rank` dimensions; shape_text describes them."""
    if x.ndim != rank:
        raise ValueError(
            f"{name} has rank {x.ndim} (shape {tuple(x.shape)}); expected {shape_text}")


def check_max_seqlen(name, value):
    """A max_seqlen argument as an int (None: 0, which the library computes for CPU arrays)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int or None, got {type_name(value)}")
    return int(value)


def check_dropout(name, value):
    """flashvision computes exact attention: only dropout probability 0 is accepted."""
    if type(value) is float and value == 0.0:  # the common case, fast
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a float, got {type_name(value)}")
    if value != 0.0:
        raise NotImplementedError(
            f"{name} is {value}; flashvision has no attention dropout (expected 0.0)"
        )
