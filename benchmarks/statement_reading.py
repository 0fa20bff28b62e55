"""What reading a long statement costs: CPU seconds of ``explain`` against statement size.

    python benchmarks/statement_reading.py [--shapes NAME ...] [--json]
    python benchmarks/statement_reading.py --against REV [--timeout 120]

Each shape is a synthetic statement built by repeating one piece of text: 50, 100 and 200
times, and as often as fits in the loader's cap on a task's ``problem`` (131,072 characters,
``critpt_grader/tasks/task_data.py``). Every figure is the CPU time (``time.process_time``) of
one ``explain`` of a public fixture task whose problem is the synthetic statement, in a fresh
process whose caches are warm for everything but the statement (pint's registry is loaded by a
first, small statement). Shapes:

  clause       one precision clause per sentence, repeated ("Report the energy E with …")
  unit         a clause whose width has a unit ("… with an absolute error below 0.5 meV.")
  semicolons   one sentence of clauses cut by ";" (no full stop)
  and          one sentence of directives coordinated by "and" (no full stop)
  parentheses  one sentence of noun phrases with a parenthetical promise ("(allowing ±0.5 …)")
  numbers      one sentence of numbers and units, no clause at all
  outputs      a tuple of 12 outputs, one clause per sentence naming one of them
  mixed        two outputs in units of two kinds, widths with units (explained as a CritPt
               challenge is, before its reference ran: outputs by name, no value)
  unclosed     inline math and environments opened but never closed ("\\begin{equation}", "\\(")

``--against REV`` measures this tree and commit ``REV`` (its ``critpt_grader`` exported with
``git archive`` into a temporary folder) side by side in one run, alternately, each figure in a
fresh process, and prints the ratio REV/this (how many times this tree is faster). A
measurement past ``--timeout`` seconds of wall time is stopped and shown as ``>T``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

CAP = 131_072  # TaskDataV1.problem max_length
REPEATS = (50, 100, 200)
HERE = Path(__file__).resolve().parents[1]

SHAPES: dict[str, tuple[str, str, str]] = {
    # name: (head, piece repeated, tail)
    "clause": ("", "Report the energy E with relative error below 1e-6. ", ""),
    "unit": ("", "Give the gap in eV, with an absolute error below 0.5 meV. ", ""),
    "semicolons": ("", "keep four decimal places for all numerical answers; ", "."),
    "and": ("", "report the energy E with relative error below 1e-6 and ", "."),
    "parentheses": (
        "What are ",
        "the critical Rayleigh number (allowing $\\pm 0.5$ error), ",
        "?",
    ),
    "numbers": ("The inputs are ", "1.5, 2.5e-3, 7 meV, 10^{-6} and 3 s.f., ", "."),
    "outputs": (
        "Return the tuple (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11). ",
        "Report x7 to 4 decimal places. Give x3 within 0.1%. ",
        "",
    ),
    "mixed": (
        "Return the tuple (gap, T_c): the gap in eV and T_c in K. ",
        "Give the gap within 5 meV and T_c within 0.5 K; a deviation of 2 cm^-1 is tolerated. ",
        "",
    ),
    "unclosed": ("", "\\begin{equation} E \\( x \\[ y, to 3 decimal places, ", "."),
}


def statement(shape: str, repeats: int | None) -> str:
    """The synthetic statement: ``repeats`` pieces, or as many as fit in the cap."""
    head, piece, tail = SHAPES[shape]
    if repeats is None:
        repeats = (CAP - len(head) - len(tail)) // len(piece)
    return head + piece * repeats + tail


def measure(shape: str, repeats: int | None) -> dict[str, float]:
    """CPU seconds of one ``explain`` of the shape in this process."""
    import dataclasses

    from critpt_grader.policy.explain import explain
    from critpt_grader.tasks import load_tasks

    task = load_tasks(HERE / "fixtures" / "public" / "tasks.jsonl")[0]
    warm = "Give the gap in eV, with an absolute error below 0.5 meV. Keep 3 s.f."
    explain(dataclasses.replace(task, problem=warm))  # imports, pint's registry
    text = statement(shape, repeats)
    task = dataclasses.replace(task, problem=text)
    if shape == "mixed":
        task = dataclasses.replace(task, cases=())
    start = time.process_time()
    explain(task)
    return {"chars": len(text), "cpu": time.process_time() - start}


def measure_in(tree: Path, shape: str, repeats: int | None, timeout: float) -> dict:
    """``measure`` in a fresh process importing ``critpt_grader`` from ``tree``."""
    size = "cap" if repeats is None else str(repeats)
    command = [sys.executable, str(Path(__file__).resolve()), "--one", shape, size]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    try:
        done = subprocess.run(
            command, env=env, cwd=HERE, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"chars": len(statement(shape, repeats)), "cpu": None}
    if done.returncode != 0:
        raise SystemExit(f"measuring {shape} x {size} in {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def export(revision: str, folder: Path) -> Path:
    """The ``critpt_grader`` package of ``revision``, written under ``folder``."""
    archive = folder / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(
            ["git", "-C", str(HERE), "archive", revision, "critpt_grader"], stdout=out, check=True
        )
    with tarfile.open(archive) as tar:  # our own repository's files
        try:
            tar.extractall(folder / "tree", filter="data")
        except TypeError:  # a Python without extraction filters
            tar.extractall(folder / "tree")
    return folder / "tree"


def cell(seconds: float | None, timeout: float) -> str:
    return f"{seconds:9.3f}" if seconds is not None else f"{'>' + format(timeout, 'g'):>9}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", choices=list(SHAPES), default=list(SHAPES))
    parser.add_argument("--against", metavar="REV", help="measure commit REV side by side")
    parser.add_argument("--timeout", type=float, default=120.0, help="wall seconds per figure")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        shape, size = args.one
        print(json.dumps(measure(shape, None if size == "cap" else int(size))))
        return
    sizes: list[int | None] = [*REPEATS, None]
    with tempfile.TemporaryDirectory(prefix="critpt-statement-bench-") as tmp:
        trees = {"this": HERE}
        if args.against:
            trees[args.against] = export(args.against, Path(tmp))
        results: dict[str, dict[str, dict]] = {}
        for shape in args.shapes:
            for size in sizes:
                label = "cap" if size is None else str(size)
                results.setdefault(shape, {})[label] = {
                    name: measure_in(tree, shape, size, args.timeout)
                    for name, tree in trees.items()
                }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    header = f"{'shape':<12}{'repeats':>8}{'chars':>9}{'this s':>9}"
    if args.against:
        header += f"  {args.against[:7] + ' s':>9}{'old/this':>9}"
    print("CPU seconds of one explain, each in a fresh process")
    print(header)
    for shape, by_size in results.items():
        for label, by_tree in by_size.items():
            ours = by_tree["this"]
            line = f"{shape:<12}{label:>8}{ours['chars']:>9}{cell(ours['cpu'], args.timeout)}"
            if args.against:
                theirs = by_tree[args.against]["cpu"]
                ratio = (
                    f"{theirs / ours['cpu']:7.1f}x"
                    if theirs is not None and ours["cpu"]
                    else f"{'-':>8}"
                )
                line += f"  {cell(theirs, args.timeout)}{ratio}"
            print(line)


if __name__ == "__main__":
    main()
