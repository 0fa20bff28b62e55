"""The unit of a promised width: "an absolute error below 0.5 meV" for an energy given in eV.

A width written with a unit is a quantity. It loosens the comparison only when it can be put
in the output's own unit, which the statement must name ("Give the gap **in eV**"); otherwise
the clause is kept with the reason ``unit_not_understood`` and the default applies. Reading a
width as a bare number would make "0.5 meV" an ``atol`` of 0.5 eV, a thousand times too loose.

* **Units** are read by pint (``pint.UnitRegistry`` with exact fractions): ``meV``, ``µeV``,
  ``mK``, ``GHz``, ``hartree``, ``cm^-1``, ``T``…, also as LaTeX writes them
  (``\\mathrm{cm}^{-1}``, ``\\mu\\mathrm{eV}``, ``{\\rm meV}``) and with a superscript power
  (``cm⁻¹``, read as ``cm-1``). A word pint knows but English uses (``in``, ``at``, ``a``) is
  never a unit here.
* **A width is a difference.** A temperature width in °C (``°C``, ``degC``, ``℃``, "degrees
  Celsius") or °F is a temperature *difference*: 0.5 °C on an output in K is 0.5 K, never
  273.65 K; a width in K on an output in °C is the same number of degrees.
* **Wavenumbers are energies** by the spectroscopic convention E = h·c·ν̃: a width in
  ``cm^-1`` converts to an output in eV (and a width in meV to an output in cm^-1). No other
  conversion across dimensions is made — an energy width on a frequency output (E = h·ν), or
  on a wavevector in nm^-1, is of another kind and converts to nothing.
* **Ratios** need no output unit: ``ppm`` (1e-6), ``ppb`` (1e-9), ``ppt`` (1e-12), "parts per
  million/billion/thousand" make a relative width.
* **Atomic units** ("1e-6 a.u.") are the output's unit only when the statement gives the
  output in atomic units.
* **Percentage points** are an absolute width in percent: 0.5 when the output is given in
  percent ("in percent", "in %", "as a percentage"), 0.005 when it is a fraction ("as a
  fraction"); otherwise not understood.
* **The output's unit**: among the units the statement names after "in", "in units of",
  "expressed in", "measured in", "given in", in brackets ("[meV]") or alone in parentheses
  after a space ("the gap (eV)"; "value(s)" is no unit), those a width's unit converts to —
  first in the clause's own sentence, then in the descriptions of the outputs it governs,
  then in the whole statement; exactly one must remain (:func:`convert`). Where a statement
  names a unit for each output (:func:`unit_mentions`, read per output by
  :mod:`critpt_grader.policy.promises`), a width converts to each output's own unit and
  never reaches an output whose unit is of another kind (:func:`convert_to`).

Everything pint parses is parsed once per spelling (cached), and the units a text names are
found once per text: a long statement with many widths costs one pass, not one per width.
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
# A unit as written: a temperature in degrees, or letters (after a LaTeX wrapper or a \mu)
# with powers ("cm^-1", "cm^{-1}", "cm-1" from "cm⁻¹", "m/s").
_DEGREES = (
    r"°\s?[CF](?![\w])|[℃℉]|\^?\s*\{?\s*\\circ\s*\}?\s*[CF](?![\w])|deg\s?[CF](?![\w])"
    r"|degrees?\s+(?:Celsius|Fahrenheit|C|F)(?![\w])|Celsius(?![\w])|Fahrenheit(?![\w])"
)
_LATEX = r"\\(?:mathrm|mathit|text|textrm|rm|mbox|operatorname)\s*"
_POWER = r"(?:\s*\^\s*\{\s*-?\d\s*\}|\^-?\d|\*\*-?\d|-[1-3](?![\w]|\.\d))"
_LETTERS = r"(?:[µμ]|[A-Za-zÅΩℏ])(?:[A-Za-zµμÅΩ0-9]|\^-?\d|\*\*-?\d|[/·*](?=[A-Za-zµμÅΩ]))*"
_TOKEN = (
    rf"(?:{_DEGREES}"
    rf"|\{{?\s*(?:\\mu\s*)?(?:{_LATEX}\{{?\s*)?(?:\\mu\s*)?{_LETTERS}(?:\s*\}}){{0,2}}{_POWER}?)"
)
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
_CELSIUS = re.compile(r"°\s?C|℃|\\circ\s*\}?\s*C|deg\s?C|degrees?\s+(?:Celsius|C)$|Celsius", re.I)
_FAHRENHEIT = re.compile(
    r"°\s?F|℉|\\circ\s*\}?\s*F|deg\s?F|degrees?\s+(?:Fahrenheit|F)$|Fahrenheit", re.I
)
_WAVENUMBERS = re.compile(r"wavenumbers?|kaysers?", re.IGNORECASE)

_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _registry():
    import pint

    with _lock:
        registry = pint.UnitRegistry(non_int_type=Fraction)
        registry.define("Ha = hartree")  # with its prefixes: mHa, µHa
        registry.define("E_h = hartree = Eh")
        return registry


def warm_registry() -> None:
    """Build the unit registry now and use it once (the comparison workers' zygote does, so
    its workers start with it). pint starts no thread."""
    _registry().Quantity(1, "meV").to("eV")


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
    if any(not ch.isascii() or ch.isdigit() or ch in "^/*\\{" for ch in written):
        return True
    if any(ch.isupper() for ch in written[1:]):
        return True
    return len(written) <= 3 and written.lower() not in _SHORT_WORDS


_SHORT_WORDS = frozenset(
    """i we you he she they his her its our who why how all any few its may can off out own
    too via yet so do did has had was its one two six ten""".split()  # noqa: SIM905
)


def pint_text(written: str) -> str:
    """What pint is asked to read for a unit as written: LaTeX wrappers and braces dropped,
    ``µ``/``\\mu`` as ``u``, a power after a hyphen as a power (``cm-1`` → ``cm^-1``), and a
    temperature in degrees as a difference (``°C`` → ``delta_degC``)."""
    text = " ".join(written.split())
    if _CELSIUS.search(text):
        return "delta_degC"
    if _FAHRENHEIT.search(text):
        return "delta_degF"
    if _WAVENUMBERS.fullmatch(text):
        return "1/cm"
    text = re.sub(_LATEX, "", text)
    text = text.replace("\\mu", "u").replace("{", "").replace("}", "").replace(" ", "")
    text = re.sub(r"(?<![\^*])-(\d)$", r"^-\1", text)
    return text.replace("µ", "u").replace("μ", "u").replace("·", "*").replace("ℏ", "hbar")


@functools.lru_cache(maxsize=1024)
def _units_of(written: str):
    """pint's unit for ``written``, or None when it is not one (or an English word). A
    temperature on an offset scale (°C, °F) is read as a difference of it."""
    if written in _NOT_UNITS or len(written) > 40:
        return None
    registry = _registry()
    text = pint_text(written)
    if not text or len(text) > 24:
        return None
    try:
        quantity = registry.Quantity(1, text)
    except Exception:  # pint's UndefinedUnitError, a syntax error, anything: not a unit
        if not (text[:1].isupper() and text[1:].islower() and len(text) > 3):
            return None
        try:  # a unit written as the first word of a phrase: "Hartree"
            quantity = registry.Quantity(1, text.lower())
        except Exception:
            return None
    if quantity.unitless:
        return None
    if _offset(quantity):  # "degree_Celsius" as pint spells it: a difference of it
        try:
            quantity = registry.Quantity(1, f"delta_{registry.get_name(text)}")
        except Exception:
            return None
        if _offset(quantity):
            return None
    return quantity.units


def _offset(quantity) -> bool:
    try:
        return not quantity._ok_for_muldiv()
    except Exception:
        return True


@functools.lru_cache(maxsize=1024)
def _factor(source: str, target: str) -> Fraction | None:
    """How many ``target`` one ``source`` is (both as written), or None when one cannot be
    put in the other: same dimension, or wavenumbers (cm^-1) and energy both ways."""
    src, dst = _units_of(source), _units_of(target)
    if src is None or dst is None:
        return None
    registry = _registry()
    one = registry.Quantity(1, src)
    try:
        if one.dimensionality == registry.Quantity(1, dst).dimensionality:
            return Fraction(one.to(dst).magnitude)
        if _spectroscopic(src, dst) or _spectroscopic(dst, src):
            return Fraction(one.to(dst, "sp").magnitude)
    except Exception:
        return None
    return None


def _spectroscopic(wavenumber, energy) -> bool:
    """``wavenumber`` is exactly cm^-1 and ``energy`` an energy: E = h·c·ν̃."""
    registry = _registry()
    try:
        per_cm = registry.Quantity(1, wavenumber).to("1/cm").magnitude == 1
    except Exception:
        return False
    return (
        per_cm
        and registry.Quantity(1, energy).dimensionality == registry.Quantity(1, "eV").dimensionality
    )


def same_kind(source: str, target: str) -> bool:
    """Whether a width written in ``source`` can be put in ``target`` (both as written)."""
    return _factor(source, target) is not None


@dataclass(frozen=True, slots=True)
class Converted:
    """A width put in the output's unit, or why it could not be."""

    value: Fraction | None  # the width in the output's unit; None when not understood
    relative: bool = False  # a ratio: a relative width
    note: str = ""  # "0.5 meV = 0.0005 eV", or why not understood


