"""Docs that cannot drift (#48): every promise README.md and docs/ make is in tests/promises.toml,
quoted, with the tests that check it or the doc's own sentence saying why it is not tested here.
Checked against this repository, and against a sample repository that breaks each rule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import promises
from support.localnet import REPO

SAMPLE_TEST = """
import pytest

def test_exit_code_two():
    pass

class TestInit:
    def test_refuses(self):
        pass

@pytest.mark.parametrize("value", ["a"])
def test_each(value):
    pass
"""


def test_every_promise_in_the_map_is_in_its_doc_and_names_tests_that_exist():
    found = promises.problems(REPO)
    assert not found, "tests/promises.toml and the docs disagree:\n" + "\n".join(found)


def test_the_map_covers_readme_and_every_doc_but_the_design_contract_copy():
    promise_map, _ = promises.load(REPO)
    mapped = {promise.doc for promise in promise_map.promises}
    assert set(promise_map.excluded) == {"docs/design.md"}
    assert set(promises.documents(REPO)) - mapped == {"docs/design.md"}


def sample(tmp_path: Path, doc: str, entries: str) -> Path:
    """A repository holding README.md, docs/cli.md with `doc`, a test file and the map `entries`."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Sample\n")
    (tmp_path / "docs" / "cli.md").write_text(doc)
    (tmp_path / "tests" / "python").mkdir(parents=True)
    (tmp_path / "tests" / "python" / "test_sample.py").write_text(SAMPLE_TEST)
    (tmp_path / "tests" / "promises.toml").write_text(entries)
    return tmp_path


def entry(says: str, tests: str = "", untested: str = "") -> str:
    lines = ["[[promise]]", 'doc = "docs/cli.md"', f"says = {json.dumps(says)}"]
    lines += [f"tests = {tests}"] if tests else []
    lines += [f"untested = {json.dumps(untested)}"] if untested else []
    return "\n".join(lines) + "\n"


DOC = """# CLI
A wrong value exits with
code 2. `init` refuses a second instance.
The record is closed on the mainnet only. Not tested here: no mainnet in CI.
"""


def test_a_sample_whose_entries_hold_has_no_problem(tmp_path):
    root = sample(
        tmp_path,
        DOC,
        entry("exits with code 2", '["tests/python/test_sample.py::test_exit_code_two"]')
        + entry("refuses a second instance", '["tests/python/test_sample.py::TestInit::test_refuses"]')
        + entry("closed on the mainnet only", untested="Not tested here: no mainnet in CI."),
    )
    assert promises.problems(root) == []
    assert promises.summary(root)["docs"]["docs/cli.md"]["untested"] == [
        {"says": "closed on the mainnet only", "why": "Not tested here: no mainnet in CI."}
    ]


@pytest.mark.parametrize(
    ("doc", "entries", "message"),
    [
        (
            DOC.replace("code 2", "code 1"),
            entry("exits with code 2", '["tests/python/test_sample.py::test_exit_code_two"]'),
            (
                "the entry (docs/cli.md: 'exits with code 2'): these words are no longer in docs/cli.md: "
                "the doc changed; quote the promise's new words in `says`"
            ),
        ),
        (
            DOC,
            entry("exits with code 2", '["tests/python/test_sample.py::test_exit_code_3"]'),
            "names the test tests/python/test_sample.py::test_exit_code_3, which does not exist",
        ),
        (
            DOC,
            entry("exits with code 2", '["tests/python/test_sample.py::TestInit::test_exit_code_two"]'),
            "names the test tests/python/test_sample.py::TestInit::test_exit_code_two, which does not exist",
        ),
        (
            DOC,
            entry("exits with code 2", '["tests/python/test_gone.py::test_exit_code_two"]'),
            "names the test tests/python/test_gone.py::test_exit_code_two, which does not exist",
        ),
        (
            DOC,
            entry("exits with code 2"),
            "the entry (docs/cli.md: 'exits with code 2') has neither `tests` nor `untested`",
        ),
        (
            DOC,
            entry("exits with code 2", '["tests/python/test_sample.py::test_exit_code_two"]'),
            "docs/cli.md says 'Not tested here: no mainnet in CI.'... but no entry of tests/promises.toml quotes",
        ),
        (
            DOC,
            entry("closed on the mainnet only", untested="Not tested here: the mainnet costs money."),
            "its `untested` sentence is not in docs/cli.md",
        ),
        (
            DOC,
            entry("closed on the mainnet only", untested="the mainnet costs money"),
            '`untested` must quote the doc\'s own "Not tested here: why" sentence',
        ),
        (
            DOC,
            entry("e", '["tests/python/test_sample.py::test_exit_code_two"]'),
            "these words are in docs/cli.md",
        ),
        (
            DOC,
            entry("exits with code 2", '["tests/python/test_sample.py::test_exit_code_two"]').replace(
                "tests =", "test ="
            ),
            "has unknown keys ['test']",
        ),
    ],
    ids=[
        "doc-changed",
        "no-such-test",
        "no-such-method",
        "no-such-file",
        "neither",
        "marker",
        "excuse",
        "why",
        "twice",
        "typo",
    ],
)
def test_a_sample_that_breaks_a_rule_is_named(tmp_path, doc, entries, message):
    found = promises.problems(sample(tmp_path, doc, entries))
    assert any(message in problem for problem in found), found


