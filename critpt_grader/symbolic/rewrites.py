"""The exact rewrites the prover tries on a difference, cheapest first.

Each is an identity-preserving transformation, so a difference it turns into 0 is proved
zero. They cover the forms physicists write the same quantity in:

* algebra: ``expand``, ``together``, ``radsimp``, ``powsimp``;
* trigonometry: the Pythagorean identity, ``expand_trig``;
* the **exponential form** of trigonometric and hyperbolic functions, put over one
  denominator (``tanh(x)`` against its exponentials; Planck's ``1/(exp(x)-1) + 1/2`` against
  ``coth(x/2)/2``; Fermi's ``1/(exp(x)+1)`` against ``(1 - tanh(x/2))/2``);
* **gamma functions**: ``gammasimp`` (the recurrence ``gamma(x+1) = x*gamma(x)``, the
  reflection ``gamma(x)*gamma(1-x) = pi/sin(pi*x)``, factorials and binomials) and
  ``expand_func``;
* **error functions**: everything in terms of ``erf`` (``erfc = 1 - erf``,
  ``erfi(x) = -I*erf(I*x)``);
* **Bessel functions of half-integer order**: ``expand_func`` reduces the order to ±1/2 by
  the recurrences, then the closed forms of DLMF 10.16.1, 10.39.1 and 10.39.2 on principal
  branches (``besseli(1/2, z) = sqrt(2/pi)*sinh(z)/sqrt(z)``...);
* **algebraic numbers** (principal roots, nested radicals such as Gauss's ``cos(2*pi/17)``):
  a constant difference whose minimal polynomial is ``t`` is 0;
* ``trigsimp`` and, last, ``simplify``.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

Rewrite = Callable[[sympy.Expr], sympy.Expr]

_T = sympy.Symbol("t")


def _pythagoras(expr: sympy.Expr) -> sympy.Expr:
    from sympy.simplify.fu import TR6  # cos(u)**2 -> 1 - sin(u)**2, an exact identity

    # A sum of many Pythagorean pairs cancels in microseconds where trigsimp takes seconds.
    return sympy.expand(TR6(expr))


def _exponential_form(expr: sympy.Expr) -> sympy.Expr:
    rewritten = sympy.expand(expr.rewrite(sympy.exp))
    if rewritten == 0:
        return rewritten
    return sympy.cancel(sympy.together(rewritten))


def _gamma_functions(expr: sympy.Expr) -> sympy.Expr:
    return sympy.gammasimp(expr)


def _expanded_functions(expr: sympy.Expr) -> sympy.Expr:
    return sympy.expand(sympy.expand_func(expr))


def _error_functions(expr: sympy.Expr) -> sympy.Expr:
    return sympy.expand(sympy.expand_func(expr).rewrite(sympy.erf))


def _half_integer_bessel(expr: sympy.Expr) -> sympy.Expr:
    calls = expr.atoms(sympy.besselj, sympy.bessely, sympy.besseli, sympy.besselk)
    if not any(_half_integer(call.args[0]) for call in calls):
        return expr
    reduced = sympy.expand_func(expr)  # the recurrences, down to orders ±1/2
    rewritten = reduced.replace(
        lambda node: isinstance(node, _BESSEL) and node.args[0] in (sympy.S.Half, -sympy.S.Half),
        lambda node: _closed_form(type(node), node.args[0], node.args[1]),
    )
    return sympy.cancel(sympy.expand(rewritten))


_BESSEL = (sympy.besselj, sympy.bessely, sympy.besseli, sympy.besselk)


def _half_integer(order: sympy.Expr) -> bool:
    return bool((2 * order).is_integer and not order.is_integer)


def _closed_form(kind: type, order: sympy.Expr, z: sympy.Expr) -> sympy.Expr:
    """Orders ±1/2 in elementary functions; ``sqrt(2/pi)/sqrt(z)`` is the principal
    ``(2/(pi*z))**(1/2)`` of DLMF, valid on the whole cut plane."""
    root = sympy.sqrt(2 / sympy.pi) / sympy.sqrt(z)
    half = order == sympy.S.Half
    if kind is sympy.besselj:
        return root * (sympy.sin(z) if half else sympy.cos(z))
    if kind is sympy.bessely:
        return root * (-sympy.cos(z) if half else sympy.sin(z))
    if kind is sympy.besseli:
        return root * (sympy.sinh(z) if half else sympy.cosh(z))
    return sympy.sqrt(sympy.pi / 2) / sympy.sqrt(z) * sympy.exp(-z)  # K(1/2) = K(-1/2)


def _algebraic_number(expr: sympy.Expr) -> sympy.Expr:
    """0 when ``expr`` is a constant algebraic number whose minimal polynomial is ``t``."""
    if expr.free_symbols or expr.is_algebraic is False:
        return expr
    if sympy.minimal_polynomial(expr, _T) == _T:
        return sympy.S.Zero
    return expr


REWRITES: tuple[tuple[str, Rewrite], ...] = (
    ("expand", sympy.expand),
    ("together", sympy.together),
    ("radsimp", sympy.radsimp),
    ("powsimp", sympy.powsimp),
    ("pythagoras", _pythagoras),
    ("expand_trig", lambda e: sympy.expand(sympy.expand_trig(e))),
    ("exponential form", _exponential_form),
    ("gammasimp", _gamma_functions),
    ("expand_func", _expanded_functions),
    ("error functions", _error_functions),
    ("half-integer Bessel", _half_integer_bessel),
    ("minimal polynomial", _algebraic_number),
    ("trigsimp", sympy.trigsimp),
    ("simplify", sympy.simplify),
)