@dataclass(frozen=True, slots=True)
class UnitMention:
    """A unit a text names for something: "in eV", "[meV]", "(K)"; ``start``/``end``: where
    the whole mention sits, ``written``: the unit as written."""

    start: int
    end: int
    written: str


@functools.lru_cache(maxsize=64)
def unit_mentions(text: str) -> tuple[UnitMention, ...]:
    """The units ``text`` names ("in eV", "in units of meV", "[GHz]", "(K)") that pint reads,
    in text order (found once per text)."""
    found: list[UnitMention] = []
    for match in _OUTPUT_UNIT.finditer(text):
        written = match.group(1) or match.group(2) or match.group(3)
        if _units_of(written) is not None:
            found.append(UnitMention(match.start(), match.end(), written))
    return tuple(found)


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
    if _units_of(width.written) is None:
        return Converted(None, note=f"'{width.written}' is not a unit pint knows")
    for text in contexts:
        found = _output_units(text, width.written)
        if len(found) == 1:
            return convert_to(value, width, found[0])
        if len(found) > 1:
            names = ", ".join(sorted(found))
            return Converted(None, note=f"{width.written}, but the output may be in {names}")
    return Converted(None, note=f"{width.written}, but the statement names no unit of its kind")


def convert_to(value: Fraction, width: Width, target: str) -> Converted:
    """``value`` in ``width``'s unit, in the unit written ``target``: "0.5 meV = 0.0005 eV",
    "0.5 °C = 0.5 K" (a difference), "2 cm^-1 = 0.000248 eV" (E = h·c·ν̃)."""
    shown = format_number(value)
    factor = _factor(width.written, target)
    if factor is None:
        return Converted(None, note=f"{width.written} cannot be put in {target}")
    exact = value * factor
    across = _units_of(width.written).dimensionality != _units_of(target).dimensionality
    via = " by E = h·c·ν̃" if across else ""
    note = f"{shown} {width.written} = {format_number(exact)} {target}{via}"
    return Converted(exact, False, note)


def _output_units(text: str, width: str) -> list[str]:
    """The units named for outputs in ``text`` that a width in ``width`` converts to, each
    spelling once, in text order."""
    found: list[str] = []
    for mention in unit_mentions(text):
        if mention.written not in found and same_kind(width, mention.written):
            found.append(mention.written)
    return found
