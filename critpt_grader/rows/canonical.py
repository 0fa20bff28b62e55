"""A row's identity as a hash of its content: the same for the same JSON, whatever its white
space or key order. Batch input hashes and ``/verify`` request keys are both this."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """``value`` as JSON with sorted keys, compact separators and UTF-8 text."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )
    return text.encode("utf-8", "surrogatepass")


def content_hash(value: Any) -> str:
    """The SHA-256 (hex) of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
