"""The unit of a promised width: "an absolute error below 0.5 meV" for an energy given in eV.

A width written with a unit is a quantity. It loosens the comparison only when it can be put
in the output's own unit, which the statement must name ("Give the gap **in eV**"); otherwise
the clause is kept with the reason ``unit_not_understood`` and the default applies. Reading a
width as a bare number would make "0.5 meV" an ``atol`` of 0.5 eV, a thousand times too loose.

* **Units** are read by pint (``pint.UnitRegistry`` with exact fractions): ``meV``, ``µeV``,
  ``mK``, ``GHz``, ``hartree``, ``cm^-1``, ``T``… A word pint knows but English uses (``in``,
  ``at``, ``a``) is never a unit here.
* **Ratios** need no output unit: ``ppm`` (1e-6), ``ppb`` (1e-9), ``ppt`` (1e-12), "parts per
  million/billion/thousand" make a relative width.
* **Atomic units** ("1e-6 a.u.") are the output's unit only when the statement gives the
  output in atomic units.
* **Percentage points** are an absolute width in percent: 0.5 when the output is given in
  percent ("in percent", "in %", "as a percentage"), 0.005 when it is a fraction ("as a
  fraction"); otherwise not understood.
* **The output's unit**: among the units the statement names after "in", "in units of",
  "expressed in", "measured in", "given in", in brackets ("[meV]") or alone in parentheses
  after a space ("the gap (eV)"; "value(s)" is no unit), those of the width's dimension —
  first in the clause's own sentence, then in the descriptions of the outputs it governs,
  then in the whole statement; exactly one must remain. Offset units (°C, °F) are refused.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from fractions import Fraction

from critpt_grader.policy.tolerance import format_number

RATIOS: dict[str, Fraction] = {
    "ppm": Fraction(1, 10**6),
    "ppb": Fraction(1, 10**9),
    "ppt": Fraction(1, 10**12),
    "parts per thousand": Fraction(1, 10**3),
    "parts per million": Fraction(1, 10**6),
    "parts per billion": Fraction(1, 10**9),
    "parts per trillion": Fraction(1, 10**12),
}
PERCENTAGE_POINT = "percentage point"

# English words pint would read as units (inch, technical atmosphere, year...), as written.
_NOT_UNITS = frozenset(
    """in at a an as the of or and to for by on is it be if per no not are was were with
    from into than this that these those each all any In At A An As The""".split()  # noqa: SIM905
)
_TOKEN = r"(?:[µμ]|[A-Za-zÅΩℏ])(?:[A-Za-zµμÅΩ0-9]|\^-?\d|\*\*-?\d|[/·*](?=[A-Za-zµμÅΩ]))*"
_RATIO = r"ppm|ppb|ppt|parts\s+per\s+(?:thousand|million|billion|trillion)"
_PP = r"percentage[\s-]+points?|pp(?![a-z])"
_ATOMIC = r"a\.\s?u\.|atomic\s+units?"
_AFTER_WIDTH = re.compile(rf"\s*(?:({_RATIO}|{_PP})|({_ATOMIC})|({_TOKEN})(?![\w]))", re.IGNORECASE)
_IN_ATOMIC = re.compile(rf"\b(?:in|expressed\s+in|given\s+in)\s+(?:{_ATOMIC})", re.I)
_OUTPUT_UNIT = re.compile(
    rf"\b(?:in\s+units\s+of|units\s+of|expressed\s+in|measured\s+in|given\s+in|in)\s+"
    rf"({_TOKEN})(?![\w])|\[\s*({_TOKEN})\s*\]|(?<![\w(])\(\s*({_TOKEN})\s*\)",
    re.IGNORECASE,
)
_IN_PERCENT = re.compile(r"\bin\s+(?:percent|per\s*cent|%)|\bas\s+a\s+percentage\b", re.I)
_AS_FRACTION = re.compile(r"\bas\s+a\s+(?:fraction|decimal\s+fraction)\b", re.IGNORECASE)

_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _registry():
    import pint

    with _lock:
        registry = pint.UnitRegistry(non_int_type=Fraction)
        registry.define("Ha = hartree")  # with its prefixes: mHa, µHa
        registry.define("E_h = hartree = Eh")
        return registry


@dataclass(frozen=True, slots=True)
class Width:
    """A width as written after its number: a unit, a ratio, percentage points, or a token
    that looks like a unit but is none pint knows."""

    written: str  # "meV", "ppm", "percentage points"
    kind: str  # "unit", "ratio", "points", "atomic", "unknown"


def width_unit(following: str) -> Width | None:
    """The unit written right after a width's number, or None."""
    match = _AFTER_WIDTH.match(following)
    if not match:
        return None
    if match.group(1):
        written = " ".join(match.group(1).lower().split())
        if written in RATIOS:
            return Width(written, "ratio")
        if written.startswith("parts"):
            return Width(written, "ratio")
        return Width(PERCENTAGE_POINT, "points")
    if match.group(2):
        return Width("a.u.", "atomic")
    written = match.group(3)
    if _units_of(written) is not None:
        return Width(written, "unit")
    if _looks_like_a_unit(written):
        return Width(written, "unknown")  # not read, so not a width in the output's unit
    return None


