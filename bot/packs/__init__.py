"""Packs: folders of YAML and Markdown that make one deployment's agent.

``load_pack`` validates every file against its schema and the files against each other, and raises
:class:`bot.errors.PackErrors` listing each problem with its file, line and field.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import jsonschema

from bot.errors import PackError, PackErrors
from bot.flows.load import cross_check, load_flows
from bot.flows.texts import localise
from bot.heads import content_version
from bot.packs import context, data, schema
from bot.packs.model import (
    DEFAULT_GATES,
    Document,
    FaqEntry,
    HelpDesk,
    Intent,
    OutcomeRule,
    Pack,
    Product,
    ScopeRule,
    Slot,
)
from bot.packs.sanitise import sanitise
from bot.packs.sections import sections, slug
from bot.yamlines import MAX_CHARS, YamlSyntaxError, line_for, load_with_lines

__all__ = ["Pack", "load_pack"]


class _Loaded:
    """One pack file's data and line map, for errors that point back into it."""

    def __init__(self, name: str, data: Any, lines: dict[Any, int]) -> None:
        self.name, self.data, self.lines = name, data, lines

    def error(self, path: tuple[Any, ...], message: str) -> PackError:
        return PackError(self.name, line_for(self.lines, path), _dotted(path), message)


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _read_yaml(root: Path, name: str, schema_: dict[str, Any], errors: list[PackError]) -> _Loaded:
    label = f"{root.name}/{name}"
    try:
        data, lines = load_with_lines((root / name).read_text(encoding="utf-8"))
    except YamlSyntaxError as exc:
        errors.append(PackError(label, exc.line, "", exc.message))
        return _Loaded(label, None, {})
    except UnicodeDecodeError:
        errors.append(PackError(label, None, "", "not UTF-8 text"))
        return _Loaded(label, None, {})
    loaded = _Loaded(label, data, lines)
    validator = jsonschema.Draft202012Validator(schema_)
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        errors.append(loaded.error(_error_path(err), _explain(err)))
    return loaded


def _properties(err: jsonschema.ValidationError) -> dict[str, Any]:
    schema_ = err.schema
    return dict(schema_.get("properties", {})) if isinstance(schema_, dict) else {}


