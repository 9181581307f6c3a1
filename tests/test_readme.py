"""The README matches the product: its tables list every command the CLI has and every
environment variable the code reads, and the citation keys it shows exist in the sample pack."""

from __future__ import annotations

import re
from pathlib import Path

import click
import yaml

from bot.cli import cli
from bot.extend.retriever import pack_passages
from bot.packs import load_pack
from bot.packs.sections import numbered_aliases
from bot.plugins import load_plugins

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
ACME = ROOT / "knowledge" / "acme"

#: How the code reads a variable: os.environ.get("X"), environ["X"], env.get("X"), getenv("X"),
#: and the settings module's _int("X", ...) and _flag("X").
_READS = re.compile(
    r"""(?:environ\.get|environ\[|env\.get|\benv|getenv|_int|_flag)\(?\s*["']([A-Z][A-Z0-9_]+)["']"""
)


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows[1:]  # without the header


def variables_read() -> set[str]:
    names: set[str] = set()
    for folder in ("bot", "plugins"):
        for path in (ROOT / folder).rglob("*.py"):
            names |= set(_READS.findall(path.read_text(encoding="utf-8")))
    catalog = yaml.safe_load((ACME / "apis.yaml").read_text())
    for api in catalog["apis"]:
        names |= {api.get("base_url_env"), (api.get("auth") or {}).get("env")} - {None}
    return names


def test_the_configuration_table_lists_every_variable_the_code_reads() -> None:
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", section("Configuration")))
    read = variables_read()
    assert {"DATABASE_URL", "REDIS_URL", "GATEBOT_ADMIN_TOKEN", "ACME_ORDERS_URL"} <= read
    assert read - documented == set(), "add these to the README's Configuration table"


def cli_paths() -> set[str]:
    load_plugins().hook.register_commands(cli=cli)
    paths: set[str] = set()

    def walk(group: click.Group, prefix: str) -> None:
        for name, command in group.commands.items():
            paths.add(prefix + name)
            if isinstance(command, click.Group):
                walk(command, prefix + name + " ")

    walk(cli, "")
    return paths


def documented_paths() -> set[str]:
    """``gatebot flows list\\|show [...]`` documents ``flows``, ``flows list``, ``flows show``."""
    paths: set[str] = set()
    for row in table_rows(section("Commands")):
        cell = row[0].strip("`")
        if not cell.startswith("gatebot "):
            continue
        words = cell.split()[1:]
        paths.add(words[0])
        if len(words) > 1 and re.fullmatch(r"[a-z]+(\\\|[a-z]+)*", words[1]):
            paths |= {f"{words[0]} {sub}" for sub in words[1].split("\\|")}
    return paths


def test_the_commands_table_lists_every_command_and_no_other() -> None:
    assert {"catalog", "preflight", "flows", "flows import"} <= cli_paths()
    assert cli_paths() == documented_paths()


def test_the_readme_cites_keys_the_sample_pack_has() -> None:
    pack = load_pack(ACME)
    keys = {f.key for f in pack_passages(pack)} | {d.key for d in pack.documents}
    old = {k for d in pack.documents for k in numbered_aliases(d.key, d.text)}
    cited = set(re.findall(r"\b((?:doc|faq)-[a-z0-9-]+(?:#[a-z0-9-]+)?)", README))
    ours = {k for k in cited if k.split("#")[0] in keys}
    assert "doc-monitor#alerts" in ours
    assert ours - keys - old == set()


def test_troubleshooting_covers_every_part_doctor_checks() -> None:
    import inspect

    from bot.cli import doctor

    source = inspect.getsource(doctor)
    parts = set(re.findall(r'\(\s*"([a-z ]+)",\s*"(?:ok|warn|fail)"', source))
    parts |= set(re.findall(r'return \(\s*"([a-z ]+)",', source))
    assert {"pack", "database", "redis", "embedding model"} <= parts
    rows = " ".join(row[0] for row in table_rows(section("Troubleshooting")))
    assert {p for p in parts if p not in rows} == set()
