"""The brief's note on edited files: what git reports uncommitted now."""

from __future__ import annotations

import subprocess

from precompact.restore import brief as restore_brief


def test_uncommitted_names_changed_and_untracked_files_and_ignores_outsiders(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)
    git("init", "-q")
    for name in ("a.py", "src/b.py"):
        (repo / name).write_text("v1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x")
    (repo / "src" / "b.py").write_text("v2\n")
    (repo / "src" / "c.py").write_text("new\n")
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x\n")
    files = [str(repo / "a.py"), str(repo / "src" / "b.py"), "src/c.py", str(outside)]
    assert restore_brief.uncommitted(repo, files) == {str(repo / "src" / "b.py"), "src/c.py"}
    assert restore_brief.uncommitted(tmp_path, files) is None, "not a repository: git cannot tell"
