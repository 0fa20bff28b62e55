"""``critpt-grader doctor``: what containment a candidate gets on *this* machine.

Containment depends on the host (root or not, cgroup v1 or v2, seccomp, user namespaces,
where the interpreter lives), so the doctor starts one real, fresh candidate sandbox, runs
the probe in it as an ordinary job, and turns what the probe saw from inside, plus what the
host says about itself, into one row per containment layer: ``held``, ``missing`` or
``weak``, what was seen, what it stops and the fix. One module per job:

  * :mod:`.probe`: runs *inside* the sandbox (standard library only), shipped as its own
    source text; it never changes anything that outlives its sandbox (kernel settings are
    only opened for writing and closed, never written);
  * :mod:`.host`: looks at the host (bubblewrap, setpriv, the sandbox user, cgroups, user
    namespaces, settings) and returns :class:`HostFacts`;
  * :mod:`.rules`: pure: probe readings and host facts in, :class:`Layer` rows and the
    verdict (:class:`Report`) out (:func:`assess`);
  * :mod:`.run`: starts the sandbox, runs the probe, assesses (:func:`examine`);
  * :mod:`.facts`: the plain data the others pass along.

The table and ``--json`` rendering are the command's (:mod:`critpt_grader.commands.doctor`).
This package re-exports the names callers use, so ``from critpt_grader.sandbox.doctor import
examine`` keeps working.
"""

from __future__ import annotations

from critpt_grader.sandbox.doctor.facts import SANDBOX_USER, HostFacts, Layer, Report, Status
from critpt_grader.sandbox.doctor.host import (
    CGROUP_ROOT,
    CONTAINMENT_SETTINGS,
    cgroup_mode,
    containment_settings,
    host_facts,
    publicly_runnable,
    userns_state,
)
from critpt_grader.sandbox.doctor.rules import (
    FIX_UID,
    IDENTITY_MAP,
    SCRATCH_BOUND_BYTES,
    USER_WRITABLE_PLACES,
    assess,
    host_root_inside,
    label_tokens,
    outside_uid,
)
from critpt_grader.sandbox.doctor.run import (
    PROBE,
    PROBE_ENTRYPOINT,
    Examination,
    examine,
    probe_job,
    probe_source,
)

__all__ = [
    "CGROUP_ROOT",
    "CONTAINMENT_SETTINGS",
    "FIX_UID",
    "IDENTITY_MAP",
    "PROBE",
    "PROBE_ENTRYPOINT",
    "SANDBOX_USER",
    "SCRATCH_BOUND_BYTES",
    "USER_WRITABLE_PLACES",
    "Examination",
    "HostFacts",
    "Layer",
    "Report",
    "Status",
    "assess",
    "cgroup_mode",
    "containment_settings",
    "examine",
    "host_facts",
    "host_root_inside",
    "label_tokens",
    "outside_uid",
    "probe_job",
    "probe_source",
    "publicly_runnable",
    "userns_state",
]
