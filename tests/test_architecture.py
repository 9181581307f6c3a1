"""The code's shape, checked: no import cycle of any kind in bot/ or a first-party plugin, no
function over 60 lines, a typed record and state in the turn's stages, and the public names
plugins import still importable from where they used to live."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Migrations are frozen history: they stay exactly as they ran.
FROZEN = {ROOT / "bot" / "store" / "migrations.py"}
MAX_LINES = 60


def _sources() -> dict[str, Path]:
    """Every module of bot/ and plugins/, by dotted name."""
    out = {}
    for base, top in ((ROOT, ROOT / "bot"), (ROOT / "plugins", ROOT / "plugins")):
        for path in sorted(top.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imported(module: str, path: Path) -> set[str]:
    """Every name an import statement anywhere in the file brings in: at the top, under
    TYPE_CHECKING and inside functions alike."""
    names: set[str] = set()
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = [*package[: len(package) - node.level + 1], node.module or ""]
                stem = ".".join(p for p in base if p)
            else:
                stem = node.module or ""
            names.add(stem)
            names.update(f"{stem}.{a.name}" for a in node.names)
    return names


def _graph() -> dict[str, set[str]]:
    """module -> the modules it imports. Importing a.b.c runs a and a.b too (packages)."""
    mods = _sources()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for module, path in mods.items():
        for name in _imported(module, path):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target in mods and target != module and not module.startswith(target + "."):
                    graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_bot_or_any_plugin() -> None:
    graph = _graph()
    assert "bot.turn.agent" in graph and "gatebot_web" in graph  # it read the tree
    assert _cycles(graph) == []


def test_bot_imports_no_plugin() -> None:
    graph = _graph()
    plugins = {m for m in graph if m.startswith("gatebot_")}
    leaks = {m: graph[m] & plugins for m in graph if m.startswith("bot") and graph[m] & plugins}
    assert leaks == {}


def test_no_function_over_60_lines() -> None:
    long = []
    for path in _sources().values():
        if path in FROZEN:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})")
    assert long == []


def test_the_turn_stages_type_the_record_and_the_state() -> None:
    """No ``dict[str, Any]`` for a record or a state in bot/turn: they are TypedDicts."""
    loose = []
    for path in sorted((ROOT / "bot" / "turn").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            pairs: list[tuple[str, ast.expr | None]] = []
            if isinstance(node, ast.arg):
                pairs.append((node.arg, node.annotation))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                pairs.append((node.target.id, node.annotation))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
                pairs.append((node.target.attr, node.annotation))
            for name, annotation in pairs:
                if annotation is None or not name.endswith(("state", "record")):
                    continue
                if "dict[str, Any]" in ast.unparse(annotation):
                    loose.append(f"{path.name}:{getattr(node, 'lineno', '?')} {name}")
    assert loose == []


#: Names plugins import, at the paths they imported them from before bot/ was grouped.
OLD_PATHS = {
    "bot.channels": ("bot.extend.channel", ["ChannelAdapter"]),
    "bot.providers": ("bot.extend.provider", ["ModelProvider", "Prompt", "Response", "ToolCall"]),
    "bot.tools": ("bot.extend.tool", ["Tool", "ToolRunner", "ToolRegistry", "ToolError"]),
    "bot.knowledge": ("bot.extend.retriever", ["Retriever", "Fact"]),
    "bot.email": ("bot.extend.email", ["EmailTransport", "EmailNotConfigured"]),
    "bot.recorders": ("bot.extend.recorder", ["Recorder", "MemoryRecorder"]),
    "bot.playbook": ("bot.turn.decide", ["Decision", "decide"]),
    "bot.replygate": ("bot.turn.replygate", ["check"]),
    "bot.agent": ("bot.turn.agent", ["Agent", "TurnResult"]),
    "bot.acting": ("bot.turn.act", ["Acted", "Actor"]),
}


def test_old_import_paths_give_the_same_objects() -> None:
    for old, (new, names) in OLD_PATHS.items():
        before, now = importlib.import_module(old), importlib.import_module(new)
        for name in names:
            assert getattr(before, name) is getattr(now, name), f"{old}.{name}"


def test_bot_extend_exports_every_extension_base() -> None:
    import bot.extend as extend

    for name in extend.__all__:
        assert getattr(extend, name) is not None
    for base in ("ChannelAdapter", "ModelProvider", "Tool", "Retriever", "EmailTransport"):
        assert base in extend.__all__
    assert "Recorder" in extend.__all__
