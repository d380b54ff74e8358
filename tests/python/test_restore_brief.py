"""The brief's note on edited files: what git reports of each now, and nothing it did not check."""

from __future__ import annotations

import subprocess

from precompact.restore import brief as restore_brief


def _repository(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)

    def git(*a):
        subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    (repo / ".gitignore").write_text("*.local.cfg\n")
    for name in ("a.py", "src/b.py", "reverted.py", "gone.py", "*.py"):
        (repo / name).write_text("v1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x")
    return repo, git


def test_each_edited_file_is_said_as_git_reports_it_now(tmp_path):
    repo, git = _repository(tmp_path)
    (repo / "src" / "b.py").write_text("v2\n")
    (repo / "src" / "c.py").write_text("new\n")
    (repo / "deploy.local.cfg").write_text("secret\n")
    (repo / "reverted.py").write_text("the session's work\n")
    git("checkout", "--", "reverted.py")  # the edit is gone: unchanged, and in no commit
    (repo / "gone.py").unlink()
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x\n")
    files = [
        str(repo / "a.py"),
        str(repo / "src" / "b.py"),
        "src/c.py",
        "deploy.local.cfg",
        "reverted.py",
        "gone.py",
        "never.py",
        "nul\0.py",
        str(outside),
        str(repo / ".." / "elsewhere.py"),
    ]
    assert restore_brief.in_git(repo, files) == {
        str(repo / "a.py"): restore_brief.UNCHANGED,
        str(repo / "src" / "b.py"): restore_brief.UNCOMMITTED,
        "src/c.py": restore_brief.NOT_IN_GIT,
        "deploy.local.cfg": restore_brief.NOT_IN_GIT,
        "reverted.py": restore_brief.UNCHANGED,
        "gone.py": restore_brief.UNCOMMITTED,
        "never.py": restore_brief.NOT_ON_DISK,
        "nul\0.py": restore_brief.NOT_ON_DISK,
        str(outside): restore_brief.OUTSIDE_THE_REPOSITORY,
        str(repo / ".." / "elsewhere.py"): restore_brief.OUTSIDE_THE_REPOSITORY,
    }
    assert restore_brief.in_git(tmp_path, files) is None, "not a repository: git cannot tell"


def test_a_name_is_a_name_not_a_pattern_and_the_project_may_be_in_a_subdirectory(tmp_path):
    """`*.py` names that one file, not every file it would match; from a project in `src/`, a
    file above it is still in the work tree."""
    repo, _ = _repository(tmp_path)
    (repo / "a.py").write_text("v2\n")
    assert restore_brief.in_git(repo, ["*.py"]) == {"*.py": restore_brief.UNCHANGED}
    assert restore_brief.in_git(repo / "src", ["b.py", str(repo / "a.py"), "../a.py"]) == {
        "b.py": restore_brief.UNCHANGED,
        str(repo / "a.py"): restore_brief.UNCOMMITTED,
        "../a.py": restore_brief.UNCOMMITTED,
    }


def test_only_files_outside_the_repository_ask_git_nothing_of_them(tmp_path):
    """And a name no file can have (a NUL, a lone surrogate: a transcript's JSON may hold
    either) is no file, not a crash of the brief."""
    repo, _ = _repository(tmp_path)
    assert restore_brief.in_git(repo, ["/etc/hostname", "\0", "\ud800.py"]) == {
        "/etc/hostname": restore_brief.OUTSIDE_THE_REPOSITORY,
        "\0": restore_brief.NOT_ON_DISK,
        "\ud800.py": restore_brief.NOT_ON_DISK,
    }
