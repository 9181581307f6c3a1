"""Packs are untrusted input (issue 15): one validation path for `gatebot check` and the app's
start, endpoint paths that climb refused, and YAML loaded within bounds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot import yamlines
from bot.app import App
from bot.cli import cli
from bot.config import Settings
from bot.errors import PackErrors
from bot.packs import load_pack
from bot.yamlines import YamlSyntaxError, load_with_lines
from tests.conftest import ACME

BOMB = "".join(
    f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)
BOMB = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB


@pytest.fixture
def pack_copy(tmp_path: Path) -> Path:
    target = tmp_path / "acme"
    shutil.copytree(ACME, target)
    return target


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def refusals(pack: Path, settings: Settings) -> tuple[str, str]:
    """What `gatebot check` says about ``pack``, and what the app's start raises."""
    checked = CliRunner().invoke(cli, ["check", str(pack)])
    assert checked.exit_code == 1, checked.output
    settings.pack = pack
    with pytest.raises(PackErrors) as started:
        App(settings)
    return checked.stderr, str(started.value)


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            "base_url: http://127.0.0.1:8080/demo-api",
            "base_url: http://user:secret@127.0.0.1:8080/demo-api",
            "a base URL is scheme://host[:port][/path], no more",
        ),
        (
            "base_url: http://127.0.0.1:8080/demo-api",
            "base_url: http://127.0.0.1:8080/demo-api?key=1",
            "a base URL is scheme://host[:port][/path], no more",
        ),
        (
            "path: /orders/{order_id}\n",
            "path: /../../admin/{order_id}\n",
            "climbs",
        ),
        (
            "base_url: http://127.0.0.1:8080/demo-api",
            "base_url: http://127.0.0.1:8080/demo-api/../admin",
            "climbs",
        ),
        ("value: email, schema", "value: mail, schema", "'mail' is not a slot of the playbook"),
    ],
)
def test_what_the_start_refuses_check_refuses_with_the_same_message(
    pack_copy: Path, settings: Settings, old: str, new: str, said: str
) -> None:
    edit(pack_copy / "apis.yaml", old, new)
    checked, started = refusals(pack_copy, settings)
    assert said in started
    for line in started.splitlines():
        assert f"error: {line}" in checked


def test_an_endpoint_path_is_normalised(pack_copy: Path) -> None:
    from gatebot_catalog.spec import load_catalog

    edit(pack_copy / "apis.yaml", "path: /orders/{order_id}\n", "path: //orders//{order_id}/\n")
    catalog = load_catalog(pack_copy)
    assert catalog is not None
    assert catalog.apis["orders"].endpoints["lookup_order"].path == "/orders/{order_id}"


def test_an_alias_bomb_in_faq_fails_at_once_saying_so(pack_copy: Path, settings: Settings) -> None:
    (pack_copy / "faq.yaml").write_text(BOMB + (pack_copy / "faq.yaml").read_text())
    checked, started = refusals(pack_copy, settings)
    assert "faq.yaml:" in started and "more than 50 aliases" in started
    assert "more than 50 aliases" in checked


def test_aliases_within_the_limit_still_load() -> None:
    data, _ = load_with_lines("base: &b {x: 1}\nfirst: *b\nsecond: *b\n")
    assert data == {"base": {"x": 1}, "first": {"x": 1}, "second": {"x": 1}}


def test_a_few_aliases_that_expand_too_far_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlines, "MAX_ALIASES", 1000)
    with pytest.raises(YamlSyntaxError, match="values once aliases are expanded"):
        load_with_lines(BOMB)


def test_a_file_over_the_size_limit_is_refused(pack_copy: Path) -> None:
    (pack_copy / "faq.yaml").write_text("# " + "x" * yamlines.MAX_CHARS + "\nfaq: []\n")
    with pytest.raises(PackErrors, match="the limit is 2,000,000"):
        load_pack(pack_copy)


def test_nesting_deeper_than_the_parser_follows_is_an_error_not_a_crash(pack_copy: Path) -> None:
    (pack_copy / "gates.yaml").write_text("a: " + "[" * 50000 + "]" * 50000 + "\n")
    with pytest.raises(PackErrors, match="nested too deeply"):
        load_pack(pack_copy)
