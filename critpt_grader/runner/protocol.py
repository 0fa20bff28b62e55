"""The runner's two wire protocols, shared by the host and the runner (stdlib only).

Host → runner (stdin): ``<length>\\n<job JSON of that many bytes><nonce>\\n``. The runner reads
exactly the job and leaves the nonce in the pipe until it writes its result, so a child it
forks never holds the nonce in memory (it closes fd 0 before any candidate code runs).

Runner → host (stdout): one line ``CRITPT-RESULT <nonce> <JSON>``. The host accepts only a
frame with its own nonce and within its size bound; anything else is "no result".

Child → parent (private pipe): messages framed as a 4-byte big-endian length and a JSON body.

Every JSON text that crosses a channel from the sandbox is hostile: it is parsed under the
nesting limits of :mod:`critpt_grader.jsonlimits` before anything recurses over it. A report
nested too deep is the current case's ``encode_error`` (``depth_limit``); a framed result nested
too deep is no result; a case value nested deeper than the wire allows is an ``encode_error``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import struct
from typing import Any

from critpt_grader.jsonlimits import (
    BODY_NESTING,
    FRAME_NESTING,
    MAX_JSON_NESTING,
    TooDeep,
    loads_bounded,
    nesting_exceeds,
)

FRAME_TAG = b"CRITPT-RESULT"
MESSAGE_HEADER = struct.Struct(">I")
_NONCE_PATTERN = re.compile(r"[0-9a-f]{32}")
_MAX_HEADER_BYTES = 20
# ``not_run``: the supervisor stopped a candidate at an earlier decisive case (never a child's).
CASE_KINDS = frozenset(
    {"value", "exception", "timeout", "memory", "encode_error", "crashed", "not_run"}
)
MESSAGE_CHARS = 2000  # exception messages and details are cut here
_BUILTIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_MAX_MRO_NAMES = 64


class ProtocolError(Exception):
    """Input on a runner channel is malformed or over its bound."""


class InputClosed(ProtocolError):
    """The host closed the job channel before sending another job."""


def new_nonce() -> str:
    return secrets.token_hex(16)


def encode_job_input(job: dict[str, Any], nonce: str, cases_json: str | None = None) -> bytes:
    """The framed job: its length, its compact ASCII JSON, then the nonce. ``cases_json``:
    the ``cases`` already encoded the same way (built once per task), spliced in as is."""
    if cases_json is None:
        text = json.dumps(job, separators=(",", ":"), ensure_ascii=True)
    else:
        rest = {key: value for key, value in job.items() if key != "cases"}
        text = json.dumps(rest, separators=(",", ":"), ensure_ascii=True)
        text = text[:-1] + ("," if rest else "") + '"cases":' + cases_json + "}"
    body = text.encode("ascii")
    return b"%d\n" % len(body) + body + nonce.encode("ascii") + b"\n"


def read_exactly(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ProtocolError(f"input ended {remaining} bytes early")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_job(fd: int, max_bytes: int) -> dict[str, Any]:
    """Read the length-prefixed job from ``fd`` without reading past it (the nonce stays)."""
    return parse_job(read_job_bytes(fd, max_bytes))


def read_job_bytes(fd: int, max_bytes: int) -> bytes:
    """The length-prefixed job's JSON text, read from ``fd`` without reading past it."""
    header = b""
    while not header.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte and not header:
            raise InputClosed("no job")
        if not byte or len(header) > _MAX_HEADER_BYTES:
            raise ProtocolError("missing job length header")
        header += byte
    try:
        size = int(header)
    except ValueError:
        raise ProtocolError("job length header is not a number") from None
    if not 0 < size <= max_bytes:
        raise ProtocolError(f"job of {size} bytes is outside (0, {max_bytes}]")
    return read_exactly(fd, size)


def parse_job(text: bytes) -> dict[str, Any]:
    try:
        job = loads_bounded(text, BODY_NESTING)
    except ValueError as exc:
        raise ProtocolError(f"job is not JSON: {exc}") from None
    if not isinstance(job, dict):
        raise ProtocolError("job is not a JSON object")
    return job


def read_nonce(fd: int) -> str:
    nonce = read_exactly(fd, 33).decode("ascii", "replace")
    if not nonce.endswith("\n") or not _NONCE_PATTERN.fullmatch(nonce[:-1]):
        raise ProtocolError("malformed nonce")
    return nonce[:-1]


