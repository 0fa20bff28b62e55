"""The lossless value codec ``critpt-value-v1``: how values leave the sandbox.

Envelope: ``{"format": "critpt-value-v1", "value": node}``. A node is a JSON array whose
first element is a string tag, with exactly the tag's arity:

==========  ===========================================  ==================================
tag         node                                         decodes to
==========  ===========================================  ==================================
null        ``["null"]``                                 ``None``
bool        ``["bool", true]``                           ``bool``
int         ``["int", "-12"]`` (≤1024 digits)            ``int``
float       ``["float", "0x1.8p+1"]`` (``float.hex()``)  ``float`` (finite, bit-exact)
nonfinite   ``["nonfinite", "nan"|"inf"|"-inf"]``        ``float``
fraction    ``["fraction", "1", "3"]``                   ``fractions.Fraction``
decimal     ``["decimal", "12.3400"]``                   ``decimal.Decimal`` (scale kept)
complex     ``["complex", re, im]``                      ``complex`` if both parts are
                                                         float/nonfinite, else
                                                         :class:`~.values.ExactComplex`
list/tuple  ``["list", [node, ...]]``                    ``list`` / ``tuple``
set         ``["set", [node, ...]]``                     :class:`~.values.WireSet`
map         ``["map", [["key", node], ...]]``            ``dict[str, value]`` (wire order)
str         ``["str", "text"]``                          ``str``
symbolic    ``["symbolic", "x**2 + 1"]``                 :class:`~.values.Symbolic`
legacy      ``["legacy", "7/19"]``                       :class:`~.values.Legacy`
==========  ===========================================  ==================================

Extension: a complex part may also be a ``nonfinite`` node, so ``complex(inf, 0)`` encodes.
Delivered task data may write ``{"__complex__": [re, im]}`` (finite int/float parts) in place
of a complex node; :func:`decode_value` accepts it.

Limits (over one is a :class:`~critpt_grader.errors.CodecError`): depth ≤32 (the root is 0),
≤32768 nodes, text ≤16384 characters and UTF-8 bytes, ints ≤1024 digits, decimals ≤1024
digits with exponents ≤1024, JSON text ≤524288 bytes and bracket nesting ≤104.

Encoding, by exact type (``bool`` before ``int``):

* ``set``/``frozenset`` → ``set`` with members sorted by their node's JSON, so a set always
  encodes the same way; a ``dict`` → ``map``, keys of type bool, int, float, Fraction, Decimal,
  complex, tuple (of those) or None stringified with ``str()`` (``1`` → ``"1"``,
  ``(0, 0)`` → ``"(0, 0)"``); two keys with the same text are refused (``invalid_text``).
* Subclasses of builtin value types (an ``IntEnum``, a ``str`` subclass) are refused
  (``invalid_type``), as are bytes, functions, modules, classes, ranges, generators and
  iterators. Two kinds of subclass are plain data and are accepted: namedtuples encode as
  ``tuple`` and ``OrderedDict``/``defaultdict``/``Counter`` as ``map``.
  Any other type is ``unsupported_type``, the one code that is not the value's fault.
* **numpy**: a scalar encodes as the matching plain node — ``np.bool_`` → bool, integers →
  int, ``float16/32/64`` → float (widened exactly to binary64), ``complex64/128`` → complex,
  ``np.str_`` → str; an extended-precision ``longdouble`` that is not a binary64 becomes an
  exact ``fraction``. An ``ndarray`` (or ``np.matrix``) becomes nested ``list`` nodes following
  its shape: shape ``(2, 3)`` → a list of 2 lists of 3 elements; a 0-d array → its one element;
  object arrays element by element. Byte, datetime and structured arrays are refused.
* **SymPy**: ``Tuple`` → tuple; ``FiniteSet`` → set; ``Matrix``/``ImmutableMatrix`` → list of
  row lists of ``symbolic``; ``sympy.Dict`` → map (keys printed as grammar text);
  ``true``/``false`` → bool; every other SymPy value (numbers included) → ``symbolic`` with
  :func:`critpt_grader.symbolic.printer.to_text`.

* **mpmath**: an ``mpf`` that is a binary64 (always, at the default 53-bit precision) →
  float, a wider one → its exact ``fraction``; ``mpc`` → complex likewise; ``matrix`` → list of
  row lists.

Only the standard library is imported here; numpy, SymPy and mpmath are used only when a value
belongs to them (and so are already loaded), which keeps the sandbox's start-up cheap.

    >>> from fractions import Fraction
    >>> dumps([1, 0.5, Fraction(1, 3)])
    '{"format":"critpt-value-v1","value":["list",[["int","1"],["float","0x1.0000000000000p-1"],["fraction","1","3"]]]}'
    >>> loads(dumps({"E": 1.5}))
    {'E': 1.5}
"""

from __future__ import annotations

from typing import Any

from critpt_grader.codec.decode import decode, decode_value
from critpt_grader.codec.encode import encode_value
from critpt_grader.codec.jsontext import format_json, parse_json
from critpt_grader.codec.wire import FORMAT

__all__ = ["FORMAT", "decode", "decode_value", "dumps", "encode", "encode_value", "loads"]


def encode(value: Any, *, symbols: dict | None = None) -> dict:
    """The envelope for ``value``.

    When ``symbols`` is a dict it is filled with ``{name: {assumption: bool}}`` for every SymPy
    symbol met (the assumptions the user declared, e.g. ``{"positive": True}``); unit
    quantities are recorded by abbreviation as positive.
    """
    return {"format": FORMAT, "value": encode_value(value, symbols=symbols)}


def dumps(value: Any) -> str:
    """Compact JSON text of :func:`encode`."""
    return format_json(encode(value))


def loads(text: str | bytes) -> Any:
    """Parse envelope JSON text strictly, then :func:`decode` it."""
    return decode(parse_json(text))
