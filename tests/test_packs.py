"""Pack loading: the sample pack is valid; each kind of mistake is named by file, line and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import cli
from bot.errors import PackErrors
from bot.packs import load_pack
from tests.conftest import ACME


@pytest.fixture
def pack_copy(tmp_path: Path) -> Path:
    target = tmp_path / "acme"
    shutil.copytree(ACME, target)
    return target


def errors_of(path: Path) -> list[str]:
    with pytest.raises(PackErrors) as info:
        load_pack(path)
    return [str(e) for e in info.value.errors]


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_sample_pack_loads() -> None:
    pack = load_pack(ACME)
    assert pack.name == "acme" and pack.company == "Acme Cloud"
    assert {i.name for i in pack.intents} >= {"greeting", "human", "demo"}
    assert pack.faq and pack.documents and pack.helpdesks
    assert pack.gates["intent"] == 0.9 and pack.gates["yesNo"] == 0.6
    assert len(pack.version) == 12


def test_version_is_a_content_hash(pack_copy: Path) -> None:
    before = load_pack(pack_copy).version
    replace(pack_copy / "faq.yaml", "14-day", "30-day")
    assert load_pack(pack_copy).version != before


def test_misspelled_field_names_file_line_and_field(pack_copy: Path) -> None:
    replace(
        pack_copy / "intents.yaml",
        "    examples:\n      - hello there",
        "    exmaples:\n      - hello there",
    )
    line = line_of(pack_copy / "intents.yaml", "exmaples")
    errors = errors_of(pack_copy)
    assert any(
        e.startswith(f"acme/intents.yaml:{line} [intents[0].exmaples]: ")
        and "check the spelling" in e
        for e in errors
    ), errors


def test_wrong_type_points_at_the_line(pack_copy: Path) -> None:
    replace(pack_copy / "gates.yaml", "intent: 0.9", "intent: high")
    errors = errors_of(pack_copy)
    line = line_of(pack_copy / "gates.yaml", "intent: high")
    assert errors == [f"acme/gates.yaml:{line} [intent]: 'high' is not of type 'number'"]


def test_yaml_syntax_error_has_a_line(pack_copy: Path) -> None:
    (pack_copy / "faq.yaml").write_text("faq:\n  - key: a\n    question: [unclosed\n")
    errors = errors_of(pack_copy)
    assert (
        len(errors) == 1 and errors[0].startswith("acme/faq.yaml:") and "invalid YAML" in errors[0]
    )


def test_missing_required_file(pack_copy: Path) -> None:
    (pack_copy / "playbook.yaml").unlink()
    assert errors_of(pack_copy) == ["acme/playbook.yaml: required file is missing"]


def test_unknown_slot_across_files(pack_copy: Path) -> None:
    replace(pack_copy / "intents.yaml", "needs: [use_case]", "needs: [usecase]")
    errors = errors_of(pack_copy)
    line = line_of(pack_copy / "intents.yaml", "needs: [usecase]")
    assert any(
        f"intents.yaml:{line} [intents[4].needs[0]]: unknown slot 'usecase'" in e for e in errors
    ), errors


def test_missing_template_and_bad_placeholder(pack_copy: Path) -> None:
    replace(pack_copy / "playbook.yaml", "    stop: Understood", "    stopp: Understood")
    replace(pack_copy / "playbook.yaml", "{company} assistant", "{compnay} assistant")
    errors = " | ".join(errors_of(pack_copy))
    assert "template 'stop' is required" in errors
    assert "templates.en.greeting" in errors and "bad placeholder" in errors


def test_document_without_front_matter(pack_copy: Path) -> None:
    (pack_copy / "docs" / "extra.md").write_text("Just text.\n")
    assert errors_of(pack_copy) == [
        "acme/docs/extra.md:1: a knowledge document starts with '---' front matter (key, title)"
    ]


def test_document_front_matter_field_error_has_file_line(pack_copy: Path) -> None:
    (pack_copy / "docs" / "extra.md").write_text("---\nkey: Bad Key\ntitle: T\n---\nBody\n")
    errors = errors_of(pack_copy)
    assert len(errors) == 1 and errors[0].startswith("acme/docs/extra.md:2 [key]:"), errors


def test_duplicate_knowledge_keys(pack_copy: Path) -> None:
    (pack_copy / "docs" / "extra.md").write_text("---\nkey: faq-trial\ntitle: T\n---\nBody\n")
    assert any("faq-trial" in e and "used twice" in e for e in errors_of(pack_copy))


def test_check_command_reports_errors_without_traceback(pack_copy: Path) -> None:
    # In process: test_cli runs the console script itself, so this one checks only the command.
    replace(pack_copy / "gates.yaml", "intent: 0.9", "intent: 2")
    result = CliRunner().invoke(cli, ["check", str(pack_copy)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "gates.yaml:" in result.stderr and "[intent]" in result.stderr
    assert "Traceback" not in result.output
    as_json = CliRunner().invoke(cli, ["check", str(pack_copy), "--json"])
    assert as_json.exit_code == 1
    report = json.loads(as_json.stdout)
    assert report["ok"] is False and any(e["field"] == "intent" for e in report["errors"])
    ok = CliRunner().invoke(cli, ["check", str(ACME)])
    assert ok.exit_code == 0 and ok.stdout.startswith("ok: pack acme")
    assert json.loads(CliRunner().invoke(cli, ["check", str(ACME), "--json"]).stdout)["ok"]


def test_missing_pack_folder(tmp_path: Path) -> None:
    assert errors_of(tmp_path / "nope")[0].endswith("no such pack folder")
