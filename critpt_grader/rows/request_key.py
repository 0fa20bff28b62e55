"""A ``/verify`` request's key: the client's ``Idempotency-Key`` exactly as sent, else
``sha256:`` and the SHA-256 of the canonical body
(:func:`~critpt_grader.rows.canonical.content_hash`: the same JSON whatever its white space
or key order)."""

from __future__ import annotations

from critpt_grader.rows.rejected import RowRejected

# A client's Idempotency-Key: printable ASCII, at most this long (a UUID is 36).
KEY_LIMIT = 200


def request_key(body_hash: str, given: str | None = None) -> str:
    """The client's key exactly as sent when it gave one, else ``sha256:`` and ``body_hash``
    (the body's content hash)."""
    if given:
        return given
    return "sha256:" + body_hash


def checked_key(given: str | None) -> str | None:
    """A client's ``Idempotency-Key``, or None when it sent none; refused (422) when it is
    not printable ASCII of at most :data:`KEY_LIMIT` characters."""
    if given is None or given == "":
        return None
    if len(given) > KEY_LIMIT or not all(" " < char <= "~" for char in given):
        raise RowRejected(
            422,
            "request_invalid",
            f"the Idempotency-Key must be 1 to {KEY_LIMIT} printable ASCII characters "
            "without spaces",
            field="Idempotency-Key",
        )
    return given
