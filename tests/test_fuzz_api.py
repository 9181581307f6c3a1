"""A property-based fuzz test of the REST API (issue 15): whatever a stranger sends, the answer is
never a 5xx. Hypothesis draws the requests (tests/fuzzing.py) with a fixed seed and a bounded
count, so a run is the same run every time; a request that finds a 500 is a bug, and gets a test
of its own in tests/test_hostile_requests.py. ``bench/fuzz_api.py`` sends more."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from tests.fuzzing import LiveServer, Request, requests, send

#: Requests per run: enough to reach every route with every kind of hostile input.
EXAMPLES = 300


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(Path(tmp_path_factory.mktemp("fuzz"))).start()
    try:
        yield server
    finally:
        server.stop()


def test_no_request_gets_a_5xx(live: LiveServer) -> None:
    seen: list[tuple[Request, int]] = []

    @seed(15)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests(live))
    def no_5xx(request: Request) -> None:
        status, body = send(live.port, request)
        seen.append((request, status))
        assert status < 500, (request, body[:200])

    no_5xx()
    assert len(seen) >= EXAMPLES // 2
    statuses = {status for _, status in seen}
    # The fuzz reached past the front door: refusals of each kind, and real answers.
    assert {400, 401, 404} <= statuses and statuses & {200, 201}


def test_the_server_still_answers_after_the_fuzz(live: LiveServer) -> None:
    status, _ = send(live.port, Request("GET", "/healthz"))
    assert status == 200