def _error_path(err: jsonschema.ValidationError) -> tuple[Any, ...]:
    """Where to point: for an unknown key, the key itself rather than the object holding it."""
    path = tuple(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = _properties(err)
        extra = [k for k in err.instance if k not in allowed]
        if extra:
            return (*path, str(extra[0]))
    return path


def _explain(err: jsonschema.ValidationError) -> str:
    if err.validator == "additionalProperties":
        allowed = ", ".join(_properties(err))
        return f"{err.message} (check the spelling; allowed: {allowed})"
    if err.validator == "required":
        return err.message.replace("is a required property", "is required")
    return err.message


def _headings(body: str) -> set[str]:
    """Each section heading of a document, as written and as its key part (how ``asked`` names
    one)."""
    return {h for heading, _ in sections(body) if heading for h in (heading, slug(heading))}


def _read_document(root: Path, path: Path, errors: list[PackError]) -> Document | None:
    label = f"{root.name}/{path.relative_to(root)}"
    text = path.read_text(encoding="utf-8")
    if len(text) > MAX_CHARS:  # as for YAML files: a pack is untrusted input
        errors.append(PackError(label, None, "", f"file is over {MAX_CHARS:,} characters"))
        return None
    if not text.startswith("---\n"):
        errors.append(
            PackError(
                label, 1, "", "a knowledge document starts with '---' front matter (key, title)"
            )
        )
        return None
    end = text.find("\n---", 4)
    if end < 0:
        errors.append(PackError(label, 1, "", "front matter has no closing '---'"))
        return None
    try:
        meta, lines = load_with_lines(text[4:end])
    except YamlSyntaxError as exc:
        errors.append(PackError(label, (exc.line or 0) + 1, "", exc.message))
        return None
    loaded = _Loaded(label, meta, {k: v + 1 for k, v in lines.items()})
    for err in jsonschema.Draft202012Validator(schema.DOC_FRONT_MATTER).iter_errors(meta):
        errors.append(loaded.error(_error_path(err), _explain(err)))
    if not isinstance(meta, dict) or (errors and errors[-1].file == label):
        return None
    body = sanitise(text[end + 4 :].lstrip("\n"))
    asked = {str(k): list(v) for k, v in meta.get("asked", {}).items()}
    headings = _headings(body)
    unknown = sorted(set(asked) - headings)
    if unknown:
        known = ", ".join(sorted(headings)) or "none"
        names = ", ".join(map(repr, unknown))
        errors.append(loaded.error(("asked",), f"no section {names} (sections: {known})"))
        return None
    return Document(meta["key"], meta["title"], body, label, meta.get("tags", []), asked)


def _content_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def load_pack(path: str | Path) -> Pack:
    root = Path(path)
    if not root.is_dir():
        raise PackErrors([PackError(str(root), None, "", "no such pack folder")])
    errors: list[PackError] = []
    files: dict[str, _Loaded] = {}
    for name, (schema_, required) in schema.FILES.items():
        if (root / name).is_file():
            files[name] = _read_yaml(root, name, schema_, errors)
        elif required:
            errors.append(PackError(f"{root.name}/{name}", None, "", "required file is missing"))
    documents = []
    if (root / "docs").is_dir():
        for doc_path in sorted((root / "docs").glob("*.md")):
            doc = _read_document(root, doc_path, errors)
            if doc is not None:
                documents.append(doc)
    if errors:
        raise PackErrors(errors)
    pack = _build(root, files, documents)
    _cross_check(pack, files, errors)
    _load_flows(pack, errors)
    if errors:
        raise PackErrors(errors)
    return pack


def _load_flows(pack: Pack, errors: list[PackError]) -> None:
    """``flows/*.yaml`` and ``roles.yaml``, which bot.flows validates."""
    try:
        pack.flows, pack.roles, pack.mods = load_flows(pack.root)
    except PackErrors as exc:
        errors.extend(exc.errors)
        return
    errors.extend(
        cross_check(pack.flows, {i.name for i in pack.intents}, {s.name for s in pack.slots})
    )
    errors.extend(localise(pack.flows, pack.language, {pack.language, *pack.templates}))


def _data(files: dict[str, _Loaded], name: str) -> dict[str, Any]:
    return files[name].data if name in files and isinstance(files[name].data, dict) else {}


def _build(root: Path, files: dict[str, _Loaded], documents: list[Document]) -> Pack:
    meta, play = _data(files, "pack.yaml"), _data(files, "playbook.yaml")
    scope = meta["scope"]
    return Pack(
        root=root,
        name=meta["name"],
        company=meta["company"],
        version=_content_hash(root),
        language=meta.get("language", "en"),
        description=meta.get("description", ""),
        products=[Product(**p) for p in meta["products"]],
        topics=[ScopeRule(**t) for t in scope.get("topics", [])],
        out_of_scope=[ScopeRule(**t) for t in scope.get("out_of_scope", [])],
        excluded_names=meta.get("excluded_names", []),
        booking=meta.get("booking", {"enabled": False, "contact": ""}),
        heads=meta.get("heads", {}),
        intents=[Intent(**i) for i in _data(files, "intents.yaml")["intents"]],
        default_move=play["default_move"],
        signup_cooldown_turns=play.get("signup_cooldown_turns", 3),
        low_sentiment=play.get("low_sentiment", -0.3),
        move_examples=play.get("move_examples", {}),
        slots=[Slot(**s) for s in play.get("slots", [])],
        outcomes=[OutcomeRule(**o) for o in play.get("outcomes", [])],
        templates=play["templates"],
        gates={**DEFAULT_GATES, **_data(files, "gates.yaml")},
        faq=[_faq_entry(f) for f in _data(files, "faq.yaml").get("faq", [])],
        documents=documents,
        helpdesks=[HelpDesk(**h) for h in _data(files, "helpdesks.yaml").get("helpdesks", [])],
        preflight=meta.get("preflight", {}),
        offers=meta.get("offers", []),
        context=context.page_hints(_data(files, "context.yaml")),
        data=data.data_spec(_data(files, "data.yaml")) if "data.yaml" in files else None,
    )


def _faq_entry(raw: dict[str, Any]) -> FaqEntry:
    """An FAQ entry whose answer is data like a document's: sanitised (bot.packs.sanitise)."""
    return FaqEntry(**{**raw, "answer": sanitise(raw["answer"])})


def _check_heads(pack: Pack, meta: _Loaded, errors: list[PackError]) -> None:
    """A pinned head must be there, byte for byte the version the pack names."""
    for name, pin in pack.heads.items():
        where = ("heads", name)
        pairs = [("path", "version")]
        if "candidate" in pin or "candidate_version" in pin:  # a shadow head is pinned too
            pairs.append(("candidate", "candidate_version"))
        for path_key, version_key in pairs:
            if path_key not in pin or version_key not in pin:
                errors.append(meta.error(where, f"{path_key} needs {version_key} and back"))
                continue
            folder = pack.root / pin[path_key]
            if not (folder / "config.json").is_file():
                errors.append(meta.error((*where, path_key), f"no trained head at {pin[path_key]}"))
                continue
            actual = content_version(folder, name)
            if actual != pin[version_key]:
                errors.append(
                    meta.error(
                        (*where, version_key),
                        f"pins {pin[version_key]} but the files are {actual}: retrain with "
                        f"`gatebot heads train --pack` or update the pin",
                    )
                )


def _cross_check(pack: Pack, files: dict[str, _Loaded], errors: list[PackError]) -> None:
    """What no single file's schema can see: names that must resolve across files."""
    intents, play = files["intents.yaml"], files["playbook.yaml"]
    _check_heads(pack, files["pack.yaml"], errors)
    slots = {s.name for s in pack.slots}
    intent_names = _check_intents(pack, intents, slots, errors)
    _check_outcomes_and_slots(pack, play, intent_names, slots, errors)
    _check_templates(pack, play, errors)
    _check_keys_and_desks(pack, files, errors)
    if "context.yaml" in files:
        errors.extend(context.check(pack, files["context.yaml"].error))
    if "data.yaml" in files:
        errors.extend(data.check(pack, files["data.yaml"].data, files["data.yaml"].error))


def _check_intents(
    pack: Pack, intents: _Loaded, slots: set[str], errors: list[PackError]
) -> list[str]:
    """Each intent declared once, needing only declared slots. Returns the intents' names."""
    intent_names = [i.name for i in pack.intents]
    for i, intent in enumerate(pack.intents):
        if intent_names.index(intent.name) != i:
            errors.append(
                intents.error(("intents", i, "name"), f"intent {intent.name!r} is declared twice")
            )
        for j, need in enumerate(intent.needs):
            if need not in slots:
                errors.append(
                    intents.error(
                        ("intents", i, "needs", j),
                        f"unknown slot {need!r}; declare it under slots in playbook.yaml",
                    )
                )
    return intent_names


def _check_outcomes_and_slots(
    pack: Pack, play: _Loaded, intent_names: list[str], slots: set[str], errors: list[PackError]
) -> None:
    """Outcome rules name declared intents and slots; a slot's alternative is a slot."""
    for i, rule in enumerate(pack.outcomes):
        for j, name in enumerate(rule.when_intent):
            if name not in intent_names:
                errors.append(
                    play.error(("outcomes", i, "when_intent", j), f"unknown intent {name!r}")
                )
        for j, need in enumerate(rule.needs):
            if need not in slots:
                errors.append(play.error(("outcomes", i, "needs", j), f"unknown slot {need!r}"))
    for i, slot in enumerate(pack.slots):
        if slot.alternative and slot.alternative not in slots:
            errors.append(
                play.error(("slots", i, "alternative"), f"unknown slot {slot.alternative!r}")
            )


def _check_templates(pack: Pack, play: _Loaded, errors: list[PackError]) -> None:
    """The pack language's required templates exist, and every placeholder is one we fill."""
    if pack.language not in pack.templates:
        errors.append(
            play.error(("templates",), f"no templates for the pack language {pack.language!r}")
        )
    else:
        for name in schema.REQUIRED_TEMPLATES:
            if name not in pack.templates[pack.language]:
                errors.append(
                    play.error(("templates", pack.language), f"template {name!r} is required")
                )
    for lang, templates in pack.templates.items():
        for name, text in templates.items():
            try:
                text.format(
                    company="",
                    slot="",
                    question="",
                    options="",
                    contact="",
                    topic="",
                    label="",
                    value="",
                    hours="",  # handoff_hours: the waiting desk's hours (bot.turn.waiting)
                    # email_code_*: a one-time code by email (bot.flows.steps.emailcode)
                    digits="",
                    left="",
                    code="",
                    minutes="",
                    product="",
                    # flow_change_*: a repeat step's change, said back (bot.flows.steps.repeat)
                    count="",
                    item="",
                    total="",
                )
            except (KeyError, IndexError, ValueError) as exc:
                errors.append(play.error(("templates", lang, name), f"bad placeholder {exc}"))


def _check_keys_and_desks(pack: Pack, files: dict[str, _Loaded], errors: list[PackError]) -> None:
    """Knowledge keys unique; help desks that pre-flight names exist; one default desk at most."""
    keys = [f.key for f in pack.faq] + [d.key for d in pack.documents]
    for key in {k for k in keys if keys.count(k) > 1}:
        errors.append(
            PackError(
                f"{pack.root.name}",
                None,
                key,
                f"knowledge key {key!r} is used twice (faq and docs keys must be unique)",
            )
        )
    keywords = {k for p in pack.products for k in p.keywords}
    for n, rule in enumerate(pack.out_of_scope):
        for word in rule.despite_product_words:
            where = ("scope", "out_of_scope", n, "despite_product_words")
            if word not in keywords:
                errors.append(files["pack.yaml"].error(where, f"no product's keyword: {word!r}"))
            elif not rule.despite_topics:
                errors.append(files["pack.yaml"].error(where, "needs despite_topics: true"))
    desks = {h.name for h in pack.helpdesks}
    for name in pack.preflight.get("helpdesks", {}):
        if name not in desks:
            errors.append(
                files["pack.yaml"].error(
                    ("preflight", "helpdesks", name), f"unknown help desk {name!r}"
                )
            )
    if "helpdesks.yaml" in files and sum(h.default for h in pack.helpdesks) > 1:
        errors.append(
            files["helpdesks.yaml"].error(
                ("helpdesks",), "at most one help desk can be the default"
            )
        )
