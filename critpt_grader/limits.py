"""What one job may use: the limits a sandbox enforces, in one frozen record.

A base module: the settings (:mod:`critpt_grader.settings`) read their defaults from here and
the sandbox seam (:mod:`critpt_grader.sandbox.base`) carries a :class:`Limits` in every job, so
neither has to import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """What one job may use. These defaults are the only ones: ``Settings`` reads its
    defaults from here, so a job built without settings gets what the operator's would."""

    wall_seconds: float = 120.0  # whole job, including interpreter start
    case_seconds: float = 30.0  # one call of the entry point
    memory_mb: int = 1536  # address space per process
    output_bytes: int = 1 << 20  # result channel and each captured stream
    source_bytes: int = 262_144
    max_processes: int = 32
    max_open_files: int = 64
    max_file_bytes: int = 16 << 20
