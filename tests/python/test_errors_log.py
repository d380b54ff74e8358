"""logs/precompact-errors.log holds one line per error (#48): when, which event, what failed,
redacted; an unexpected error's traceback goes to logs/precompact-debug.log, which the line
names. (The hook's failures, each logged while it exits 0, are tests/python/test_hook.py's and
test_hook_audience.py's.)"""

from __future__ import annotations

from precompact.errors import PrecompactError
from precompact.ops import compaction
from support.projects import new_project

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
        "PreCompact: the transcript cannot be read: | line 1 is not JSON",
        "PreCompact: the transcript cannot be read: | line 2 is not JSON",
    ]
    assert not (project.logs / compaction.DEBUG_LOG).exists()
