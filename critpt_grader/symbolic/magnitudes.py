"""The size check that runs before any numeric evaluation the grader does.

SymPy needs as many bits of working precision as an argument is large: ``sin(x)`` reduces
``x`` modulo ``2*pi``; ``exp`` of ``exp(exp(exp(9)))`` has an exponent no integer can hold. So
before an expression is evaluated, the arguments of its functions and powers are checked,
innermost first, each at 15 digits, and one beyond ``2**MAX_ARGUMENT_BITS`` is refused with
:class:`OversizeValue`: the cost is bounded by a count of bits, not by a clock.

Special functions cost what their *orders* make them cost (a degree, an index, a series
parameter: ``hermite(10**8, x)``, ``polylog(-10**5, z)``, ``hyper((10**6,), (1,), z)``), so an
order beyond :data:`~critpt_grader.symbolic.functions.MAX_ORDER` in modulus is refused the
same way (:func:`~critpt_grader.symbolic.functions.order_arguments` names them).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

from critpt_grader.symbolic.functions import MAX_ORDER, order_arguments

MAX_ARGUMENT_BITS = 16384  # |argument| of a function or exponent of a power, before evalf


class OversizeValue(ArithmeticError):
    """A value whose exact form, or whose evaluation, would exceed the comparator's size
    bounds; raised before the work is done. An ArithmeticError, as ``OverflowError`` is: where
    the comparator evaluates one side it treats this as that side's unevaluable value (the
    candidate's: a mismatch; the expectation's: uncertain). Where it escapes the comparator
    (a legacy number text), :mod:`critpt_grader.judge.row` decides whose value it was."""


@contextlib.contextmanager
def oversize_on_exhaustion() -> Iterator[None]:
    """Turn running out of range, stack or memory while evaluating into :class:`OversizeValue`."""
    try:
        yield
    except OverflowError:
        raise OversizeValue("a magnitude beyond what can be evaluated") from None
    except RecursionError:
        raise OversizeValue("nested too deeply to evaluate") from None
    except MemoryError:
        raise OversizeValue("evaluating it ran out of memory") from None


def check_magnitudes(expr) -> None:
    """Refuse ``expr`` before it is evaluated when an argument of one of its functions or
    powers is larger than ``2**MAX_ARGUMENT_BITS``. Arguments are checked innermost first,
    each at 15 digits, so every evaluation here runs on arguments already found small
    enough."""
    import sympy

    seen: set = set()
    stack: list = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if node in seen or not node.args:
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((arg, False) for arg in node.args)
            continue
        seen.add(node)
        if isinstance(node, sympy.Function | sympy.Pow):
            for arg in node.args:
                bits = _argument_bits(arg)
                if bits is not None and bits > MAX_ARGUMENT_BITS:
                    raise OversizeValue(
                        f"{type(node).__name__} of a number of {magnitude_text(bits)}"
                    )
            for order in order_arguments(node):
                size = order_magnitude(order)
                if size is not None and size > MAX_ORDER:
                    name = getattr(type(node), "original", type(node)).__name__
                    raise OversizeValue(f"{name} of an order beyond {MAX_ORDER} in modulus")


def order_magnitude(arg) -> float | None:
    """``|arg|`` of a number, from a 15-digit evaluation once its size is known to be small
    (:class:`OversizeValue` past ``2**MAX_ARGUMENT_BITS``); None when it is no number or its
    size is unknown."""
    import sympy

    if isinstance(arg, sympy.Rational):
        return abs(int(arg.p)) / int(arg.q) if arg.p.bit_length() <= 1000 else math.inf
    if not getattr(arg, "is_number", False):
        return None
    bits = _argument_bits(arg)
    if bits is None:
        return None
    if bits > 64:
        if bits > MAX_ARGUMENT_BITS:
            raise OversizeValue(f"an order of {magnitude_text(bits)}")
        return math.inf
    try:
        return abs(complex(arg.evalf(15)))
    except (TypeError, ValueError, ArithmeticError):
        return None


def magnitude_text(bits: int) -> str:
    """``about 10^N`` for a magnitude of ``2**bits``, without printing a huge int."""
    if bits.bit_length() <= 60:
        return f"about 10^{round(bits * math.log10(2))}"
    digits = round(bits.bit_length() * math.log10(2))
    return f"about 10^(10^{digits})"


def _argument_bits(arg) -> int | None:
    """``log2 |arg|`` rounded up, from a 15-digit evaluation; None when unknown."""
    import sympy

    if isinstance(arg, sympy.Rational):
        return max(int(arg.p).bit_length() - int(arg.q).bit_length() + 1, 0)
    if isinstance(arg, sympy.Float):
        value = arg
    elif not arg.args or not getattr(arg, "is_number", False):
        return None  # a constant such as pi, or not a number at all
    else:
        try:
            with oversize_on_exhaustion():
                value = arg.evalf(15)
        except OversizeValue:
            raise
        except Exception:  # any other failure leaves the magnitude unknown
            return None
    bits = None
    for part in value.as_real_imag():
        mpf = getattr(part, "_mpf_", None)
        if mpf is not None and mpf[1]:
            bits = max(bits or 0, mpf[2] + mpf[3])
    return bits
