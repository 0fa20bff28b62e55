"""Benchmark: the grader's symbolic comparator against Math-Verify on one corpus.

    pip install math-verify          # for this benchmark only; not a project dependency
    python benchmarks/compare_vs_math_verify.py [--corpus benchmarks/compare_corpus.json]

The corpus holds expression pairs in the grader's grammar in three groups: ``equal`` (provably
equal under the pair's symbol assumptions), ``different``, and ``trap`` (not equal in general,
but equal at many sample points, on a real subdomain, or to a few digits). Both tools get the
same expressions. Math-Verify extracts answers from LaTeX, so it is fed each expression as
``$<latex>$`` (SymPy's LaTeX of the parsed text, prepared outside the timed region); the
grader gets ``compare_values(Symbolic(a), Symbolic(b), Policy(symbols=...))``.

Printed per group and tool: median seconds per pair, the number of "equal" verdicts, and the
number of false "equal" verdicts (any "equal" on a different or trap pair), then the ratio of
the median times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GROUPS = ("equal", "different", "trap")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "benchmarks" / "compare_corpus.json")
    parser.add_argument("--json", type=Path, help="also write per-pair results here")
    args = parser.parse_args(argv)
    try:
        import math_verify
    except ImportError:
        print(
            "math-verify is not installed; run `pip install math-verify` to benchmark against it."
        )
        return 0

    pairs = json.loads(args.corpus.read_text())["pairs"]
    ours = [_run_ours(pair) for pair in _warm(pairs)]
    theirs = [_run_math_verify(math_verify, pair) for pair in pairs]
    _print_table(pairs, ours, theirs)
    if args.json:
        rows = [
            {**pair, "ours": o, "math_verify": m}
            for pair, o, m in zip(pairs, ours, theirs, strict=True)
        ]
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def _warm(pairs: list[dict]) -> list[dict]:
    """Import and first-call costs are not per-pair costs: pay them once before timing."""
    from critpt_grader.codec.values import Symbolic
    from critpt_grader.compare import Policy, compare_values

    compare_values(Symbolic("x + 1"), Symbolic("1 + x"), Policy())
    return pairs


def _run_ours(pair: dict) -> dict:
    from critpt_grader.codec.values import Symbolic
    from critpt_grader.compare import Policy, compare_values

    policy = Policy(symbols=pair.get("symbols", {}))
    start = time.perf_counter()
    verdict = compare_values(Symbolic(pair["a"]), Symbolic(pair["b"]), policy)
    seconds = time.perf_counter() - start
    return {"verdict": verdict.status, "seconds": seconds, "reason": verdict.leaves[0].reason}


def _latex(text: str, symbols: dict) -> str:
    import sympy

    from critpt_grader.symbolic.parse import parse

    return sympy.latex(parse(text, symbols or None))


def _run_math_verify(math_verify, pair: dict) -> dict:
    symbols = pair.get("symbols", {})
    gold_text = f"${_latex(pair['a'], symbols)}$"
    target_text = f"${_latex(pair['b'], symbols)}$"
    start = time.perf_counter()
    try:
        equal = bool(
            math_verify.verify(math_verify.parse(gold_text), math_verify.parse(target_text))
        )
    except Exception as exc:  # a crash is a non-"equal" verdict for this benchmark
        equal = False
        error = f"{type(exc).__name__}: {exc}"
    else:
        error = ""
    seconds = time.perf_counter() - start
    return {"verdict": "equal" if equal else "not equal", "seconds": seconds, "error": error}


def _print_table(pairs: list[dict], ours: list[dict], theirs: list[dict]) -> None:
    header = (
        f"{'group':<10} {'pairs':>5} | {'ours: median s':>14} {'equal':>5} {'false eq':>8}"
        f" | {'math-verify: median s':>21} {'equal':>5} {'false eq':>8} | {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    all_ours, all_theirs = [], []
    for group in GROUPS:
        rows = [i for i, pair in enumerate(pairs) if pair["group"] == group]
        o_times = [ours[i]["seconds"] for i in rows]
        m_times = [theirs[i]["seconds"] for i in rows]
        all_ours += o_times
        all_theirs += m_times
        o_equal = sum(ours[i]["verdict"] == "equal" for i in rows)
        m_equal = sum(theirs[i]["verdict"] == "equal" for i in rows)
        false_o = o_equal if group != "equal" else 0
        false_m = m_equal if group != "equal" else 0
        o_median, m_median = statistics.median(o_times), statistics.median(m_times)
        print(
            f"{group:<10} {len(rows):>5} | {o_median:>14.5f} {o_equal:>5} {false_o:>8}"
            f" | {m_median:>21.5f} {m_equal:>5} {false_m:>8} | {o_median / m_median:>6.2f}"
        )
    o_all, m_all = statistics.median(all_ours), statistics.median(all_theirs)
    print("-" * len(header))
    print(
        f"{'all':<10} {len(pairs):>5} | {o_all:>14.5f} {'':>5} {'':>8} | {m_all:>21.5f}"
        f" {'':>5} {'':>8} | {o_all / m_all:>6.2f}"
    )
    print("ratio = our median / math-verify median (below 1: we are faster)")
    uncertain = sum(o["verdict"] == "uncertain" for o in ours)
    print(f"our 'uncertain' verdicts (never scored): {uncertain}")
    for pair, o, m in zip(pairs, ours, theirs, strict=True):
        if pair["group"] != "equal" and "equal" in (o["verdict"], m["verdict"]):
            who = ", ".join(
                name for name, r in (("ours", o), ("math-verify", m)) if r["verdict"] == "equal"
            )
            print(f"  false equal ({who}) [{pair['group']}]: {pair['a']}  vs  {pair['b']}")


if __name__ == "__main__":
    sys.exit(main())
