"""Each module has one direction of knowledge: no import cycles, and the packages depend one way,
engine <- protocol <- server | client (the client imports the server only in its launchers).

The graph is read from the source (every ``import`` anywhere in a module, those inside
functions and under ``TYPE_CHECKING`` included: a cycle hidden in a function is still two
modules that know each other), so a new cycle or a wrong-way import fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "protocol", "server", "client")
#: What each package may import besides itself.
MAY_IMPORT = {
    "engine": set(),
    "protocol": {"engine"},
    "server": {"engine", "protocol"},
    "client": {"engine", "protocol"},
}
#: The client modules that start a server of their own (``tongits play``, ``tongits export``,
#: the arena's loopback server for ``cmd:`` bots).
LAUNCHERS = {"tongits.client.tui.launch", "tongits.client.cli", "tongits.client.arena.host"}


def source_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT / package).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(("tongits", package, *parts))] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the four packages it imports."""
    modules = source_modules()

    def known(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {known(a.name) for a in node.names if a.name.startswith("tongits.")}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{parent}.{base}" if base else parent
                if base.startswith("tongits."):
                    for alias in node.names:
                        sub = f"{base}.{alias.name}"
                        targets.add(sub if sub in modules else known(base))
        graph[name] = targets - {name}
    return graph


def _pop_through(stack: list[str], v: str) -> set[str]:
    """Pop ``stack`` down to ``v`` (included): one strongly connected component."""
    component = set()
    while True:
        w = stack.pop()
        component.add(w)
        if w == v:
            return component


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = _pop_through(stack, v)
            if len(component) > 1:
                out.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_new_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_packages_depend_one_way() -> None:
    wrong = []
    for module, targets in import_graph().items():
        package = module.split(".")[1]
        for target in targets:
            other = target.split(".")[1]
            allowed = other == package or other in MAY_IMPORT[package]
            if other == "server" and module in LAUNCHERS:
                allowed = True
            if not allowed:
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_the_graph_sees_every_kind_of_import() -> None:
    """The reader resolves relative, absolute and in-function imports (else the tests above
    could pass on a graph with no edges)."""
    graph = import_graph()
    assert "tongits.engine.cards" in graph["tongits.engine.hand"]  # from .cards import
    assert "tongits.engine.policies" in graph["tongits.engine.advice"]  # from .policies import
    assert "tongits.engine" in graph["tongits.server.table.bots"]  # from tongits.engine import
    assert "tongits.server.app" in graph["tongits.client.tui.launch"]  # inside a function


#: What each folder of the server may import of the rest of the server besides itself (its
#: ``__init__`` says why); the modules at the server's top join the folders and may import any.
SERVER_FOLDERS_MAY_IMPORT = {
    "net": {"config", "errors", "pace", "table.requests"},
    "table": {"config", "errors", "lobby", "names", "net.peer", "pace", "storage", "threads"},
    "storage": {"net.peer", "table.entries", "table.table"},
    "ladder": {"config", "lobby", "names", "net.peer", "routes", "table", "threads"},
}


def test_each_server_folder_imports_what_its_docstring_says() -> None:
    wrong = []
    for module, targets in import_graph().items():
        parts = module.split(".")
        if parts[:2] != ["tongits", "server"] or len(parts) < 4:
            continue
        folder = parts[2]
        allowed = SERVER_FOLDERS_MAY_IMPORT[folder]
        for target in targets:
            rest = target.split(".")[2:] if target.startswith("tongits.server.") else None
            if rest is None or rest[0] == folder:
                continue
            name = ".".join(rest)
            if not any(name == a or name.startswith(f"{a}.") for a in allowed):
                wrong.append(f"{module} imports {target}")
    assert wrong == []
    assert set(SERVER_FOLDERS_MAY_IMPORT) == {
        p.name for p in (ROOT / "server").iterdir() if (p / "__init__.py").exists()
    }
