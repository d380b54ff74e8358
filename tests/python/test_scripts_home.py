"""Every script of scripts/ runs precompact under throwaway user roots, never the user's: a
benchmark's `init` would write keys and approvals into ~/.config, and each of its projects into
the user's registry (~/.local/share/precompact/registry.json, local/registry.py), where
`projects` and `recall --everywhere` then list them. Each script calls `throwaway_home.use()` first
thing in its `__main__` block (as the suite's conftest gives each test its own roots), so a new
script cannot forget."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
# Scripts that run no precompact of their own: the helper itself, and the pytest plugin the
# solana-py suite loads (it runs inside that suite, which precompact's code never enters).
RUN_NOTHING = {"throwaway_home.py", "solana_py_suite_plugin.py"}


def main_block_starts_with_use(tree: ast.Module) -> bool:
    """Whether the module's `if __name__ == "__main__":` block begins with `throwaway_home.use()`."""
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and node.test.left.id == "__name__"
        ):
            first = node.body[0]
            return (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Call)
                and ast.unparse(first.value.func) == "throwaway_home.use"
            )
    return False


def test_every_script_uses_throwaway_user_roots():
    scripts = sorted(p for p in SCRIPTS.glob("*.py") if p.name not in RUN_NOTHING)
    assert len(scripts) > 30
    forgot = [p.name for p in scripts if not main_block_starts_with_use(ast.parse(p.read_text()))]
    assert forgot == [], f"call throwaway_home.use() first in the __main__ block of: {forgot}"


def test_the_rule_sees_a_script_that_forgets_or_calls_it_late():
    forgets = ast.parse('def main():\n    pass\n\nif __name__ == "__main__":\n    main()\n')
    late = ast.parse('if __name__ == "__main__":\n    main()\n    throwaway_home.use()\n')
    first = ast.parse('if __name__ == "__main__":\n    throwaway_home.use()\n    main()\n')
    assert not main_block_starts_with_use(forgets) and not main_block_starts_with_use(late)
    assert main_block_starts_with_use(first)


def test_use_points_the_roots_away_from_the_users_and_removes_them_at_exit(tmp_path):
    """In a child, as a script runs: the roots (and the registry precompact would write) are under a
    new temporary directory, gone when the script ends."""
    code = (
        "import sys, os; sys.path.insert(0, sys.argv[1]); import throwaway_home; base = throwaway_home.use();"
        "from precompact.local import registry;"
        "print(base); print(registry.registry_path());"
        "print(*(os.environ[n] for n in throwaway_home.ROOTS))"
    )
    real = {
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "XDG_STATE_HOME": str(tmp_path / "s"),
        "XDG_DATA_HOME": str(tmp_path / "d"),
    }
    done = subprocess.run(
        [sys.executable, "-c", code, str(SCRIPTS)],
        env={**os.environ, **real},
        capture_output=True,
        text=True,
        check=True,
    )
    base, registry_path, roots = done.stdout.splitlines()
    assert Path(registry_path).is_relative_to(base)
    assert all(Path(root).is_relative_to(base) for root in roots.split())
    assert not Path(base).exists()
    assert not any((tmp_path / name).exists() for name in ("c", "s", "d"))
