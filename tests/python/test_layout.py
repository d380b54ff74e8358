"""The package layout is the architecture: each package imports only the packages below it, and
no module imports itself back through others. Every import counts, at the top of a module, inside
a function or under TYPE_CHECKING: a late import, or a type named for annotations, is still a
dependency."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "client" / "precompact"

BASE = {"boundary"}
# The modules under every package, which import nothing of precompact's.
EVERYWHERE = ("errors", "records")
SETTINGS = BASE | {"config"}
LAYER_BASE = SETTINGS | {"transcript"}
LAYERS = {"local", "remote", "chain"}
# What each package may import besides itself. Layer 1 (local) knows neither of the others;
# Layer 2 (remote) reads Layer 1's index and snapshots, which it backs up; Layer 3 (chain) only
# encodes, sends and decodes the record of values it is given (ops.anchoring reads Layer 1 and
# posts), so it imports no layer. Layers 2 and 3 never import each other. Nothing but an edge imports an edge; `api` is the facade.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),  # the one error family, which everything may raise
    "records": set(),  # classes of named fields (dataclasses without their import cost), which anything may define
    "boundary": set(),
    "config": BASE,
    "transcript": SETTINGS,
    "local": LAYER_BASE,
    "remote": LAYER_BASE | {"local"},
    "chain": LAYER_BASE,
    "verifier": LAYER_BASE | LAYERS,
    "recall": LAYER_BASE | LAYERS | {"verifier"},
    "restore": LAYER_BASE | LAYERS | {"verifier", "recall"},
    "proof": LAYER_BASE | LAYERS | {"verifier"},
    "ops": LAYER_BASE | LAYERS | {"verifier", "recall", "restore", "proof"},
    "api": LAYER_BASE | LAYERS | {"verifier", "recall", "restore", "proof", "ops"},
    "viewer": LAYER_BASE | LAYERS | {"verifier", "recall", "restore", "proof", "ops", "api"},
    "edges": LAYER_BASE | LAYERS | {"verifier", "recall", "restore", "proof", "ops", "api", "viewer"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The precompact modules `path` imports, resolved to modules (not names inside them)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("precompact")}
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("precompact")
            and node.level == 0
        ):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in modules else node.module)
    return found - {"precompact"}


def package_of(module: str) -> str:
    return module.split(".")[1] if "." in module else "precompact"


def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in SOURCE.rglob("*.py")}
    return {name: imported_modules(path, set(paths)) for name, path in paths.items()}


def test_every_package_is_known_to_the_rules():
    packages = {package_of(m) for m in graph()} - {"precompact"}
    assert packages <= set(ALLOWED), f"new package(s) {packages - set(ALLOWED)}: give them a floor in ALLOWED"


def against_the_layout(edges: dict[str, set[str]]) -> list[str]:
    """Each import `module -> imported` of a package ALLOWED does not let it import."""
    wrong = []
    for module, imports in edges.items():
        own = package_of(module)
        for imported in imports:
            other = package_of(imported)
            if other not in (own, "precompact", *EVERYWHERE) and other not in ALLOWED.get(own, set()):
                wrong.append(f"{module} -> {imported}")
    return sorted(wrong)


def test_packages_import_only_downwards():
    wrong = against_the_layout(graph())
    assert not wrong, "imports against the layout:\n" + "\n".join(wrong)


def test_the_layout_rule_sees_an_import_against_it():
    """Upwards, sideways between Layers 2 and 3, and from Layer 3 into Layer 1 are reported;
    an import downwards is not."""
    sample = {
        "precompact.local.snapshot": {"precompact.verifier.verdicts", "precompact.boundary.logs_dir"},
        "precompact.remote.gitstore": {"precompact.chain.rpc", "precompact.local.chunks"},
        "precompact.chain.wire": {"precompact.local.savepoint_log", "precompact.config.settings"},
    }
    assert against_the_layout(sample) == [
        "precompact.chain.wire -> precompact.local.savepoint_log",
        "precompact.local.snapshot -> precompact.verifier.verdicts",
        "precompact.remote.gitstore -> precompact.chain.rpc",
    ]


def test_no_import_circle():
    edges = graph()
    circles, state = [], dict.fromkeys(edges, 0)  # 0 unseen, 1 on the current path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for imported in sorted(edges[module] & set(edges)):
            if state[imported] == 1:
                circles.append(" -> ".join([*path[path.index(imported) :], imported]))
            elif state[imported] == 0:
                visit(imported, [*path, imported])
        state[module] = 2

    for module in sorted(edges):
        if state[module] == 0:
            visit(module, [module])
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_package_faces_hold_no_code_so_the_hooks_imports_stay_light():
    heavy = [p for p in SOURCE.rglob("__init__.py") if p.parent != SOURCE and _code(p)]
    assert not heavy, f"package __init__.py with code (a docstring is all it may hold): {heavy}"


def test_every_package_says_what_it_owns():
    silent = [
        p.parent.name
        for p in SOURCE.rglob("__init__.py")
        if p.parent != SOURCE and not ast.get_docstring(ast.parse(p.read_text()))
    ]
    assert not silent, f"packages without a docstring saying what they own and may import: {silent}"


def _code(path: Path) -> list[ast.stmt]:
    body = ast.parse(path.read_text()).body
    return body[1:] if ast.get_docstring(ast.parse(path.read_text())) else body
