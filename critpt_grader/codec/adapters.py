"""Lower numpy, SymPy and mpmath values to the plain values the core encoder knows.

The libraries are looked up in ``sys.modules`` and never imported here: a value can only be a
numpy, SymPy or mpmath object if its library is already loaded, and the sandbox must not pay for an
import it does not need. A lowered value may still hold foreign members (an object array, a
``sympy.Tuple``); the encoder lowers those in turn.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

from critpt_grader.codec.values import ExactComplex, Symbolic, WireSet
from critpt_grader.errors import CodecError

UNSET = object()  # "not a value of this library"

# Symbol assumptions worth carrying to the host: the ones a user declares
BASE_ASSUMPTIONS = frozenset(
    {
        "positive",
        "negative",
        "nonnegative",
        "nonpositive",
        "real",
        "integer",
        "rational",
        "complex",
        "imaginary",
        "zero",
        "nonzero",
        "finite",
        "even",
        "odd",
        "prime",
        "commutative",
    }
)


def lower_foreign(value: Any, path: str, symbols: dict | None) -> Any:
    """The plain form of a numpy, SymPy or mpmath value, or ``UNSET`` for anything else."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray | np.generic):
        return _lower_numpy(np, value, path)
    sympy = sys.modules.get("sympy")
    if sympy is not None and isinstance(value, sympy.Basic | sympy.MatrixBase | sympy.NDimArray):
        return _lower_sympy(sympy, value, path, symbols)
    mpmath = sys.modules.get("mpmath")
    if mpmath is not None and isinstance(value, mpmath.mpf | mpmath.mpc | mpmath.matrix):
        return _lower_mpmath(mpmath, value, path)
    return UNSET


# numpy -------------------------------------------------------------------------------------


def _lower_numpy(np: Any, value: Any, path: str) -> Any:
    if isinstance(value, np.ndarray):
        return _lower_array(np, value, path)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return _exact_real(np, value)
    if isinstance(value, np.complexfloating):
        real, imag = _exact_real(np, value.real), _exact_real(np, value.imag)
        if type(real) is float and type(imag) is float:
            return complex(real, imag)
        return ExactComplex(real, imag)
    if isinstance(value, np.str_):
        return str(value)
    if isinstance(value, np.bytes_):
        raise CodecError("invalid_type", path, "bytes are not a value")
    raise CodecError("unsupported_type", path, f"numpy {type(value).__name__}")


def _exact_real(np: Any, value: Any) -> float | Fraction:
    """binary64 when the value is one (float16/32/64 always are); a Fraction for the extra
    digits of an extended-precision longdouble, so nothing is rounded away."""
    with np.errstate(all="ignore"):
        as_float = float(value)
        if np.isnan(value) or type(value)(as_float) == value:
            return as_float
    return Fraction(*value.as_integer_ratio())


def _lower_array(np: Any, array: Any, path: str) -> Any:
    from critpt_grader.codec.wire import MAX_NODES

    if type(array) not in (np.ndarray, np.matrix):
        raise CodecError("unsupported_type", path, f"array subclass {type(array).__name__}")
    kind = array.dtype.kind
    if kind == "S":
        raise CodecError("invalid_type", path, "bytes arrays are not values")
    if array.dtype.names is not None or kind not in "biufcUO":
        raise CodecError("unsupported_type", path, f"numpy dtype {array.dtype}")
    if array.size > MAX_NODES:
        raise CodecError("size_limit", path, f"array of more than {MAX_NODES} elements")
    if array.ndim == 0:
        return array[()]  # a numpy scalar (or the object itself), lowered in turn
    # tolist gives nested lists by shape holding Python scalars (float32 widened exactly);
    # longdouble and object elements come back as they are and are lowered one by one.
    return np.asarray(array).tolist()


# SymPy -------------------------------------------------------------------------------------


def _lower_sympy(sympy: Any, value: Any, path: str, symbols: dict | None) -> Any:
    if isinstance(value, sympy.MatrixBase):
        return [[_symbolic(element, path, symbols) for element in row] for row in value.tolist()]
    if isinstance(value, sympy.Tuple):
        return tuple(value.args)
    if isinstance(value, sympy.FiniteSet):
        return WireSet(tuple(value.args))
    if isinstance(value, sympy.Dict):
        return _lower_sympy_dict(value, path)
    if value is sympy.true or value is sympy.false:
        return bool(value)
    if isinstance(value, sympy.NDimArray):
        return value.tolist() if value.rank() else value[()]
    return _symbolic(value, path, symbols)


