"""One error family, rendered once per edge: every failure a user can cause is a PrecompactError,
which the CLI turns into one line and exit 1 in one place and the MCP server into one tool error."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "client" / "precompact"
# Exceptions that never reach an edge: each is caught inside the module that raises it (the
# verifier's Broken, Unreached and Unrooted, by the callers that turn them into verdicts); and
# records.py's FrozenRecordError, dataclasses' FrozenInstanceError: precompact's own code
# assigning to a frozen record, a bug no input can cause; recall's _Unusable (a text index
# refused or unopenable), which fulltext.py turns into a rebuild or a RecallError naming one.
# Caught inside; boundary's (TooDeep, RepeatedKey, small_file's Refused, session_file's
# NotASessionFile: each reader turns it into its own family error naming the fix, or reads it as
# nothing) import nothing of precompact, so derive from OSError/ValueError; git_exclude's
# NotAppendable, an OSError too, becomes `init`'s warning naming the exclude file. opencode's NoSession
# (and its Sidechain) is the LookupError its reader raises for a session that is no session of the
# user's: every caller of opencode.read (transcript/agents.py) turns it into the reader's
# FileNotFoundError.
INTERNAL = {
    "Broken",
    "FrozenRecordError",
    "LineTooLong",  # an OSError: every reader reports it as a session file it cannot read
    "NoSession",
    "NotAppendable",
    "NotASessionFile",
    "Refused",
    "RepeatedKey",
    "Sidechain",
    "TooDeep",
    "Unreached",
    "Unreadable",
    "Unrooted",
    "_Unusable",
}


def exception_classes() -> dict[str, list[str]]:
    """Every exception class the client defines -> its bases, as written."""
    found = {}
    for path in CLIENT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                ast.unparse(b).endswith(("Error", "Exception", "Timeout", "Root", "Us", "Unopened", "Undecryptable"))
                for b in node.bases
            ):
                found[node.name] = [ast.unparse(b).split(".")[-1] for b in node.bases]
    return found


def test_every_exception_a_user_can_meet_is_in_the_family():
    classes = exception_classes()

    def in_family(name: str, seen: frozenset = frozenset()) -> bool:
        bases = classes.get(name, [])
        return "PrecompactError" in bases or any(
            b in classes and b not in seen and in_family(b, seen | {name}) for b in bases
        )

    outside = sorted(
        name for name in classes if name not in INTERNAL and name != "PrecompactError" and not in_family(name)
    )
    assert not outside, (
        f"exceptions outside the family (derive them from PrecompactError, or catch them inside): {outside}"
    )


def test_the_cli_renders_the_family_in_one_place():
    tree = ast.parse((CLIENT / "edges" / "cli.py").read_text())
    renders = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler)
        and node.type is not None
        and "PrecompactError" not in ast.unparse(node.type)
        and any(ast.unparse(s) == "raise click.ClickException(str(e)) from None" for s in node.body)
    ]
    assert not renders, f"cli.py re-renders a family member itself at lines {renders}: let _Commands.invoke do it"


def test_a_family_error_is_one_line_and_exit_1(tmp_path):
    (tmp_path / ".precompact.toml").write_text('instance = "x"\n[layers]\ngit = "yes"\n')
    precompact = str(Path(sys.executable).with_name("precompact"))
    done = subprocess.run([precompact, "status"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: "), done.stderr
    assert "Traceback" not in done.stderr