def _looks_like_a_unit(written: str) -> bool:
    """A token no English word spells: a short one not in the word list (``mHz``, ``Eh``),
    or one with a symbol, a digit or a capital inside (``µΩ``, ``cm^-1``, ``kJmol``)."""
    if written in _NOT_UNITS:
        return False
    if any(not ch.isascii() or ch.isdigit() or ch in "^/*" for ch in written):
        return True
    if any(ch.isupper() for ch in written[1:]):
        return True
    return len(written) <= 3 and written.lower() not in _SHORT_WORDS


_SHORT_WORDS = frozenset(
    """i we you he she they his her its our who why how all any few its may can off out own
    too via yet so do did has had was its one two six ten""".split()  # noqa: SIM905
)


def _units_of(written: str):
    """pint's unit for ``written``, or None when it is not one (or an English word)."""
    if written in _NOT_UNITS or len(written) > 24:
        return None
    registry = _registry()
    text = written.replace("µ", "u").replace("μ", "u").replace("·", "*").replace("ℏ", "hbar")
    try:
        quantity = registry.Quantity(1, text)
    except Exception:  # pint's UndefinedUnitError, a syntax error, anything: not a unit
        if not (text[:1].isupper() and text[1:].islower() and len(text) > 3):
            return None
        try:  # a unit written as the first word of a phrase: "Hartree"
            quantity = registry.Quantity(1, text.lower())
        except Exception:
            return None
    if not quantity.unitless and not _offset(quantity):
        return quantity.units
    return None


def _offset(quantity) -> bool:
    try:
        return not quantity._ok_for_muldiv()
    except Exception:
        return True


@dataclass(frozen=True, slots=True)
class Converted:
    """A width put in the output's unit, or why it could not be."""

    value: Fraction | None  # the width in the output's unit; None when not understood
    relative: bool = False  # a ratio: a relative width
    note: str = ""  # "0.5 meV = 0.0005 eV", or why not understood


def convert(value: Fraction, width: Width, contexts: tuple[str, ...]) -> Converted:
    """``value`` in ``width``'s unit, in the unit of the output. ``contexts``: where the
    output's unit may be named, nearest first (the clause's sentence, the descriptions of
    the outputs it governs, the whole statement)."""
    shown = format_number(value)
    if width.kind == "ratio":
        ratio = RATIOS.get(width.written)  # width_unit collapsed its white space
        if ratio is None:
            return Converted(None, note=f"'{width.written}' not understood")
        relative = value * ratio
        return Converted(
            relative, True, f"{shown} {width.written} = rtol {format_number(relative)}"
        )
    if width.kind == "points":
        for text in contexts:
            if _IN_PERCENT.search(text):
                return Converted(value, False, f"{shown} percentage points, in percent")
            if _AS_FRACTION.search(text):
                fraction = value / 100
                note = f"{shown} percentage points = {format_number(fraction)} as a fraction"
                return Converted(fraction, False, note)
        return Converted(None, note="percentage points, but the output's scale is not stated")
    if width.kind == "atomic":  # atomic units of what? the same only if the output's are
        if any(_IN_ATOMIC.search(text) for text in contexts):
            return Converted(value, False, f"{shown} a.u., the output's unit")
        return Converted(None, note="a.u., but the output is not said to be in atomic units")
    unit = _units_of(width.written)
    if unit is None:
        return Converted(None, note=f"'{width.written}' is not a unit pint knows")
    for text in contexts:
        found = _output_units(text, unit)
        if len(found) == 1:
            target = next(iter(found.values()))
            name = next(iter(found))
            try:
                converted = _registry().Quantity(value, unit).to(target).magnitude
            except Exception:
                return Converted(None, note=f"{width.written} cannot be put in {name}")
            exact = Fraction(converted)
            return Converted(
                exact, False, f"{shown} {width.written} = {format_number(exact)} {name}"
            )
        if len(found) > 1:
            names = ", ".join(sorted(found))
            return Converted(None, note=f"{width.written}, but the output may be in {names}")
    return Converted(None, note=f"{width.written}, but the statement names no unit of its kind")


def _output_units(text: str, unit) -> dict[str, object]:
    """The units named for outputs in ``text`` with the dimension of ``unit``."""
    registry = _registry()
    found: dict[str, object] = {}
    for match in _OUTPUT_UNIT.finditer(text):
        written = match.group(1) or match.group(2) or match.group(3)
        candidate = _units_of(written)
        if candidate is None:
            continue
        if (
            registry.Quantity(1, candidate).dimensionality
            == registry.Quantity(1, unit).dimensionality
        ):
            found.setdefault(written, candidate)
    return found
