"""Fuzz the REST API with hypothesis' hostile requests (tests/fuzzing.py) and count the answers.

    python bench/fuzz_api.py --examples 2000 [--seed 15] [--json]

Starts the app on the sample pack (SQLite in a temporary folder, offline provider) on a free
loopback port, sends ``--examples`` requests drawn with ``--seed``, and prints how many were sent,
the answers by status, and every request answered 5xx (there should be none). Hypothesis stops at
the first 5xx it finds and shrinks it, so a failing run reports the smallest request it found.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

from hypothesis import HealthCheck, given, seed, settings

from tests.fuzzing import LiveServer, Request, requests, send


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    statuses: collections.Counter[int] = collections.Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        live = LiveServer(Path(tmp)).start()
        try:

            @seed(args.seed)
            @settings(max_examples=args.examples, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))  # fmt: skip
            @given(request=requests(live))
            def probe(request: Request) -> None:
                status, body = send(live.port, request)
                statuses[status] += 1
                if status >= 500:
                    failures.append(f"{status} {request!r} -> {body[:200]!r}")
                    raise AssertionError(failures[-1])

            with contextlib.suppress(AssertionError):
                probe()
        finally:
            live.stop()
    report = {
        "requests": sum(statuses.values()),
        "5xx": sum(n for s, n in statuses.items() if s >= 500),
        "by_status": {str(s): n for s, n in sorted(statuses.items())},
        "first_5xx": failures[:3],
    }
    print(json.dumps(report) if args.json else json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
