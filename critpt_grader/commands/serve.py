"""``critpt-grader serve``: the NeMo Gym resources server (:mod:`critpt_grader.server`).

Loads the task sets (``--tasks``) and opens the journal (``--journal``) before it listens, so a
malformed set or an unwritable folder stops it with a one-line reason (exit 2). It serves until
interrupted (SIGINT/SIGTERM: rows in flight finish, then the sandboxes are released).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from critpt_grader.commands import common
from critpt_grader.commands.common import add_sandbox_flags, add_tasks_option, task_paths

# The server's own settings flags, besides the shared sandbox flags.
_SERVER_SETTINGS = (
    "server_max_in_flight",
    "server_max_queue",
    "server_max_body_bytes",
    "server_reveal",
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the resources server (NeMo Gym /verify)",
        description="Serve POST /verify, /seed_session, /aggregate_metrics and GET "
        "/reverify_mode, /healthz, /metrics. Rows carry their task, or only a problem_id "
        "of a set loaded with --tasks.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    add_tasks_option(parser, "for rows that carry only a problem_id", default=[])
    parser.add_argument(
        "--journal",
        type=Path,
        metavar="DIR",
        help="journal every accepted row (SQLite) in DIR; re-grade with critpt-grader reverify",
    )
    group = parser.add_argument_group("server limits")
    group.add_argument("--max-in-flight", dest="server_max_in_flight", type=int)
    group.add_argument("--max-queue", dest="server_max_queue", type=int)
    group.add_argument("--max-body-bytes", dest="server_max_body_bytes", type=int)
    group.add_argument(
        "--reveal",
        dest="server_reveal",
        choices=("verdict", "rules", "full"),
        help="what a client sees of a verdict: 'rules' (default: per leaf its status and the "
        "rule, no expected value), 'verdict' (reward and category only) or 'full' (every "
        "expected value: for a trusted training loop)",
    )
    parser.add_argument("--log-level", default="info", help="uvicorn log level")
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


def settings_from(args: argparse.Namespace):
    return common.settings_from(args, *_SERVER_SETTINGS)


def run(args: argparse.Namespace) -> int:
    from critpt_grader.errors import InputError

    try:
        import uvicorn

        from critpt_grader.server import create_app
    except ModuleNotFoundError as exc:
        raise InputError(
            f"the server needs the 'server' extra ({exc.name} is missing): "
            "pip install 'critpt-grader[server]'"
        ) from None

    settings = settings_from(args)
    app = create_app(settings, task_paths=task_paths(args), journal_dir=args.journal)
    service = app.state.service
    print(
        f"critpt-grader serve: http://{args.host}:{args.port} backend={settings.backend} "
        f"tasks={len(service.tasks)} journal={service.journal.path if service.journal else '-'}",
        flush=True,
    )
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        timeout_graceful_shutdown=30,
        # The peer address is the fairness key of a client: a header must not choose it.
        proxy_headers=False,
    )
    return 0
