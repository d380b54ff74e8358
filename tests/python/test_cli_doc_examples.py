"""What docs/cli.md shows or promises about recall across projects and errors, checked through the
installed `precompact` as a user runs it (#48: tests/promises.toml names the doc lines)."""

from __future__ import annotations

import json

from support.commands import hook, precompact
from support.conversations import START, Conversation, save
from support.projects import new_project
from support.transcript_gen import payload


def test_the_error_document_docs_cli_shows_is_what_a_command_prints_outside_a_project(tmp_path):
    """docs/cli.md: "An error (exit 1 or 2) is, with `--json`, this document on stdout", with the
    example of a command run where there is no `.precompact.toml`."""
    outside = tmp_path / "me" / "project"
    outside.mkdir(parents=True)
    done = precompact(outside, "status", "--json")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout) == {
        "error": f"no .precompact.toml in {outside} or its parents; run `precompact init` in your project",
        "exit_code": 1,
    }


def test_a_brief_never_holds_what_another_project_said(tmp_path):
    """docs/cli.md, the MCP tools: "nothing from another project goes into a brief", though recall
    across projects finds it on this machine."""
    alpha = new_project(tmp_path, "alpha", git_layer=False, chain_layer=False)
    beta = new_project(tmp_path, "beta", git_layer=False, chain_layer=False)
    for project, request in ((alpha, "Tune the alpha scheduler."), (beta, "Rewrite the beta marmoset importer.")):
        conversation = Conversation(tmp_path / f"{project.path.name}.jsonl", f"s-{project.path.name}", START)
        conversation.turn_with(request, "make test", "1 failed", "The test still fails.")
        save(project, conversation)
    everywhere = precompact(alpha.path, "recall", "marmoset", "--everywhere")
    assert everywhere.returncode == 0 and "beta marmoset importer" in everywhere.stdout, everywhere.stdout

    started = hook(payload("SessionStart", alpha.path, source="resume"), cwd=alpha.path)
    assert started.returncode == 0, started.stderr
    brief = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Tune the alpha scheduler." in brief, brief
    assert "marmoset" not in brief and str(beta.path) not in brief, brief
