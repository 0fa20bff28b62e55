"""A candidate that grades itself with what an earlier job left in its memory.

It reads every readable mapping of its own process (``ctypes.string_at`` over
``/proc/self/maps``; ``/proc/self/mem`` would do the same), looks for a case report another
job's run left there (``"kind":"value","value":{"format":"critpt-value-v1",...``) and, when it
finds one, writes it as its own report on its report pipe and leaves: a runner that forked it
from a process holding earlier jobs' results would then score it without its computing
anything. A test appends ``CASES = <the task's case count>`` and ``<entry point> = steal``.
"""

import ctypes
import json
import os
import re
import struct

CASES = 1
_REPORT = re.compile(rb'\{"kind":"value","value":\{"format":"critpt-value-v1","value":')


def _readable_regions():
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(part, 16) for part in fields[0].split("-"))
            path = fields[5] if len(fields) > 5 else ""
            if fields[1].startswith("r") and path in ("", "[heap]") and end - start < 1 << 30:
                yield start, end


def _stolen_outcomes():
    found = []
    for start, end in _readable_regions():
        try:
            memory = ctypes.string_at(start, end - start)
        except Exception:
            continue
        for match in _REPORT.finditer(memory):
            try:
                text = memory[match.start() : match.start() + (1 << 20)].decode("ascii", "replace")
                outcome, _ = json.JSONDecoder().raw_decode(text)
            except ValueError:
                continue
            found.append(outcome)
    return found


def _report_fd():
    for name in os.listdir("/proc/self/fd"):
        try:
            if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
                return int(name)
        except OSError:  # the descriptor listdir itself used
            continue
    return None


def steal(*args):
    outcomes = _stolen_outcomes()
    fd = _report_fd()
    if outcomes and fd is not None:
        for index in range(CASES):
            report = {"t": "case", "i": index, "outcome": outcomes[-1], "symbols": {}}
            body = json.dumps(report, separators=(",", ":")).encode()
            os.write(fd, struct.pack(">I", len(body)) + body)
        os._exit(0)
    return None
