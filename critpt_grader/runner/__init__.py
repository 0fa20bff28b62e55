"""The program that runs inside a sandbox: ``python -m critpt_grader.runner``.

It reads one job from stdin (:mod:`~critpt_grader.runner.protocol`), runs it
(:mod:`~critpt_grader.runner.job`) under the supervision described in
:mod:`~critpt_grader.runner.supervisor`, the program itself running in a
:mod:`~critpt_grader.runner.child` that the :mod:`~critpt_grader.runner.zygote` forks, and
writes one nonce-framed result to stdout. With ``--serve`` it is a warm sandbox's init
(:mod:`~critpt_grader.runner.warm`) and does that job after job.

**Job isolation, the invariant.** No job's process can read what another job computed:
every job process is forked by the zygote, which was itself forked before the first job and
never holds job data (the job reaches the child in a sealed memfd; reports and results go to
the supervisor, PID 1, which never forks a job process). A reference job and a candidate job
never run in the same sandbox. PID 1 and the zygote ignore every signal a job can send them
(:mod:`~critpt_grader.runner.signals`), and every byte a job sends back is parsed under the
size and nesting limits of :mod:`critpt_grader.jsonlimits` before anything recurses over it.

**No channel between jobs, the invariant.** No job can leave a note a later job reads:
every process the zygote starts gets a world of its own (:mod:`~critpt_grader.runner.world`):
new PID, mount, IPC and network namespaces, fresh tmpfs on ``/tmp`` (``$HOME``, the working
folder) and ``/dev/shm``, a ``/proc`` of its own that shows its own processes only, no
capabilities and the job's seccomp filter (:mod:`~critpt_grader.runner.seccomp`, which
also refuses pidfds). So its pids, inode and device numbers, IPC ids, descriptor numbers,
``/proc`` and loopback counters do not depend on what ran before. A warm sandbox serves jobs
only with worlds. Out of scope: timing and load (noisy), and the counters the kernel keeps
for the whole host, which no namespace separates (inode numbers of memfds and shared
memory, of pipes and sockets): those need a kernel per job.

:mod:`~critpt_grader.runner.program` holds the logic shared with the in-process backend:
loading, entry point resolution, inputs, outcomes. Only the standard library, numpy, sympy,
mpmath and the package's codec and symbolic parser are imported inside the sandbox.
"""
