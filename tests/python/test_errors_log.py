"""logs/precompact-errors.log holds one line per error (#48): when, which event, what failed,
redacted; an unexpected error's traceback goes to logs/precompact-debug.log, which the line
names. (The hook's failures, each logged while it exits 0, are tests/python/test_hook.py's and
test_hook_audience.py's.)"""

from __future__ import annotations

from precompact.boundary import quoting, terminal
from precompact.errors import PrecompactError
from precompact.ops import compaction
from support.commands import hook
from support.projects import new_project, trust

TRACEBACK_NOTE = " (traceback in logs/precompact-debug.log)"


def test_an_unexpected_error_is_one_line_and_its_traceback_goes_to_the_debug_log(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    try:
        {}["api_key=sk-ant-api03-" + "A" * 90]
    except KeyError as e:
        assert compaction.log_failure(project.path, "PostCompact", compaction.failure_reason(e))
    [line] = (project.logs / compaction.ERRORS_LOG).read_text().splitlines()
    assert line.endswith(" PostCompact: KeyError('api_key=[REDACTED:anthropic_key]')" + TRACEBACK_NOTE), line
    debug = (project.logs / compaction.DEBUG_LOG).read_text()
    assert debug.startswith(line.removesuffix(TRACEBACK_NOTE) + "\nTraceback (most recent call last):\n")
    assert "sk-ant-api03" not in debug


def test_an_error_that_explains_itself_is_one_line_and_no_traceback(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    for number in (1, 2):
        try:
            raise PrecompactError(f"the transcript cannot be read:\n  line {number} is not JSON\n")
        except PrecompactError as e:
            assert compaction.log_failure(project.path, "PreCompact", compaction.failure_reason(e))
    lines = (project.logs / compaction.ERRORS_LOG).read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "[before any savepoint] PreCompact: the transcript cannot be read: | line 1 is not JSON",
        "[before any savepoint] PreCompact: the transcript cannot be read: | line 2 is not JSON",
    ]
    assert not (project.logs / compaction.DEBUG_LOG).exists()


# A folder's or a transcript's name may hold what a terminal acts on (ESC starts a sequence, CR
# overwrites the line, U+009B is a CSI on its own) and what breaks a line (LF, U+2028).
TERMINAL_WORDS = "evil\x1b[31mX\rY\nZ\u2028W\x9b2J"


def test_a_path_a_terminal_would_act_on_reaches_the_errors_log_quoted_and_inert(tmp_path):
    """The errors log is read in a terminal (`tail`, `cat`): a repository folder and a transcript
    path named so each stay in their one line, quoted, with nothing a terminal acts on."""
    made = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    (tmp_path / TERMINAL_WORDS).mkdir()
    root = tmp_path / TERMINAL_WORDS / "project"
    made.path.rename(root)
    trust(root)
    saves = root / "logs" / "precompact-saves"
    saves.mkdir(parents=True, exist_ok=True)
    saves.rename(root / "logs" / "elsewhere")
    saves.symlink_to(root / "logs" / "elsewhere")  # Layer 1 refuses it, naming its path
    transcript = tmp_path / f"t{TERMINAL_WORDS}.jsonl"
    for given in (transcript, tmp_path / "transcript.jsonl"):
        given.write_text('{"type": "user", "message": {"role": "user", "content": "hello"}}\n')
        event = {"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""}
        done = hook({**event, "session_id": "s", "transcript_path": str(given), "cwd": str(root)}, cwd=root)
        assert done.returncode == 0, done.stderr
    missing = tmp_path / f"gone{TERMINAL_WORDS}.jsonl"
    event = {"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""}
    hook({**event, "session_id": "s", "transcript_path": str(missing), "cwd": str(root)}, cwd=root)

    lines = (root / "logs" / compaction.ERRORS_LOG).read_text().split("\n")[:-1]
    assert len(lines) == 3, lines
    for line in lines:
        assert terminal.sanitise(line) == line and line.isprintable(), line
    assert all(quoting.inline(str(saves)) in line for line in lines[:2]), lines
    assert quoting.inline(str(missing)) in lines[2], lines
