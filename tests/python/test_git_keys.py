"""Every configuration key the git on this machine knows is classified for the commands
precompact runs in a project's repository (issue 39): a list of what is forbidden always misses
one, so `boundary/git_env.CLASSIFIED` lists what is allowed, and a git that knows a key it does
not list fails here until someone decides what that key can do."""

from __future__ import annotations

import subprocess

from precompact.boundary import git_env


def known_keys() -> list[str]:
    listed = subprocess.run(["git", "help", "--config"], capture_output=True, text=True, check=True).stdout
    # The last line is "'git help config' for more information"; a key has no space but `<...>`.
    keys = [line for line in listed.splitlines() if "." in line and " " not in line.replace("<vimdiff variant>", "")]
    assert len(keys) > 500, listed[:500]
    return keys


def test_every_key_git_knows_is_classified():
    unclassified = [key for key in known_keys() if git_env.classification(key) is None]
    assert unclassified == [], f"classify these in git_env.CLASSIFIED: {unclassified}"


def test_every_key_classified_as_neutralised_is_set_or_unused():
    claimed = [key for key in known_keys() if (git_env.classification(key) or ("",))[0] == git_env.NEUTRALISED]
    assert "core.hookspath" in [k.lower() for k in claimed] and len(claimed) > 20
    assert [key for key in claimed if not git_env.neutralises(key)] == []


def test_a_key_git_does_not_know_yet_is_unclassified():
    """The table has no catch-all: a section git adds tomorrow is not harmless by default."""
    assert git_env.classification("newsection.runprogram") is None
    assert git_env.classification("filter.lfs.clean")[0] == git_env.NEUTRALISED
    assert git_env.classification("http.cookieFile")[0] == git_env.NOT_READ