def test_a_parametrised_test_id_names_its_function(tmp_path):
    root = sample(tmp_path, DOC, "")
    assert promises.names_a_test(root, "tests/python/test_sample.py::test_each[a]")
    assert not promises.names_a_test(root, "tests/python/test_sample.py::test_each_other[a]")


def test_the_script_counts_the_promises_per_doc_and_lists_the_untested(tmp_path):
    script = REPO / "scripts" / "promises.py"
    listed = subprocess.run(
        [sys.executable, str(script), "--json"], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert listed.returncode == 0, listed.stderr
    counts = json.loads(listed.stdout)
    assert counts["promises"] == counts["tested"] + counts["untested"]
    assert counts["problems"] == []
    table = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert table.returncode == 0, table.stderr
    assert "total" in table.stdout and "docs/cli.md" in table.stdout
    if counts["untested"]:
        assert "Promises without a test:" in table.stdout


def test_no_new_sentence_that_looks_like_a_promise_is_left_unmapped():
    """A sentence of README.md or docs/ that names a command in backticks, gives a number with a
    unit, or says never/always/every is held by an entry, excused by its section's "Not tested
    here:" sentence or a "## History:" heading, or was flagged before this check came in."""
    found = promises.new_unmapped(REPO)
    assert not found, (
        "these doc sentences look like promises and tests/promises.toml holds none of them: add an "
        'entry with the test that checks each (or its section\'s "Not tested here: why"):\n'
        + "\n".join(f"- {c.doc}: {c.sentence[:160]!r}" for c in found)
    )


PROMISING = """# CLI
`init` never writes outside logs/.

## History: the first round
`verify` took 9 s.

## Speed
`recall` answers in 80 ms. Not tested here: the speed.
"""


def test_a_new_promise_is_flagged_until_an_entry_holds_it(tmp_path):
    root = sample(tmp_path, PROMISING, entry("answers in 80 ms", untested="Not tested here: the speed."))
    assert [c.sentence for c in promises.new_unmapped(root)] == ["`init` never writes outside logs/."]
    left, counts = promises.unmapped(root)
    assert counts == {"flagged": 3, "mapped": 1, "prose": 0, "excused": 1, "unmapped": 1}
    (root / "tests" / "promises.toml").write_text(
        entry("answers in 80 ms", untested="Not tested here: the speed.")
        + entry("never writes outside logs/", '["tests/python/test_sample.py::test_exit_code_two"]')
    )
    assert promises.new_unmapped(root) == []
    (root / "tests" / "promises.toml").write_text(entry("answers in 80 ms", untested="Not tested here: the speed."))
    (root / promises.CANDIDATES_BASELINE).write_text(f"{left[0].fingerprint}\tdocs/cli.md\tflagged before\n")
    assert promises.new_unmapped(root) == []


def prose(says: str, why: str = "") -> str:
    lines = ["[[prose]]", 'doc = "docs/cli.md"', f"says = {json.dumps(says)}"]
    lines += [f"why = {json.dumps(why)}"] if why else []
    return "\n".join(lines) + "\n"


PROSE_DOC = """# CLI
`init` never writes outside logs/.

## Layout
Every module has one owner.
"""


def test_a_prose_entry_holds_a_sentence_that_is_not_a_promise_and_the_rest_are_still_flagged(tmp_path):
    root = sample(tmp_path, PROSE_DOC, prose("Every module has one owner.", why="the code's layout, not a behaviour"))
    assert promises.problems(root) == []
    assert [c.sentence for c in promises.new_unmapped(root)] == ["`init` never writes outside logs/."]
    assert promises.unmapped(root)[1] == {"flagged": 2, "mapped": 0, "prose": 1, "excused": 0, "unmapped": 1}
    assert promises.summary(root)["prose"] == 1
    assert promises.summary(root)["promises"] == 0


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            prose("Every module has two owners.", why="layout"),
            "the prose entry (docs/cli.md: 'Every module has two owners.'): these words are no longer in docs/cli.md",
        ),
        (
            prose("Every module has one owner."),
            "the prose entry (docs/cli.md: 'Every module has one owner.') has no `why`",
        ),
        (prose("Every module has one owner.", why="layout") + 'reason = "x"\n', "has unknown keys ['reason']"),
        (
            prose("Every module has one owner.", why="layout").replace("docs/cli.md", "docs/gone.md"),
            "names a doc that does not exist",
        ),
        (
            prose("Every module has one owner.", why="layout")
            + entry("Every module has one owner.", '["tests/python/test_sample.py::test_exit_code_two"]'),
            "is in the map twice, or as a promise too",
        ),
    ],
    ids=["words-gone", "no-why", "typo", "no-doc", "also-a-promise"],
)
def test_a_prose_entry_that_breaks_a_rule_is_named(tmp_path, entries, message):
    found = promises.problems(sample(tmp_path, PROSE_DOC, entries))
    assert any(message in problem for problem in found), found