def _lower_sympy_dict(value: Any, path: str) -> dict:
    from critpt_grader.symbolic.printer import to_text

    lowered = {to_text(key): item for key, item in value.items()}
    if len(lowered) != len(value):
        raise CodecError("invalid_text", path, "two sympy.Dict keys print the same")
    return lowered


def _symbolic(expr: Any, path: str, symbols: dict | None) -> Symbolic:
    from critpt_grader.symbolic.printer import to_text

    try:
        text = to_text(expr)
    except Exception as error:  # a printer gap is ours, not the value's: not attributable
        raise CodecError("unsupported_type", path, f"cannot print {type(expr).__name__}") from error
    if symbols is not None:
        _record_symbols(expr, path, symbols)
    return Symbolic(text)


def _record_symbols(expr: Any, path: str, symbols: dict) -> None:
    """Add ``{printed name: declared assumptions}`` for every symbol and unit in ``expr``."""
    import sympy

    from critpt_grader.symbolic.printer import to_text

    units = sys.modules.get("sympy.physics.units.quantities")
    quantity_type = units.Quantity if units is not None else None
    pending = [expr]
    while pending:
        node = pending.pop()
        if quantity_type is not None and isinstance(node, quantity_type):
            # a unit prints as its abbreviation and stands for a positive constant;
            # its own args (name and abbreviation symbols) are not free symbols
            _record(symbols, node.abbrev.name, {"positive": True}, path)
        elif isinstance(node, sympy.Symbol):
            _record(symbols, to_text(node), _declared_assumptions(node), path)
        elif isinstance(node, sympy.Basic):
            pending.extend(node.args)


def _declared_assumptions(symbol: Any) -> dict[str, bool]:
    declared = getattr(symbol, "_assumptions_orig", None)
    if declared is None:
        declared = {k: v for k, v in symbol.assumptions0.items() if k in BASE_ASSUMPTIONS}
    return {key: bool(value) for key, value in declared.items() if value is not None}


def _record(symbols: dict, name: str, assumptions: dict[str, bool], path: str) -> None:
    known = symbols.setdefault(name, assumptions)
    if known != assumptions:
        raise CodecError(
            "symbol_conflict", path, f"two symbols named {name!r} with different assumptions"
        )


# mpmath ------------------------------------------------------------------------------------

_MAX_BINARY_EXPONENT = 3500  # 2**3500 has more than the 1024 digits an int may carry


def _lower_mpmath(mpmath: Any, value: Any, path: str) -> Any:
    if isinstance(value, mpmath.matrix):
        return value.tolist()  # list of row lists of mpf/mpc, lowered in turn
    if isinstance(value, mpmath.mpc):
        real, imag = _exact_mpf(value.real._mpf_, path), _exact_mpf(value.imag._mpf_, path)
        if type(real) is float and type(imag) is float:
            return complex(real, imag)
        return ExactComplex(real, imag)
    return _exact_mpf(value._mpf_, path)


def _exact_mpf(mpf: tuple, path: str) -> float | Fraction:
    """binary64 when the mpf is one (as at mpmath's default 53-bit precision), else the exact
    Fraction of its binary value."""
    from mpmath import libmp

    special = {libmp.fzero: 0.0, libmp.finf: math.inf, libmp.fninf: -math.inf}
    if mpf in special:
        return special[mpf]
    if mpf == libmp.fnan:
        return math.nan
    sign, mantissa, exponent, _ = mpf
    if abs(exponent) > _MAX_BINARY_EXPONENT:
        raise CodecError("size_limit", path, "mpf exponent too large for an exact value")
    exact = Fraction(mantissa * 2**exponent) if exponent >= 0 else Fraction(mantissa, 2**-exponent)
    exact = -exact if sign else exact
    try:
        as_float = float(exact)
    except OverflowError:
        return exact
    return as_float if Fraction(as_float) == exact else exact