IDLE_TAG = b"CRITPT-IDLE"  # a warm sandbox's init: "the last job is over, all clean"
NPROC_VARIABLE = "CRITPT_NPROC_LIMIT"  # host → runner: the RLIMIT_NPROC to set, or "none"
# host → runner: "1": never run a job as uid or gid 0 (a provider may run commands as root).
UNPRIVILEGED_VARIABLE = "CRITPT_GRADER_UNPRIVILEGED"


def format_frame(nonce: str, payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return FRAME_TAG + b" " + nonce.encode("ascii") + b" " + body + b"\n"


def find_frame(stdout: bytes, nonce: str) -> dict[str, Any] | None:
    """The payload of the last line framed with ``nonce``, or None when there is none."""
    prefix = FRAME_TAG + b" " + nonce.encode("ascii") + b" "
    for line in reversed(stdout.splitlines()):
        if line.startswith(prefix):
            try:
                payload = loads_bounded(line[len(prefix) :], FRAME_NESTING)
            except ValueError:  # TooDeep included: a frame nested too deep is no result
                return None
            return payload if isinstance(payload, dict) else None
    return None


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact ASCII JSON: the measure every output bound uses."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=True))


def pack_message(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return MESSAGE_HEADER.pack(len(body)) + body


TOO_DEEP = "too_deep"  # the type MessageReader gives a message nested past FRAME_NESTING


class MessageReader:
    """Reassembles length-prefixed messages from chunks; refuses one over ``max_bytes``. A
    message nested too deep becomes ``{"t": "too_deep"}`` (the stream stays in step)."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._buffer += chunk
        messages: list[dict[str, Any]] = []
        while len(self._buffer) >= MESSAGE_HEADER.size:
            (size,) = MESSAGE_HEADER.unpack_from(self._buffer)
            if size > self._max_bytes:
                raise ProtocolError(f"message of {size} bytes exceeds {self._max_bytes}")
            end = MESSAGE_HEADER.size + size
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[MESSAGE_HEADER.size : end])
            del self._buffer[:end]
            try:
                message = loads_bounded(body, FRAME_NESTING)
            except TooDeep:
                message = {"t": TOO_DEEP}
            except ValueError:
                raise ProtocolError("message is not JSON") from None
            if not isinstance(message, dict):
                raise ProtocolError("message is not a JSON object")
            messages.append(message)
        return messages


def validated_outcome(raw: Any) -> dict[str, Any]:
    """A case outcome from the child, checked field by field (the child is untrusted)."""
    if not isinstance(raw, dict) or raw.get("kind") not in CASE_KINDS:
        raise ProtocolError("case outcome without a known kind")
    outcome: dict[str, Any] = {"kind": raw["kind"]}
    value = raw.get("value")
    if (value is None) != (raw["kind"] != "value") or not isinstance(value, dict | None):
        raise ProtocolError("case outcome value does not match its kind")
    if value is not None and nesting_exceeds(value, MAX_JSON_NESTING):
        return too_deep_outcome(raw.get("seconds"))
    if value is not None:
        outcome["value"] = value
    for key in ("error_type", "message", "error_module", "error_qualname"):
        text = raw.get(key)
        if text is not None:
            if not isinstance(text, str):
                raise ProtocolError(f"case outcome {key} is not text")
            outcome[key] = text[:MESSAGE_CHARS]
    # What a raised exception's class is (runner.program.describe_raised). Absent fields
    # read as "not a genuine builtin": a raise that says nothing about its class never passes.
    builtin = raw.get("error_builtin", False)
    if not isinstance(builtin, bool):
        raise ProtocolError("case outcome error_builtin is not a boolean")
    bases = raw.get("error_builtin_mro", [])
    if (
        not isinstance(bases, list)
        or len(bases) > _MAX_MRO_NAMES
        or not all(isinstance(name, str) and _BUILTIN_NAME.fullmatch(name) for name in bases)
    ):
        raise ProtocolError("case outcome error_builtin_mro is not a list of class names")
    if builtin or bases:
        outcome["error_builtin"] = builtin
        outcome["error_builtin_mro"] = list(bases)
    seconds = raw.get("seconds", 0.0)
    outcome["seconds"] = float(seconds) if isinstance(seconds, int | float) else 0.0
    return outcome


def too_deep_outcome(seconds: Any = 0.0) -> dict[str, Any]:
    """A case whose report or value nests deeper than the wire allows: the program's fault."""
    return {
        "kind": "encode_error",
        "error_type": "depth_limit",
        "message": f"the value is nested deeper than {MAX_JSON_NESTING} JSON brackets",
        "seconds": float(seconds) if isinstance(seconds, int | float) else 0.0,
    }
