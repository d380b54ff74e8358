"""Promises README.md and docs/ make that no other test checked (#48, tests/promises.toml names
each doc line these check), through the installed command as a user runs it."""

from __future__ import annotations

from support.commands import precompact
from support.projects import new_project


def test_a_value_not_of_the_form_it_takes_exits_2_naming_the_form(tmp_path):
    """docs/cli.md's exit-code table: 2 for "a value not of the form it takes (`show abc`,
    `--at yesterday`, `--since yesterday`)", not 1, with one line naming the form."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    for args, says in [
        (("show", "abc"), "'abc' is not an entry reference; give SAVEPOINT:ENTRY"),
        (("resurrect", "--at", "yesterday"), "--at 'yesterday' is not an ISO 8601 time"),
        (("uncompact", "--at", "yesterday"), "--at 'yesterday' is not an ISO 8601 time"),
        (("recall", "x", "--since", "yesterday"), "'yesterday' is not an ISO 8601 time"),
    ]:
        result = precompact(project.path, *args)
        assert result.returncode == 2, (args, result.stdout + result.stderr)
        assert result.stderr.count("\n") == 1 and says in result.stderr, (args, result.stderr)
