"""The outputs a statement speaks of: their names, descriptions, and where they sit in a value.

Outputs are declared in three places, all read here:

* the template docstring's **Outputs** section (CritPt): entries ``name: type, description``
  (also ``name – description`` and ``a, b: float``), nested by indentation, in return order;
  an entry's block (its line and the more deeply indented lines under it) is its
  description. ``Ra_c: float, critical Rayleigh number`` declares ``Ra_c`` described as
  "critical Rayleigh number";
* the statement's **return declarations** (task rows): ``returning a tuple (p, W)``, ``Return
  the tuple (T, D)``, ``as a list [c_up, c_down]`` name the members in order; a description
  is read from ``p is the probability …`` / ``W the generalized Rabi frequency`` / ``the
  elapsed coordinate time T``; a single output is described by what is returned
  (``returning the chemical potential mu/E_F as a Python float``);
* the **expected value** itself, at binding time: identifier keys of a returned map.

For each output the reader keeps its name, its aliases (the inline math of its description,
``$\\mathop{\\mathrm{Tr}}\\mathcal{G}$``, and the name as math, ``$T$``), the content words of
its description and their head noun (the last word of its first noun group: "critical Rayleigh
number" → ``number``). :func:`output_set` places the names on an expected value: docstring
names follow return order (a tuple's positions, a map's keys, a single output at the root).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from critpt_grader.statement.text import flat_view, marked_view, math_key, tokens
from critpt_grader.statement.words import content_words, head_noun

Source = Literal["docstring", "statement", "value"]


@dataclass(frozen=True, slots=True)
class OutputEntry:
    """An entry of the Outputs docstring: ``name: type, description`` plus its block."""

    names: tuple[str, ...]
    indent: int
    start: int
    end: int
    children: tuple[OutputEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class Output:
    """One declared output (or member of one): how the statement may refer to it."""

    name: str
    description: str
    source: Source
    aliases: frozenset[str] = frozenset()  # math keys: its name and its description's math
    words: frozenset[str] = frozenset()  # content words of the description (stemmed)
    head: str = ""  # head noun of the description
    top_level: bool = True
    kind: str = ""  # the declared type, as written ("float", "tuple[int, int]")


# --- the Outputs docstring ---------------------------------------------------------------

_HEADER = re.compile(r"^([ \t]*)([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::|\s-{1,2}\s|=)(?!=)")
_NOT_NAMES = frozenset(
    {"outputs", "output", "returns", "return", "inputs", "input", "none", "parameters"}
)
_TYPE = re.compile(
    r"^\s*(?:(?:float|int|str|bool|complex|list|tuple|set|dict|frozenset|sympy\.\w+|sp\.\w+|"
    r"np\.\w+|numpy\.\w+|Interval|Expr|Symbol|Matrix)(?:\[[^\n]*?\])?)(?:\s*(?:,|or\b|$))",
    re.MULTILINE,
)


def parse_entries(doc: str) -> tuple[OutputEntry, ...]:
    """Entries of an Outputs docstring section (its ``marked`` view), nested by indentation."""
    found: list[tuple[tuple[str, ...], int, int]] = []
    pos = 0
    for line in doc.splitlines(keepends=True):
        match = _HEADER.match(line)
        if match:
            names = tuple(n.strip() for n in match.group(2).split(","))
            if not any(n.lower() in _NOT_NAMES for n in names):
                found.append((names, len(match.group(1).expandtabs(4)), pos))
        pos += len(line)
    return _nest(found, len(doc))


def _nest(found: list[tuple[tuple[str, ...], int, int]], end: int) -> tuple[OutputEntry, ...]:
    entries: list[OutputEntry] = []
    i = 0
    while i < len(found):
        names, indent, start = found[i]
        j = i + 1
        while j < len(found) and found[j][1] > indent:
            j += 1
        block_end = found[j][2] if j < len(found) else end
        children = _nest(found[i + 1 : j], block_end)
        entries.append(OutputEntry(names, indent, start, block_end, children))
        i = j
    return tuple(entries)


def walk(entries: tuple[OutputEntry, ...]):
    for entry in entries:
        yield entry
        yield from walk(entry.children)


def owners_at(entries: tuple[OutputEntry, ...], offset: int) -> tuple[str, ...]:
    """Names of the innermost entry whose block contains ``offset``."""
    best: OutputEntry | None = None
    for entry in walk(entries):
        if entry.start <= offset < entry.end and (best is None or entry.indent > best.indent):
            best = entry
    return best.names if best else ()


def top_level_names(entries: tuple[OutputEntry, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for entry in entries:
        names.extend(n for n in entry.names if n not in names)
    return tuple(names)


def _own_text(doc: str, entry: OutputEntry) -> tuple[str, str]:
    """The entry's declared type (``""`` when none) and its text without its children's
    blocks, its header and its type."""
    end = entry.children[0].start if entry.children else entry.end
    text = doc[entry.start : end]
    header = _HEADER.match(text)
    text = text[header.end() :] if header else text
    typed = _TYPE.match(text)
    if typed is None:
        return "", text
    return typed.group(0).strip().rstrip(",").strip(), text[typed.end() :]


def _describe(
    name: str, description: str, source: Source, top_level: bool, kind: str = ""
) -> Output:
    marked = marked_view(description)
    found = tokens(marked, 0, len(marked))
    aliases = {name}
    for token in found:
        if token.kind in ("math", "code") and token.text != "¦" and _alias_ok(token.text):
            aliases.add(math_key(token.text))
    words = content_words(found, exclude=(name,))
    head = head_noun(found, exclude=(name,))
    return Output(
        name,
        " ".join(flat_view(marked).split()),
        source,
        frozenset(aliases),
        frozenset(words),
        head,
        top_level,
        kind,
    )


def _alias_ok(math: str) -> bool:
    # An equation or a relation ("$E = 1$ meV", "$0 \le \eta \le 1$") names no quantity.
    return not re.search(r"=|<|>|\\le|\\ge|\\in\b|\\subset|,", math)


# --- return declarations in the statement -------------------------------------------------

_DECLARATION = re.compile(
    # "returning a tuple (p, W)", "Return the tuple\n(T, D)", "the amplitudes [a1, a2, a3]":
    # up to seven plain words between the verb and the list, none that opens a clause or a
    # phrase of its own ("… whose wavelength lies in [lam_min, lam_max]" declares nothing);
    # or, later in a sentence that returns, "… as a tuple (E, psi)"
    r"(?:\breturn(?:s|ing|ed)?\b(?:\s+(?!(?:whose|which|where|that|in|of|within|from|between|to"
    r"|for)\b)[\w-]+){0,7}|\b(?:return|report|give|provide|output)(?:s|ing|ed)?\b[^.;]{0,200}?"
    r"\bas\s+(?:an?|the)\s+"
    r"(?:Python\s+)?(?:tuple|pair|triple))\s*[(\[]\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*){1,11})"
    r"\s*[)\]]",
    re.IGNORECASE,
)
_SINGLE = re.compile(
    r"\breturn(?:s|ing)?\s+((?:the|an?)\s+[^.;:(]{3,160}?)\s*(?:,\s*)?"
    r"(?:\bas\s+(?:an?|one)\s+(?:Python|SymPy|sympy|numpy|exact|real|plain)?|\(|[.;:]|$)",
    re.IGNORECASE,
)


def declared_in_statement(flat: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """Names a statement declares for the returned members, in order, and descriptions
    (``""`` → the single returned value's description)."""
    descriptions: dict[str, str] = {}
    match = _DECLARATION.search(flat)
    if match is None:
        single = _SINGLE.search(flat)
        if single:
            descriptions[""] = single.group(1)
        return (), descriptions
    names = tuple(n.strip() for n in match.group(1).split(","))
    window = flat[match.end() : match.end() + 600]
    window = window[: _end_of_next_sentence(window)]
    for name in names:
        escaped = re.escape(name)
        after = re.search(
            rf"(?<![\w.]){escaped}\s+(?:is\s+|=\s+|:\s+)?(?:the|an?)\s+([^,;.]{{3,120}}?)"
            rf"(?=,|;|\.(?:\s|$)|\s+and\s+\w+\s+(?:is\s+)?(?:the|an?)\s|$)",
            window,
        )
        before = re.search(rf"\b(?:the|an?)\s+((?:[\w-]+\s+){{1,6}}?){escaped}(?![\w(])", window)
        if after:
            descriptions[name] = after.group(1)
        elif before:
            descriptions[name] = before.group(1)
    return names, descriptions


def _end_of_next_sentence(text: str) -> int:
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", text)]
    return ends[1] if len(ends) > 1 else len(text)


# --- the output set ----------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """What the statement and docstring declare (read once per statement)."""

    entries: tuple[OutputEntry, ...] = ()
    outputs: tuple[Output, ...] = ()
    statement_names: tuple[str, ...] = ()  # return declaration in the statement
    returned: tuple[Any, ...] = ()  # what the statement's returning verbs return (Returned)
    text: str = ""  # the statement's flat text: where a returned map's keys are described

    @property
    def top_level(self) -> tuple[str, ...]:
        if self.entries:
            return top_level_names(self.entries)
        return self.statement_names


def declare(problem_flat: str, doc_marked: str | None) -> Declared:
    """Read the declared outputs of one statement and its Outputs docstring."""
    outputs: list[Output] = []
    entries: tuple[OutputEntry, ...] = ()
    if doc_marked:
        entries = parse_entries(doc_marked)
        top = set(top_level_names(entries))
        for entry in walk(entries):
            kind, text = _own_text(doc_marked, entry)
            for name in entry.names:
                if all(o.name != name for o in outputs):
                    outputs.append(_describe(name, text, "docstring", name in top, kind))
    names, descriptions = declared_in_statement(problem_flat)
    for name in names:
        if all(o.name != name for o in outputs):
            outputs.append(_describe(name, descriptions.get(name, ""), "statement", True))
    if not outputs and "" in descriptions:
        outputs.append(_describe("", descriptions[""], "statement", True))
    return Declared(entries, tuple(outputs), names if not entries else (), text=problem_flat)


@dataclass(frozen=True)
class OutputSet:
    """The declared outputs placed on one expected value (``expected=None``: no value known,
    as when explaining a CritPt challenge before its reference ran)."""

    outputs: tuple[Output, ...]
    paths: dict[str, str] = field(default_factory=dict)  # name -> JSON Pointer
    count: int = 1  # top-level outputs: a tuple's members, a map's keys, else 1
    returned: tuple[Any, ...] = ()  # what the statement's returning verbs return (Returned)
    length: int | None = None  # entries of a returned list or tuple (None: not one)

    def named(self, name: str) -> Output | None:
        return next((o for o in self.outputs if o.name == name and name), None)

    def member(self, position: int) -> str | None:
        """The output at a place of a returned list or tuple ("the first entry"): its
        declared name, else ``[i]``; ``None`` when the value has no such place."""
        if self.length is None:
            return None
        index = position + self.length if position < 0 else position
        if not 0 <= index < self.length:
            return None
        path = f"/{index}"
        named = [n for n, p in self.paths.items() if p == path]
        return named[0] if len(named) == 1 else f"[{index}]"

    def path(self, name: str) -> str | None:
        found = self.paths.get(name)
        if found is None and self.length is not None:
            place = re.fullmatch(r"\[(\d+)\]", name)
            if place and int(place.group(1)) < self.length:
                return f"/{place.group(1)}"
        return found


def output_set(declared: Declared, expected: Any = None, *, known: bool = True) -> OutputSet:
    """Place ``declared`` on ``expected`` (``known=False``: the value is not known)."""
    outputs = [o for o in declared.outputs if o.name]
    paths: dict[str, str] = {}
    if known:
        if declared.entries:
            paths = bind_names(declared.entries, expected)
        elif declared.statement_names:
            paths = _positions(declared.statement_names, expected)
        if isinstance(expected, dict):
            for key in expected:
                if isinstance(key, str) and key.isidentifier():
                    paths.setdefault(key, f"/{escape(key)}")
                    if all(o.name != key for o in outputs):
                        outputs.append(_keyed(key, declared.text, top_level=True))
        for key, path in _nested_keys(expected).items():
            if key not in paths:
                paths[key] = path
                if all(o.name != key for o in outputs):
                    outputs.append(_keyed(key, declared.text, top_level=False))
    length = len(expected) if known and isinstance(expected, list | tuple) else None
    return OutputSet(
        tuple(outputs), paths, _count(declared, expected, known), declared.returned, length
    )


def _keyed(key: str, text: str, *, top_level: bool) -> Output:
    """A key of the returned map, described where the statement says what it holds: "m (the
    magnetization vector)", "the magnetization under 'm'", "mapping 'm' to the
    magnetization", "'m': the magnetization". No description: the key is its only name."""
    found = _key_description(key, text) if text else ""
    if not found:
        return Output(key, "", "value", frozenset({key}), top_level=top_level)
    return _describe(key, found, "value", top_level)


def _key_description(key: str, text: str) -> str:
    k = re.escape(key)
    quoted = rf"['\"]?{k}['\"]?(?![\w'\"])"
    forms = (
        rf"(?<![\w.]){quoted}\s*\(\s*((?:the|an?)\s+[^()]{{3,80}}?)\s*\)",
        rf"\b((?:the|an?)\s+(?:[\w-]+\s+){{1,5}}?)(?:under|at)\s+(?:the\s+)?(?:key\s+)?{quoted}",
        rf"(?<![\w.])['\"]{k}['\"]\s*(?::|->|→|\bto\b|\bfor\b|\bholds\b|\bholding\b)\s*"
        rf"((?:the|an?)\s+[^,;.()]{{3,80}}?)(?=,|;|\.|\)|\s+and\s|$)",
    )
    found = {m.group(1).strip() for rx in forms for m in re.finditer(rx, text)}
    return found.pop() if len(found) == 1 else ""


_NESTED_DEPTH = 4
_NESTED_KEYS = 256


def _nested_keys(expected: Any) -> dict[str, str]:
    """Identifier keys of maps nested in ``expected`` (below its top level) that occur at
    exactly one place, with their paths: "the depth" names ``/band/depth``. A key found at two
    places names neither (which one a clause means cannot be told)."""
    found: dict[str, list[str]] = {}
    stack: list[tuple[Any, str, int]] = []
    if isinstance(expected, dict):
        stack = [(v, f"/{escape(k)}", 1) for k, v in expected.items() if isinstance(k, str)]
    elif isinstance(expected, list | tuple):
        stack = [(v, f"/{i}", 1) for i, v in enumerate(expected)]
    seen = 0
    while stack and seen < _NESTED_KEYS:
        value, path, depth = stack.pop()
        if depth > _NESTED_DEPTH:
            continue
        if isinstance(value, dict):
            for key, inner in value.items():
                if not isinstance(key, str):
                    continue
                seen += 1
                inner_path = f"{path}/{escape(key)}"
                if key.isidentifier():
                    found.setdefault(key, []).append(inner_path)
                stack.append((inner, inner_path, depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((v, f"{path}/{i}", depth + 1) for i, v in enumerate(value))
    return {key: where[0] for key, where in found.items() if len(where) == 1}


def _count(declared: Declared, expected: Any, known: bool) -> int:
    # What the statement declares decides; the value's shape only when nothing is declared.
    # Names a statement gives the members of a returned list ("the vector (q_1, q_2, q_3) as
    # a list") are components of one output, not several outputs.
    if declared.entries:
        return len(declared.top_level)
    if declared.statement_names and not (known and isinstance(expected, list)):
        return len(declared.statement_names)
    if known and isinstance(expected, tuple):
        return len(expected)
    if known and isinstance(expected, dict):
        return max(len(expected), 1)
    return 1


def _positions(names: tuple[str, ...], expected: Any) -> dict[str, str]:
    if isinstance(expected, list | tuple) and len(expected) == len(names):
        return {name: f"/{i}" for i, name in enumerate(names)}
    return {}


def escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def bind_names(entries: tuple[OutputEntry, ...], expected: Any, base: str = "") -> dict[str, str]:
    """Map docstring names to JSON Pointers in ``expected`` (return order → positions)."""
    names = top_level_names(entries)
    bound: dict[str, str] = {}
    if not names:
        return bound
    if len(names) == 1:
        bound[names[0]] = base
        for entry in entries:
            for name, path in bind_names(entry.children, expected, base).items():
                bound.setdefault(name, path)
        return bound
    if isinstance(expected, dict):
        for entry in entries:
            for name in entry.names:
                if name in expected:
                    path = f"{base}/{escape(name)}"
                    bound.setdefault(name, path)
                    if len(entry.names) == 1:
                        for sub, sub_path in bind_names(
                            entry.children, expected[name], path
                        ).items():
                            bound.setdefault(sub, sub_path)
        return bound
    if isinstance(expected, list | tuple) and len(expected) == len(names):
        for index, name in enumerate(names):
            bound[name] = f"{base}/{index}"
        for entry in entries:
            if len(entry.names) == 1:
                index = names.index(entry.names[0])
                for sub, sub_path in bind_names(
                    entry.children, expected[index], f"{base}/{index}"
                ).items():
                    bound.setdefault(sub, sub_path)
    return bound
