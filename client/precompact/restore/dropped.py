"""What compaction dropped: the facts of a savepoint's history before the compaction that Claude
Code's compaction summary does not contain, each with the entry it comes from and a confidence.

The facts are read where they live (docs/viewer.md has the table): what the user asked, split
into its constraints (sentences with *must, never, only, instead of*…), its reasons and decisions
(*because, since, so that, rather than, I'd rather*…) and the rest of the request; the model's
decisions: a sentence that makes a choice or names a cause (*I'll, rather than, instead of, root
cause, because*…) and gives a reason, not its narration ("X, so Y"), its statement of what always
or never holds right before the choice it then makes, a sentence of it setting several settings
(`MaxRetries 5, Backoff 2s`); the failed commands, each
one fact with the line that says why (a test's assertion, an error line that is more than "could
not compile", a `command not found` under "Exit code 127"; an error line ending in a colon with
the line that goes on with it), but not a test run that, run again
the same way, then passed (a failure fixed: the summary's "Errors and fixes" tells it); error
lines of other tool output;
identifiers from tool output (the commit `git commit` made, a migration head, the one commit
`git log -1` shows, not the ids git prints of a stash nor what `--version` printed, who wrote it, the issue a change closes, a failed test run's seed; a
version a command pins, `libcst==1.5.0`; a name with a figure, `Pixel_4a_API_30`, or of three
joined words an output gives and the model's next words or a later command repeat; the e-mail
addresses and hosts named in full an output, failed or not, names, two or fewer; a manifest's
dependency a diff shows moved, `package old -> new`); a build's or
a start's time (`BUILD SUCCESSFUL in 17m 52s`), a chained command's last value and a query's one
value (`count: 503221`), a duration, size or figure of an output the model repeats; a
setting's value read in a file or an output that the model goes on with (`workers = 4`, then
"with workers = 4…"); the result line of a command's output (its last line with a count or a
measure of the work: "flagged 1,284 rows", "Execution Time: 41.870 ms", not "in 0.83s", not an
age, "Up 2 hours" (`_NOT_NUMBERS`), not how much it went through, "checked 12000 lines", not a table's row, and of
two result lines that give the same figures one), a command's one short line of output with a figure (its answer: `grep -c` 1207),
the figures the model reports in its prose (a clause: "41 mixed-case rows remain", not one of a
question), one measurement with the output it restates (a figure alone with its clause); what each edit changed ("path: old → new"), or of a
larger edit the values it brought in (a constant, a pattern, a shell default, a configuration
key set); files edited (by a
tool or a shell command: `sed -i`, `> out.log`) and read; hexadecimal ids and URLs said in
the conversation, paths the user names, and the file the model singles out of a survey it read. A command that ran is a fact only through what its
output says; code names and numbers said in passing are none. One thing is one fact, under its
most telling kind, at the entry that first says it.

"Contains" is decided by matching alone, never by a model (docs/viewer.md): exactly or after
normalising (Unicode NFKC, case-folded, plain quotes and dashes, words joined by single spaces);
sentences (requests, constraints, decisions) by their content words (lightly stemmed, a small
fixed list of synonyms made one word) against the summary's sentences, an elision ("…") in a
quote matching the fact's start and end, a message by each of its sentences quoted word for
word, and not when a near-identical fact of the session
matches that summary sentence better (it is that fact's restatement); a decision only when the
summary also holds its reason; a failed command when a summary sentence tells it in its own
words, with every number of its error line, or names what that line is about (the program not found,
a quoted name, an option) and gives its numbers; numbers with tolerance (rounded, cut off with
"…", within 2% after "about", 10% of a round figure: "around 60", "180k"; small figures in
words: "two"); a setting by a sentence giving its value with its name ("200 runs" is not `default 200`);
paths by a suffix the summary names, and by file name only where the
session has one path of that name or the summary names the folder that tells them apart
("en/de/fr reports.json"), or the folder with the file's stem among alternatives ("locales
(en/de/ja)"). A fact that matches in part is listed as "possibly dropped"; one with
nothing like it in the summary, "dropped", except decisions and edits (UNSURE_KINDS), which the
rule is not sure enough of to say more than "possibly dropped", and a fact the session did not
show it turned on (a lookup's answer, a line `grep` picked, a printed file, a name said again
that is no commit, a failed run's tally, a baseline's figures, a build's time): "dropped" is
what a reader relies on.

The entries are the savepoint's as its snapshot holds them, redacted when they were saved (for a
savepoint made after its compaction, local/capture.py, those before its last boundary); the
summary is the one PostCompact recorded (redacted too), or, when none was recorded, the summary
entry Claude Code wrote after the compaction: after that boundary, or in the history the first
later savepoint of the same session that holds one.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import gc
import re
import unicodedata
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import chain, islice, pairwise
from pathlib import PurePosixPath

from precompact.boundary import quoting
from precompact.config.settings import Config
from precompact.local import capture, savepoint_log
from precompact.restore import resurrect as resurrection
from precompact.transcript import conversation

# The rule's version: raised with every change to what it lists or how it judges, so that a list
# kept by an older rule (restore/dropped_store.py) is never shown as this rule's.
RULE_VERSION = 16
# What a fact is, in the order a reader wants them: what the user asked and why first, then what
# went wrong, what the tools said, what changed, and the identifiers last.
KINDS = (
    "constraint",
    "request",
    "decision",
    "failed command",
    "identifier",
    "measurement",
    "setting",
    "edit",
    "file edited",
    "file read",
    "path",
    "url",
)
DROPPED = "dropped"
POSSIBLY_DROPPED = "possibly dropped"
# Kinds whose "dropped" the development set (tests/python/support/dropped_dev.py) shows wrong as
# often as right: a reason the summary gives in words of its own, an edit it describes. They are
# listed "possibly dropped" at most.
UNSURE_KINDS = ("decision", "edit")
KEPT = "kept"
READ_TOOLS = {"Read": "file_path", "NotebookRead": "notebook_path"}
# A request this short ("yes", "go on") carries no fact of its own.
MIN_REQUEST_WORDS = 4
FACT_CHARS = 2_000  # a fact's text beyond this is cut: a request pasted with a whole log is still one fact
SENTENCE_CHARS = 400  # a longer "sentence" is a pasted block, not a constraint or a reason
DECISION_WORDS_AT_LEAST = 6  # a shorter sentence of the model's ("Done, so tests pass.") gives no reason worth keeping
EDIT_SIDE_CHARS = 120  # each side of "path: old → new"
HISTORY_COMMITS = 50  # of a history listed, the newest this many are remembered
HISTORY_WORDS = 2  # of a listed commit's subject, its own words the model's telling of it holds
SUITES = 4  # a test run's tallies of one shape, at most: more are a progress report's
MEASURED_LINES = 2  # of a command's output, its last lines with a measurement, one per shape
TABLE_GAPS = 3  # two lines of output with this many column gaps or more are a table's rows (`gh run list`)
ANSWER_CHARS = 80  # a command's one line of output this short is its answer
PROSE_CLAUSE_CHARS = 160  # of the model's prose, a clause with a measurement that reports it
MEASURED_TAIL = 400  # of a command's output, the lines its results are looked for in (its end says them)
FOUND_FILES = 3  # a search whose output names more files is a survey, not where a fact was found
VALUES_BROUGHT = 3  # of a larger edit's lines, at most this many values it brought in are facts
DECLARED_AT_MOST = 3  # of an edit's or a new file's lines, at most this many routes it declares are facts
SWAP_TOKENS = 12  # an edit of code that changes more tokens than this rewrites it: its file tells it
OUTPUT_CHARS = 64 << 10  # of a command's output, its first and last this many are read for facts
# Sentence matching: the share of a fact's content words one summary sentence must hold for the fact to be kept, and below which nothing like it is there.
KEPT_COVERAGE = 0.5
POSSIBLE_COVERAGE = 0.3
REASON_COVERAGE = 0.6  # of a decision's reason, anywhere in the summary, for the decision to be kept
# A failed command is kept when one summary sentence holds this share of the words of the command
# and its error line (the summary tells the failure in its own words: "E0502 borrow error").
FAILURE_COVERAGE = 0.3
APPROXIMATE_SHARE = 0.02  # "about 640" is 641 within this share
ROUND_SHARE = 0.1  # "around 60" is 64 within this share: a figure said round is said loosely

CONSTRAINT_WORDS = re.compile(
    r"\b(must|never|always|only|do not|don't|dont|should not|shouldn't|must not|mustn't|may not|without|avoid|keep|"
    # a prohibition said of nothing ("Nothing may be recreated", "nothing can go down")
    r"nothing (?:may|can|should|is to)|"
    r"make sure|no more than|at most|at least|instead of|not allowed|forbidden|required?|nothing else|"
    # a prohibition said as "no X on/in/… Y" ("no helm upgrades on the prod cluster", "no writes to the primary")
    r"no\s+(?!(?:one|idea|problem|worries|longer|matter|need|doubt|way|reason)\b)[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?"
    r"\s+(?:on|in|into|to|during|until|before|while|against|outside)\s)\b",
    re.IGNORECASE,
)
# A decision is a sentence that gives a choice with its reason, or a cause: what it says after
# *because*, *since*, *so that*… (or before *, so*) is the reason a reader wants back.
REASON_WORDS = re.compile(
    r"\b(because|since(?!\s+(?:v?\d|yesterday|today|this|last|then|when|monday|tuesday|wednesday|thursday|friday))|"
    r"so that|due to|in order to|otherwise|rather than|rather not|instead of|prefer|we'll keep|we keep|"
    r"would also work|trade-?off|decided|decide|chose|choose|going with|went with|opted|root cause|"
    r"caused by|the culprit|the reason|comes? from|came with)\b|, so\b",
    re.IGNORECASE,
)
# The model explains much ("X, so Y" is how it narrates): a sentence of its is a decision when it
# makes a choice or names a cause, and gives a reason.
_CHOICE_OR_CAUSE = re.compile(
    r"\b(?:I'll|I will|we'll|we will|let's|I'm going to|decided|chose|going with|went with|opted|rather than|"
    # a choice the model reports having made ("…, so I've left linting out", "so I skipped the step")
    r"I've (?:left|kept|skipped|held)|I (?:left|kept|skipped|held) (?!it\b)|"
    r"instead of(?!\s+(?:about\s+|~)?\d)|prefer|would also work|trade-?off|root cause|caused by|the culprit|came with|comes from|"
    r"the cause|the reason|because)\b",
    re.IGNORECASE,
)
# The markers after which a sentence says its reason ("X because Y": Y), and the one before which
# it does ("Y, so X": Y).
_REASON_AFTER = re.compile(
    r"\b(?:because|since|so that|due to|in order to|otherwise|would also work but|the reason is|caused by|"
    r"comes? from|came with)\b",
    re.IGNORECASE,
)
_REASON_BEFORE = re.compile(r", so\b", re.IGNORECASE)
# A sentence that opens on the model's choice ("I'll leave it", "So we keep…", "Let's pin it"):
# the sentence before it says what the choice rests on.
_CHOICE_AHEAD = re.compile(
    r"^(?:So,?\s+|Then,?\s+|Therefore,?\s+|Given that,?\s+|That's why\s+)?"
    r"(?:I'll|I will|I'm going to|I'd|we'll|we will|we should|let's|I'm leaving|I'm keeping)\b",
    re.IGNORECASE,
)
_CHOICE_MARKS = (
    "i'll",
    "i will",
    "i'm going to",
    "i'd",
    "we'll",
    "we will",
    "we should",
    "let's",
    "i'm leaving",
    "i'm keeping",
)
# A setting given its value in prose: `MaxRetries 5`, `SlowAfter 0`, `max_lag=1500`, `TTL: 30s`;
# found from its value back (a sentence has fewer figures than capitalised words).
_PROSE_VALUE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[a-zµ%]{1,3})?(?![\w.])")
_SETTING_NAME = re.compile(
    r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[0-9]*(?:[A-Z][a-z0-9]+)+|[A-Z][A-Z0-9]*_[A-Z0-9_]+"
)
# What a statement of how the system behaves says: what always, never, only or every time holds.
_ALWAYS_OR_NEVER = re.compile(r"\b(?:always|never|only|every|must)\b", re.IGNORECASE)
SETTINGS_CHOSEN = 2  # a sentence of the model's giving this many settings their values chose them
# What every match of CONSTRAINT_WORDS and of REASON_WORDS holds, in lower case: a text with none
# of them is not searched (`_may_say`); the two searches, case-insensitive and tried at every
# character, were a quarter of the rule's time on a 100 MB session's messages (profiled).
_CONSTRAINT_MARKS = (
    *("must", "never", "always", "only", "do not", "don't", "dont", "should", "without", "avoid", "keep"),
    *("make sure", "no more than", "at most", "at least", "instead of", "not allowed", "forbidden", "require"),
    *("nothing else", "no ", "may not", "nothing may", "nothing can", "nothing should", "nothing is to"),
)
_REASON_MARKS = (
    *("because", "since", "so that", "due to", "in order to", "otherwise", "rather", "instead of", "prefer"),
    *("we'll keep", "we keep", "would also work", "trade-off", "tradeoff", "decide", "chose", "choose"),
    *("going with", "went with", "opted", "root cause", "caused by", "the culprit", "the reason"),
    *("come from", "comes from", "came with", ", so"),
)


def _may_say(text: str, marks: tuple[str, ...]) -> bool:
    """Whether `text` may hold a match of a case-insensitive pattern each of whose matches holds
    one of `marks` (lower case). Tested on a lower-case copy, which is exact for ASCII text alone
    (IGNORECASE also matches "ſ", "K", "ı" to s, k, i): any other text is let through."""
    if not text.isascii():
        return True
    lowered = text.lower()
    for mark in marks:  # a loop, not any(): this runs for every message
        if mark in lowered:
            return True
    return False


def _says_constraint(text: str) -> bool:
    return _may_say(text, _CONSTRAINT_MARKS) and CONSTRAINT_WORDS.search(text) is not None


def _gives_reason(text: str) -> bool:
    return _may_say(text, _REASON_MARKS) and REASON_WORDS.search(text) is not None


# A sentence ends at . ! ? followed by space and a capital (not at "84.15", "reports.py and", "e.g. the").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“‘(\[`*])|\n+\s*(?:[-*•]\s+|\d+\.\s+)?")
# Files have one of these extensions; `os.path`, `request.user`, `r.text` do not.
FILE_EXTENSIONS = frozenset(
    re.findall(
        r"\S+",
        "py pyi ipynb js mjs cjs ts tsx jsx json jsonl md rst txt toml yaml yml ini cfg conf env lock sql "
        "html htm css scss less vue svelte rs go java kt kts scala rb php pl sh bash zsh fish c h cc cpp hpp "
        "cs swift m mm ex exs erl hrl hs ml clj lua r dart zig nim tf hcl proto graphql gql xml csv tsv log "
        "svg png jpg jpeg gif webp ico pdf gradle mk cmake dockerfile properties tmpl j2 jinja po mo sqlite "
        "db bak patch diff whl tar gz zip",
    )
)
# One scan finds every identifier, left to right, so what one kind takes (a URL, a path) is not
# read again as another (the names and numbers inside it).
_IDENTIFIER = re.compile(
    r"(?P<url>\b(?:https?|s3|gs|az|ftp|sftp|ssh)://[^\s<>\"'`)\]]+)"
    r"|(?P<uuid>\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)"
    r"|(?P<issue>\b(?i:closes|fixes|resolves|PR|pull request|issue)\s+#\d+)"
    r"|(?P<path>(?<![\w/.:-])(?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)+|(?<![\w/.-])[\w-]+\.[A-Za-z]\w{0,7}\b)"
    r"|`(?P<ticked>[^`\n]{2,80})`"
    r"|(?P<function>\b[A-Za-z_][\w.]*(?=\())"
    r"|(?P<advisory>\b(?:CVE-\d{4}-\d{4,7}|(?:RUSTSEC|PYSEC|GO|OSV)-\d{4}-\d{1,6})\b)"  # whole, not cut at its year
    r"|(?P<ticket>\b(?!(?:SHA|ISO|UTF|AES|RSA|HTTP|TLS|RFC)-)[A-Z](?:[A-Z0-9]{1,9}-\d{2,6}|-\d{3,6})\b)"
    r"|(?P<hex>\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b(?!-))"
    r"|(?P<name>\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+[0-9]*(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b)"
    r"|(?P<number>(?<![\w.\\])\d+(?:[.,]\d+)*(?!\w))"
)
# What every identifier _identifiers adds holds (a URL's "://", a uuid's or a hex id's seven hex
# digits, an issue's "#", a ticked span's backtick, a ticket's "-1"; and a path's "/" or its
# extension's ".p"). None of them spans a space but an issue ("closes #12") and a ticked span: in
# a text with neither "#" nor a backtick, _IDENTIFIER (its alternatives tried at every character,
# 6 of the rule's 25 s on a 100 MB session, profiled) scans only the runs of non-space characters
# that hold a mark, each from its start as the whole text's scan reaches it: the same matches.
_MARKED_RUN = re.compile(r"(?<!\S)\S*?(?:://|-\d|[0-9a-f]{7})\S*")
_MARKED_RUN_PATHS = re.compile(r"(?<!\S)\S*?(?:://|-\d|[0-9a-f]{7}|/|\.[A-Za-z])\S*")
# What is not a fact among the numbers of prose: dates and times, line numbers (`line 42`,
# `app.py:42:7`), hand arithmetic (`12 * 34 = 408`), escape sequences (`\x1b[0m`, `\033`).
_NOT_NUMBERS = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?,?\s+\d{4}\b"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
    r"|\b(?i:lines?|ln|l)\s?\d+(?:\s*(?:-|–|to|and)\s*\d+)?\b"
    # an index (`batch 3`, `step 1774`), not a measure said after its noun (`longest batch 388 ms`)
    r"|\b(?i:run|attempt|batch|step|iteration|round|page|job)\s+#?\d+\b(?![.,]\d|\s?(?:ns|µs|us|ms|s|sec|min|[KMGT]i?B|kB|%)\b)"
    r"|^\(\d+ rows?\)$"
    # a process id (valgrind's `==42310==`), an address (`0x6020000001b0`), an age (`(12s ago)`,
    # `3 minutes ago`, a status listing's `Up 2 hours`: when, not a measure of the work)
    r"|==\d+==|\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\s?[smhd]\s+ago\b"
    r"|\b(?i:about\s+)?(?:an?|\d+)\s+(?i:second|minute|hour|day|week|month|year)s?\s+ago\b"
    r"|\bUp\s+(?i:about\s+)?(?:an?|\d+)\s+(?i:second|minute|hour|day|week|month)s?\b"
    r"|\.[A-Za-z]{1,8}:\d+(?::\d+)?"
    r"|\d[\d,.]*(?:\s*[+*/×÷]\s*\d[\d,.]*)+(?:\s*[=≈]\s*~?\d[\d,.]*)?"
    r"|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\[0-7]{1,3}|\x1b\[[\d;]*[A-Za-z]|\\[nrt]"
)
_ERROR_LINE = re.compile(
    r"^[ \t]*(?:E[ \t]+|---[ \t]+|[│|╷╵●✕×][ \t]*)?"
    r"((?:(?:[\w.]*(?:Error|Exception|Failure)|error|ERROR|fatal|FATAL|FAILED|FAIL|panicked at|npm ERR!)\b|error\[\w+\])"
    r"[:! \t].*)$",
    re.MULTILINE,
)
_ERROR_HINTS = ("rror", "xception", "ailure", "atal", "FAIL", "panicked", "ERR!")  # one is in every _ERROR_LINE
# A test's assertion: what it wanted and what it got, the most telling line of a failed test run.
_ASSERTION_LINE = re.compile(
    r"^[ \t]*(\S.*\b(?:want|wanted|expected|got|received)\b[:=\s]+[\w\"'-].*)$", re.MULTILINE | re.IGNORECASE
)
# What a failed command also says why with (`clippy -D warnings`, the race detector).
_WARNING_LINE = re.compile(r"^[ \t]*((?:warning|WARNING)\b[:!].*)$", re.MULTILINE)
# Error lines that say only that something failed, not why: a failure's detail is another line where there is one.
_GENERIC_ERROR = re.compile(
    r"could not compile|due to \d+ previous errors?|^FAIL(?:ED)?\b\s*(?:\S+\s+[\d.]+s)?$|^FAIL:\s+\S+\s+\([\d.]+m?s\)$|^npm ERR! (?:code|errno|A complete log)|"
    r"^error: (?:Recipe|process|command)\b.*failed|^ERROR: (?:Job failed|Command errored)"
)
# How long a command itself took ("in 0.83s", "(0.04s)", "Time: 9.12 s"), or one of its tests (.NET's
# `Passed X [3 ms]`, XCTest's `… failed (0.004 seconds).`): no measurement of the work.
_RUN_DURATION = re.compile(
    r"\(\d[\d.]*\s?m?s\)|\[\d[\d.]*\s?m?s\]|\(\d[\d.]*\s?(?:seconds?|secs?)\)|\b(?:in|took|after)\s+\d[\d.,]*\s?(?:ms|s|sec|secs|seconds)\b|\s\d[\d.]*s\s*$|"
    # … ctest's `Total Test time (real) =`, sbt's `[success] Total time: 97 s (01:37), completed …`
    r"^\s*(?:\[\w+\]\s*)?(?:Time|Duration|Planning Time|Finished|Done in|Total (?:Test )?time)\b.*$",
    re.IGNORECASE,
)
# How much a tool went through (`checked 12000 lines`, `Parsed 214 commits`, `Skipped 49 files`,
# `no issues found in 41 source files`) or left out of what it printed (`(2 unchanged elements
# hidden)`): the size of its input, not what it found (the count of what it changed or flagged is).
_GONE_THROUGH = re.compile(
    r"\b(?:checked|scanned|parsed|validated|audited|skipped|analy[sz]ed|inspected|linted|loaded)\s+\d[\d,.]*\s+[a-z]+|"
    # rubocop's `Inspecting 42 files`, `42 files inspected, …`
    r"\bInspecting\s+\d[\d,]*\s+files?\b|\b\d[\d,]*\s+files?\s+(?:inspected|checked|scanned|linted|analy[sz]ed)\b|"
    r"\bScanning\s+\S+\s+for\s+[a-z]+\s+\(\d[\d,]*\s+[a-z -]+\)|"  # cargo audit's `Scanning Cargo.lock for vulnerabilities (311 crate dependencies)`
    r"\bno\s+(?:issues|errors|problems|warnings)\s+found\s+in\s+\d[\d,]*\s+(?:source\s+)?files?\b|"
    r"\(\d[\d,]*\s+unchanged\s+[a-z]+\s+hidden\)|"
    # a load test's requests sent in its fixed time and the bytes they moved: its rate is its result
    r"\b\d[\d,]*\s+requests\s+(?:in\s+[\d.]+m?s\s*)?,\s*[\d.]+\s?[KMG]i?B\s+read\b|\bTransfer/sec:\s*[\d.]+\s?[KMG]i?B\b|"
    # criterion's outliers of its samples (`Found 3 outliers among 100 measurements (3.00%)`, `2 (2.00%) high mild`)
    r"\bFound\s+\d+\s+outliers\s+among\s+\d+\s+measurements\s*(?:\([\d.]+%\))?|^\s*\d+\s+\([\d.]+%\)\s+(?:high|low)\s+(?:mild|severe)|"
    # what a package manager fetched and unpacked (apt's `Fetched 2,468 kB in 0s (18.2 MB/s)`, `Need to
    # get 2,468 kB of archives`, `After this operation, 13.9 MB of additional disk space will be used`)
    r"\bFetched\s+[\d,.]+\s?[kMG]B\b(?:\s+in\s+\S+)?(?:\s*\([\d,.]+\s?[kMG]B/s\))?|\bNeed\s+to\s+get\s+[\d,.]+\s?[kMG]B\b.*"
    r"|\bAfter\s+this\s+operation,\s+[\d,.]+\s?[kMG]B\b.*"
    r"|\b\d+\s+upgraded,\s+\d+\s+newly\s+installed,\s+\d+\s+to\s+remove\b.*|"
    # a bundler's input (vite's `✓ 412 modules transformed.`)
    r"\b\d[\d,]*\s+modules\s+transformed\b|"
    # a build's task graph (Gradle's `214 actionable tasks: 214 executed`, `9 executed, 6 up-to-date`)
    r"\b\d+\s+actionable\s+tasks?:\s*\d+\s+(?:executed|up-to-date|from\s+cache)(?:,\s*\d+\s+[a-z -]+)*",
    re.IGNORECASE,
)
# A check that found nothing says so with a count of 0 (`Found 0 violations, 0 serious in 87 files`,
# `3 dependencies, 0 violations`, `Lint found 0 errors, 41 warnings (41 baselined)`, `no offenses
# detected`); its other figures count what it went through or what was already accepted.
_NOTHING_FOUND = re.compile(
    r"\b(?:0|no)\s+(?:violations?|errors?|offen[cs]es|issues?|problems?|vulnerabilit(?:y|ies)|findings?)\b",
    re.IGNORECASE,
)
_CHECK_INPUT = re.compile(
    r"\b0\s+[a-z]+\b|\b(?:in\s+)?\d[\d,]*\s+(?:source\s+)?(?:files?|dependencies|packages|crates|modules|targets)\b"
    r"|\b(\d+)\s+[a-z]+\s+\(\1\s+(?:baselined|suppressed|ignored)\)",
    re.IGNORECASE,
)
# Code names an edit brings in: `seen.entry`, `follow_symlinks`, `formatInTimeZone`.
_CODE_NAME = re.compile(
    r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|\b[A-Za-z]\w*_\w+|\b[a-z]+[0-9]*(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b"
)
# A line that says a command could not run, wherever the words stand in it.
_FAILURE_WORDS = re.compile(
    r"command not found|No such file or directory|Permission denied|is not recognized as|Cannot find module|"
    r"Segmentation fault|Killed\b"
)
# What a line saying a command could not run names: the program (`bash: adb: command not found`), the module.
_FAILURE_SUBJECT = re.compile(
    r"([\w.+-]+): (?:command not found|not found|inaccessible or not found)|No module named '?([\w.]+)"
)
# What a sentence of a summary that tells something went wrong holds ("adb not on PATH", "NameError
# for ZoneInfo"): a stem anywhere, or a short word whole. Plain `in` tests: a case-insensitive
# alternation tried at every character cost the rule a tenth of its time.
_FAILURE_STEMS = (
    *("error", "fail", "missing", "undefined", "unknown", "unresolved", "cannot", "can't", "couldn't", "wrong"),
    *("broke", "crash", "invalid", "refused", "denied", "rejected", "flagged", "reported", "complain", "warn"),
    *("exception", "panic", "timed out", "timeout", "abort", "leak", "overflow", "after-free", "deadlock"),
    *("segfault", "regress"),
)
_FAILURE_WORDS_WHOLE = frozenset(("not", "no", "race", "bug", "bugs"))
# What a sentence that tells a program or a module was not found holds, one word whole at least.
_ABSENCE_WORDS = frozenset(
    ("not", "no", "missing", "absent", "unavailable", "lacks", "lacked", "without", "isn", "wasn")
)


def _tells_failure(sentence: str) -> bool:
    lowered = sentence.casefold()
    return any(stem in lowered for stem in _FAILURE_STEMS) or not _FAILURE_WORDS_WHOLE.isdisjoint(
        _WORDS.findall(lowered)
    )


_QUOTED = re.compile(r"'([^'\s][^']{0,58})'|\"([^\"\s][^\"]{0,58})\"|`([^`]{1,60})`|<([^<>\s]{1,60})>")
_OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
# A command that reads a log: its program a pager or a search, or a `logs` subcommand (`kubectl logs`, `docker compose logs`).
_LOG_READ = re.compile(r"^(?:sudo\s+)?(?:tail|cat|less|head|zcat|journalctl|grep|rg)\b|\slogs\s")
_READS_LOG = re.compile(r"\b(?:logs?|journalctl|cat|grep|rg|tail|less|head)\b")
_TEST_RUN = re.compile(r"\b(?:test|tests|pytest|rspec|jest|vitest|playwright|mocha|phpunit|ctest)\b")
_FOCUSED = re.compile(
    r"\s(?:-k|-t|-R|-run|--filter|--grep|--testNamePattern|--tests)[\s=]|::"
    r"|\s[\w./-]*(?i:test|spec)[\w./-]*\.[A-Za-z]{1,5}(?:\s|:|$)"  # a test file, not the runner's script (`manage.py test`)
    r"|\s-e\s+(?:class|package)\s"  # Android's instrumentation runner, one test class: `am instrument -e class …`
    r"|\s\.?/?(?:tests?|spec|__tests__)/[\w.-][\w./-]*"  # a folder of the test tree, not the tree: `pytest tests/reports`
)
# A test runner's line for one test, by its name: `✓ retry > does not retry on 400`, `PASSED tests/…`, `--- FAIL: TestX`.
_TEST_NAME_LINE = re.compile(r"\s*(?:[✓✔√×✗✕]\s|(?:--- )?(?:PASS|PASSED|FAIL|FAILED)\b:?\s)")
# A test run's tally: `3 passed`, `OK (1 test)`, JUnit's `Tests run: 1,  Failures: 1`.
_TEST_TALLY = re.compile(r"\b\d+ (?:passed|failed|failures?|examples?|tests?|skipped|pending)\b|\bTests run:\s*\d")
_FAILED_COUNT = re.compile(r"\b([1-9]\d*) (?:failed|failures?|failing)\b")
_FAILED_SAID = re.compile(r"\b(?i:fail(?:ed|s|ing|ures?)?)\b")
# Jest's and Vitest's tally of test files beside their tally of tests: the tests' is the result.
_CONTAINER_TALLY = re.compile(r"Test (?:Files|Suites):?\s+\d")
_PIPED = re.compile(r"\|\s*(?:tail|head|grep|tee|less)\b")
# A compiler's or type checker's diagnostic: `checkout.go:62:5: undefined: errors`,
# `src/retry.ts(12,26): error TS6133: …`; its message is what a summary quotes.
_DIAGNOSTIC = re.compile(r"^[ \t]*[\w./-]+\.[A-Za-z]\w{0,7}(?::\d+(?::\d+)?:|\(\d+,\d+\):)[ \t]*(\S.*)$", re.MULTILINE)
_EXIT_CODE = re.compile(r"^\s*Exit code \d+\s*$")
# A count or a timing in a tool's output: a number with its unit or what it counts.
_MEASUREMENT = re.compile(
    # an amount of money; a count, what it counts may have one word before it ("41 mixed-case rows")
    r"[$€£]\s?\d|(?<![\w.])\d[\d,]*(?:\.\d+)?(?:[kKM](?= ))?\s?(?:[a-z][a-z-]{2,}\s)?(?:ms|s|sec|secs|seconds?|minutes?|mins?|µs|us|ns|%|rows?|files?|lines?|"
    r"pixels?|px|records?|items?|entries|errors?|warnings?|tests?|passed|failed|skipped|insertions?|deletions?|"
    r"matches|occurrences|bytes|[KMG]i?B|kB|users?|requests?|queries|calls|changed|flagged|differ(?:ing|ent)?|"
    # a count said in its magnitude's word ("about 1.2 million", "3 billion")
    r"million|billion|thousand|"
    # a rate (`651.2 ns/op`, `1200 req/s`), a factor (`3.2x`), or a count of anything (`12 vulnerabilities`, `180k SKUs`)
    r"[a-zµ]+/(?:op|s|sec|req)|x|[a-z]{3,}s|[A-Z]{2,}s)\b"
    r"|\b(?:Execution|Planning|Total|Elapsed)\s+[Tt]ime:?\s*\d[\d,.]*"
    r"|\b(?i:warnings?|errors?|failures?|vulnerabilit(?:y|ies)|issues?|problems?|tests?|rows?|files?|total)\s*:\s*\d"
    # a rate said before its figure (wrk's `Requests/sec:   2580.29`, ab's `Requests per second:    1523.44`)
    r"|\b(?i:requests|req|queries|transactions|ops|operations|messages|events)(?:/s(?:ec)?|\s+per\s+second)\s*:\s*\d"
    r"|\btps\s*=\s*\d"  # pgbench's `tps = 1233.53`
    r"|\b\d+ to (?:add|change|destroy|create|update|delete|replace|import)\b"  # an infrastructure plan's changes
)
# What every measurement holds: a figure standing alone or an amount. Looked for first, it spares
# most text _MEASUREMENT's slower search (a tenth of its time on a 100 MB session's prose).
_FIGURE = re.compile(r"(?<![\w.])\d|[$€£]")


def _measured(text: str) -> bool:
    """Whether `text` holds a count or a measure of something (`_MEASUREMENT`)."""
    return _FIGURE.search(text) is not None and _MEASUREMENT.search(text) is not None


# Tools whose output names the commits and migrations a session turns on.
# Commands that print files (their file arguments are read) and that search them (the files
# their output lines name are where a fact was found).
_PRINTS_FILES = re.compile(r"^(?:cat|head|tail|less|more|bat|nl|sed -n|awk|jq|yq)\s")
_LOG_FILE = re.compile(r"\.log(?:\.\d+)?$|^/var/log/")  # a log, and one rotated (`app.log.1`)
_SEARCH = re.compile(r"^(?:grep|egrep|rg|ag|git grep)\s")
# git commands whose output names commits in passing.
# A security advisory by its id, as audit tools print it (`GHSA-h75v-3vvj-5mfj`, `CVE-2024-3094`,
# `RUSTSEC-2024-0332`, `PYSEC-2024-60`, `GO-2024-2687`): what a security fix is about, whatever the tool.
_ADVISORY = re.compile(r"\b(?:GHSA(?:-[2-9a-z]{4}){3}|CVE-\d{4}-\d{4,7}|(?:RUSTSEC|PYSEC|GO|OSV)-\d{4}-\d{1,6})\b")
_ONELINE_COMMIT = re.compile(
    r"^[*| ]*([0-9a-f]{7,40}) (?:\([^)]*\) )?(.+)$", re.MULTILINE
)  # `9f8e7d6 cart: lazy-load line items`
_TICKET = re.compile(
    r"\b(?!(?:SHA|ISO|UTF|AES|RSA|HTTP|TLS|RFC|CVE|GHSA|RUSTSEC|PYSEC|GO|OSV)-)[A-Z][A-Z0-9]{1,9}-\d{2,6}\b(?!-)"
)
TICKETS = 3
_ADVISORY_MARKS = ("GHSA-", "CVE-", "RUSTSEC-", "PYSEC-", "GO-", "OSV-")  # what every _ADVISORY holds
ADVISORIES = 5  # an output naming more advisories surveys a tree's debt: none of them is the one the session fixed
# an address, not across the comma of a list of them (`https://app.acme.io,https://partners.acme.io`)
_OUTPUT_URL = re.compile(r"\b(?:https?|s3|gs)://(?:[^\s<>\"'`)\],]|,(?!(?:https?|s3|gs)://))+")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_GIT_SUBCOMMAND = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?\w[\w-]*")
_GIT_CHATTER = re.compile(r"\bgit\s+(?:bisect|checkout|switch|reset|pull|fetch|push|merge|rebase|status|stash|clone)\b")
# A migration's name as Django and Rails print it (`0041_auto_20261102`).
_MIGRATION = re.compile(r"(?<![\w.])\d{4,14}_[a-z]\w*(?![\w.])")
_VERSIONED = re.compile(
    r"\b(?:git|alembic|migrat\w*|flyway|liquibase|prisma|knex|hg|manage\.py|rails|rake)\b"
    r"|\bdb\s+(?:upgrade|downgrade|revision|merge|heads|current|history|stamp)\b"  # Flask-Migrate's `flask db …`
)
_HEX = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
_REVISION_FILE = re.compile(r"(?<![\w-])((?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40})_(?=[a-z])")
_COMMAND_ID = re.compile(
    r"(?<![\w/.=:-])(?:\d{6,}|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}|[A-Z][A-Z0-9]{1,9}-\d{2,6})(?![\w/.-])"
)
_MARKED_ID = re.compile(
    r"^\[[\w/.+-]+ (?:\(root-commit\) )?([0-9a-f]{7,40})\]|\b([0-9a-f]{7,40}) \(head\)|Rev: ([0-9a-f]{7,40})"
    r"|^([0-9a-f]{7,40}) is the first bad commit"
    # the revision file a migration tool generated (`Generating …/versions/4c2d9e7a1b3f_refunds_table.py ...  done`)
    r"|^\s*Generating \S*/([0-9a-f]{12})_\w+\.py\b"
    r"|^\s*Applying \w+\.(\d{4}_\w+)\.\.\. OK"  # Django's migration applied: `Applying orders.0031_order_retry_count... OK`
)
_DIGITS = re.compile(r"\d[\d,.]*")
# Two digits of one number (`42`, `4.2`, `1,500`): what a number _missing_numbers asks for holds.
_TWO_DIGITS = re.compile(r"\d[,.]?\d")
# A setting's value as a file or a command's output states it: `workers = 4`, `lr: 0.0016`,
# `max-age=604800`, `// default 200`, "the default limit is 2 MB".
_SETTING = re.compile(
    r"(?P<name>\b[A-Za-z_][\w.-]*)[\"']?\??\s*[=:]\s*[\"']?(?P<value>-?\d+(?:\.\d+)?)(?!\w|[.,]\d)"
    r"|\b(?P<default>defaults?)\b(?:\s+(?:is|of|to|value|\w+\s+is))?\s*[=:]?\s*(?P<given>\d+(?:\.\d+)?)(?!\w|[.,]\d)",
    re.IGNORECASE,
)
_PATH_WORD = re.compile(r"\S*[A-Za-z]\S*/\S*|\S*/\S*[A-Za-z]\S*")  # a word of a line that is a path
_CLOSES = re.compile(r"\b(?:[Cc]loses|[Ff]ixes|[Rr]esolves)\s+#\d+")
_SEED = re.compile(r"\bseed\b\W{1,3}(\d{3,})", re.IGNORECASE)  # `Using --randomly-seed=2218634011`
_PLAIN_NUMBER = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?!\w|[.,]\d)")  # as a setting gives its value
_HIT_PLACE = re.compile(r"^\S+?\.[A-Za-z]\w{0,7}[:(]\d+")  # `app/join/[token]/page.tsx:13`
# A line of code that brings in a value a reader asks for by itself: a constant set (`SAFE_PREFIXES
# = ('=', '+')`, `const MAX_BYTES = 4096`), a pattern (`[a-z0-9_]{1,32}`), a shell default
# (`LIMIT=${LIMIT:-4096}`), an assertion's bound (`assert_max_queries(4)`, `assertNumQueries(4)`),
# a test's payload (`data:text/html,…`).
# A pattern built, whatever its characters: Elixir's sigil (`~r/@acme-qa\.test$/i`), a constructor
# given a string (`RegExp(r'^[\w.+-]+@…')`, `re.compile(r"…")`, `Regex::new(r"…")`).
_PATTERN_BUILT = re.compile(
    r"~r[/|\"'({\[]\S|\b(?:RegExp|Regex|re\.compile|Pattern\.compile|regexp\.(?:Must)?Compile)(?:::new)?\s*\(\s*r?[\"'/`]"
)
_VALUE_LINE = re.compile(
    r"^(?:export\s+|const\s+|final\s+|static\s+|pub\s+(?:const|static)\s+|readonly\s+)*[A-Z][A-Z0-9]*_?[A-Z0-9_]*"
    r"(?:\s*:\s*[\w\[\], ]+)?\s*=\s*(?:[\d\"'(\[{-]|\$\{)"
    r"|\[[^\]\s]{1,40}\](?:\{\d+(?:,\d*)?\}|[*+])"
    rf"|{_PATTERN_BUILT.pattern}"
    r"|\$\{\w+:-[^}]+\}"
    r"|\b(?:assert|expect)\w*\(\s*-?\d+(?:\.\d+)?\s*[,)]"
    r"|\bdata:[\w/+-]+[,;]"
    # a header or a keyed setting given a string (`headers["Referrer-Policy"] = "strict-origin…"`,
    # `res.setHeader('Cache-Control', 'no-store')`, nginx's `add_header X-Frame-Options DENY`)
    r"|\[\s*[\"'][\w.-]+[\"']\s*\]\s*=\s*[\"'][^\"']"
    r"|\b(?i:set_?header|add_?header|header)\s*\(\s*[\"'][\w-]+[\"']\s*,\s*[\"'][^\"']"
    r"|^add_header\s+[\w-]+\s+\S"
)
# What a test file's new line asserts of a string: the input a test gives (`expect(() =>
# normalizeEmail('anna+work@@gmail.com'), throwsFormatException)`), the value it expects.
_ASSERTS_STRING = re.compile(r"\b(?:assert|expect|refute|should)\w*\b.*?[\"'][^\"']*\w[^\"']*[\"']")
_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|spec|__tests__)/|[_.-](?:test|spec)s?\.\w+$|(?:^|/)test_\w+\.\w+$|Tests?\.\w+$"
)
# What an edit or a new file declares that a reader names it by: a route (`@app.get("/refunds/{id}")`,
# `router.post('/login'`, `HandleFunc("/healthz"`, `@GetMapping("/orders")`, `get "/status"`). Not a
# test's name: the summaries of the fresh and development sets tell a new test by what it checks
# ("a regression test with the report's payloads"), and no label there holds its name.
_DECLARED = re.compile(
    r"^(?:(?:@\w+\.|\w+\.)?(?:get|post|put|patch|delete|route|HandleFunc|Handle)\s*\(?\s*[\"'](?P<route>/[^\"'\s]*)[\"']"
    r"|@(?:Get|Post|Put|Patch|Delete|Request)Mapping\(\s*(?:value\s*=\s*)?\"(?P<mapping>/[^\"]*)\""
    r"|#\[(?:get|post|put|patch|delete)\(\"(?P<attribute>/[^\"]*)\")"
)
# Where a shell command writes: a redirect's file (`> out.log`, `>> notes.md`, not `2>&1`), `tee`'s;
# commands that edit the files they are given in place.
_REDIRECTED = re.compile(r"(?:(?<![\d&])>>?|\btee\s+(?:-a\s+)?)\s*([^\s&|;<>]+)")
_WRITE_MARKS = (">", "tee", "sed", "perl", "mv")  # what a command that _files_written reads holds
_EDITS_IN_PLACE = re.compile(r"^(?:sed|perl|gsed)(?:\s.*?)?\s-[a-zA-Z]*i|^(?:git\s+)?mv\s")
_NAMES_FILE = re.compile(r"[\w.-]/[\w./@+-]*\.[A-Za-z]\w{0,7}\b")  # a line of a survey: `./ledger/cli.py`
_IMPORT = re.compile(r"^\s*(?:import|from|use|require|#include|using|package)\b")
# A quoted string. Whether it holds a letter is asked of each match, not of the pattern: a letter
# searched for between the quotes tries every place of an unclosed quote's line again (quadratic).
_LITERAL = re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'")
# A command the session timed (`time mysql … < q.sql`): the shell's `real 0m3.911s` is its result.
_TIMED = re.compile(r"(?:^|&&|;|\||\()\s*(?:/usr/bin/)?time\s")
_TIME_REAL = re.compile(r"^real\s+(?:(\d+)m)?(\d+(?:\.\d+)?)s$")
_HOME = re.compile(r"^(?:/Users|/home)/[^/\s]+(?=/)|^/root(?=/)")  # a home folder, as `~` abbreviates it
# What a number an output prints is named by where it is the id of a thing: a job, a process, a run,
# an order, a request (`job=88121`, `pid 4312`, `order_id: 7741`, `#198`).
_KEYED_ID = re.compile(
    r"(?:\b(?i:id|\w+_id|job|pid|run|build|order|pr|issue|ticket|request|task|txn|tx)\s*[=:#]?\s*|\b[a-z]+Id\s*[=:]\s*|#)$"
)
# What a timed command's `time` prints of its peak memory (GNU's `-v`, BSD's `-l`): a result as its `real` is.
_PEAK_MEMORY = re.compile(r"^\s*(?:Maximum resident set size \(kbytes\):\s*\d+|\d+\s+maximum resident set size)\s*$")
# A test run's tally line, with the count of tests it ran or passed (flutter's `00:03 +7: All tests
# passed!`, ExUnit's `58 tests, 0 failures`, `7 passed in 0.4s`), and the model's words counting
# tests ("7 passing now", "all 58 tests pass").
_TALLY_COUNT = re.compile(
    r"\+(\d+)(?: ~\d+)?(?: -\d+)?: All tests passed|\b(\d+) (?:passed|passing|tests?|examples?|specs?)\b"
)
_COUNTED_TESTS = re.compile(r"\b(\d+) (?:(?:new |unit |more )?tests?|pass(?:ing|ed|es)?|examples?|specs?)\b")
_LINE_NUMBER = re.compile(r"^\s*\d+(?:\t|→)")  # the Read tool's numbering of a file's lines
# What a command's output names that the session may go on with: a duration or a size (`17.204s`,
# `17m 52s`, `88.3MB`), a figure with three digits or a decimal point (`503221`, `49,377`), a name
# with a figure in it: a version (`v1.8.2`, `mylib@4.2.0`, `12.1-2.deb11+1`), a pod
# (`worker-6c9d7f8b5-q4zrx`), a region (`prod-us2`), an image tag, a ticket (`LEGAL-88`); an e-mail.
# A token alone is no fact: those the model's next words or a later command repeat are (`_Echoes`).
# A run's characters; only a run with a figure, an "@", a joiner or two capitals is read (most of
# the model's words are plain: the lookahead, bounded by the run, skips them at C speed).
_ECHO_RUN = re.compile(
    r"\d+(?:\.\d+)?m \d+(?:\.\d+)?s\b"
    r"|(?<![^\s'\"`()\[\]{}<>;|=*,])(?=[^\s'\"`()\[\]{}<>;|=*,]*?(?:\d|@|_|-|[A-Z][^\s'\"`()\[\]{}<>;|=*,]*?[A-Z]))"
    r"(?:[^\s'\"`()\[\]{}<>;|=*,]|,(?=\d{3}\b))+"
)
_ECHO_MEASURE = re.compile(
    r"\d+(?:\.\d+)?(?:ms|s|m|h|min|[KMGT]i?B|kB|[KMGT]i)|\d+(?:\.\d+)?m \d+(?:\.\d+)?s"
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{3,}(?:\.\d+)?|\d+\.\d+"
)
_ECHO_NAME = re.compile(
    r"(?=[^/]*\d)(?=.*[A-Za-z])[\w.+@:-]{4,}|[\w.+/-]*[A-Za-z][\w.+/-]*:[\w.+-]*\d[\w.+-]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
)
# A command that asks its tool's version (`flutter --version`, `go version`, `kubectl version --client`):
# its banner's first line naming the tool gives the version the session works with (`Flutter 3.24.5 •
# channel stable • …`); the addresses it prints (the tool's own repository) it did not make.
_ASKS_VERSION = re.compile(r"^(?:\S+/)?(?P<tool>[A-Za-z][\w.-]*)(?:\s+[a-z][\w-]*)?\s+(?:--version|-V|version)(?:\s|$)")
# A container image with its tag, at a registry (`registry.fly.io/digest-prod:deployment-01JEB…`,
# `europe-west1-docker.pkg.dev/acme-data/ingest/ingest:1.15.1`): what a build pushed or a deploy runs.
_IMAGE_REF = re.compile(
    r"(?<![\w./@:-])(?:[a-z0-9-]+\.)+[a-z0-9-]+(?::\d+)?/[a-z0-9._-]+(?:/[a-z0-9._-]+)*:[\w][\w.-]{0,127}(?![\w./:-])"
)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@(?:[a-z0-9-]+\.)+[a-z]{2,}(?![\w.-])")
# a host named in full: the last of its names one a host ends in (not `model.cross.proj`, `Data.Map.Lazy`);
# not one a path follows (`registry.fly.io/digest-prod:…`): an image's or an address's, theirs to decide
_HOST = re.compile(
    r"(?<![\w.@/-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.){2,}(?:com|net|org|io|dev|app|cloud|internal|local|example)(?![\w./-])"
)
ADDRESSES_NAMED = 2  # an output naming more addresses lists them: none of them is the one the session turned on
IMAGES_NAMED = 2  # an output naming more images surveys a registry or a cluster: none is the one the session built
# A cloud resource a command names by its option or its verb: a cluster (`clusters get-credentials
# ingest-prod`, `--cluster acme-prod-eu`, `eks update-kubeconfig --name …`), a bucket (`--bucket …`, `s3://…`,
# `gs://…`), an environment or a stack (`--environment staging-eu`, `workspace select prod-eu`), an app
# of a platform (`fly … -a digest-prod`, `heroku … --app …`): a joined name, what a reader looks up.
_RESOURCE_NAMED = re.compile(
    r"(?:\bclusters\s+(?:get-credentials|describe|resize|update|upgrade)|--cluster(?:-name)?|\bupdate-kubeconfig\b.*?--name"
    r"|--bucket|--environment|--env|--stack|\bworkspace\s+select)[=\s]+['\"]?(?P<name>[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)\b"
    r"|\b(?P<bucket>(?:s3|gs)://[a-z0-9][a-z0-9._-]{2,62})"
)
_APP_NAMED = re.compile(r"^(?:fly|flyctl|heroku)\s.*?(?:\s-a|\s--app)[=\s]+(?P<name>[a-z][a-z0-9]*(?:-[a-z0-9]+)+)\b")
# A package a command pins to a version (`pip install libcst==1.5.0`, `npx markdownlint-cli@0.42.0`,
# `go get github.com/foo/bar@v1.8.2`): the version the session chose.
_PINNED = re.compile(
    r"(?<![\w/.@=-])(?P<package>@?[A-Za-z][\w./-]*)(?:==|@)(?P<version>v?\d+(?:\.\d+)+[\w.+-]*)(?![\w@/])"
)
# What a package manager changed, old and new version, as each prints it: poetry's `Updating urllib3
# (1.26.18 -> 1.26.20)`, cargo's `Updating h2 v0.3.24 -> v0.3.26`, go's `upgraded golang.org/x/net
# v0.23.0 => v0.33.0`, composer's `Upgrading laravel/framework (v11.30.0 => v11.31.0)`, bundler's
# `Installing rails 7.1.3 (was 7.0.8)`.
_VERSION = r"v?\d+(?:\.\d+)+(?:[-+.]?[A-Za-z0-9]+)*"
_VERSION_CHANGE = re.compile(
    rf"(?P<package>[@A-Za-z][\w@/.+-]*)\s+\(?(?P<old>{_VERSION})\s*(?:->|=>|→)\s*(?P<new>{_VERSION})\)?"
    rf"|(?P<installed>[@A-Za-z][\w@/.+-]*)\s+(?P<now>{_VERSION})\s+\(was\s+(?P<was>{_VERSION})\)"
)
# pip's version it replaced (`Found existing installation: Jinja2 3.1.3`) and those it installed
# (`Successfully installed jinja2-3.1.6 urllib3-2.2.3`).
_PIP_REPLACED = re.compile(
    rf"^\s*Found existing installation: (?P<package>[\w.-]+) (?P<version>{_VERSION})\s*$", re.MULTILINE
)
_APT_SET_UP = re.compile(
    r"^Setting up (?P<package>[\w.+-]+)(?::[\w-]+)? \((?P<version>\d[^()\s]*)\) \.\.\.", re.MULTILINE
)
# What a package manager prints of a package it added, with its version: go's `go: added
# golang.org/x/sync v0.8.0`, cargo's `Adding serde_json v1.0.128`, pnpm's `+ zod 3.23.8`, npm's and
# yarn's `+ zod@3.23.8`, `└─ zod@3.23.8`, poetry's `Installing httpx (0.27.2)`, mix's `New: jason 1.4.4`.
_PACKAGE_ADDED = re.compile(
    rf"^\s*(?:go: added|Adding|Installing|New:|\+|└─|Added)\s+(?P<package>@?[A-Za-z][\w@/.+-]*?)(?:@|\s+\(?)"
    rf"(?P<version>{_VERSION})\)?\s*$",
    re.MULTILINE,
)
_VERSION_MARKS = ("->", "=>", "→", "(was ", "Found existing", "Successfully installed", "Setting up")
# a manifest's dependency line in a diff: `-    "@acme/ui": "5.1.4",`, `+serde = "1.0.215"`, `+jinja2==3.1.6`;
# what may follow the version on its line is `_DIFFED_PIN_END`'s, checked apart: a `$` right after
# _VERSION's repeated parts would make a long run of letters after a version backtrack exponentially
_DIFFED_PIN = re.compile(
    rf"^(?P<side>[-+])[ \t]*[\"']?(?P<package>@?[A-Za-z][\w@/.+-]*?)[\"']?[ \t]*(?:[:=]|==)[ \t]*[\"']?[~^>=]*"
    rf"(?P<version>{_VERSION})",
    re.MULTILINE,
)
_DIFFED_PIN_END = re.compile(r"[\"']?,?[ \t]*(?:\n|$)")
_PIP_INSTALLED = re.compile(r"^Successfully installed (.+)$", re.MULTILINE)
# A package with its version in what a command printed of it: `Django==4.2.16` (pip freeze),
# `lodash@4.17.21` (npm ls), `Version: 1.26.20` beside `Name: urllib3` (pip show, poetry show).
_OUTPUT_PIN = re.compile(rf"(?<![\w@/.=:-])(?P<package>@?[A-Za-z][\w./-]*?)(?:==|@)(?P<version>{_VERSION})(?![\w@/.-])")
_VERSION_FIELD = re.compile(rf"^\s*version\s*:\s*(?P<version>{_VERSION})\s*$", re.IGNORECASE | re.MULTILINE)
_NAME_FIELD = re.compile(r"^\s*name\s*:\s*(?P<package>[\w.@/-]+)\s*$", re.IGNORECASE | re.MULTILINE)
VERSIONS_CHANGED = 3  # an output changing more versions refreshed a lockfile: none of them is the one the session moved
_MOVED = re.compile(rf"(?P<package>\S+) {_VERSION} -> (?P<version>{_VERSION})")  # a version change as listed
_PACKAGE_WORD = re.compile(r"[A-Za-z][\w.-]*")  # a package a command names: `jinja2` of `'jinja2==3.1.6'`
# A build's or a start's own result line, the time it took: `BUILD SUCCESSFUL in 17m 52s`,
# `Finished `dev` profile … in 48.71s`, `Started OrdersApplicationKt in 21.604 seconds`.
_CHECKS_ONLY = re.compile(r"\bcargo\s+(?:\+\S+\s+)?(?:check|clippy)\b")  # a check builds no artefact
_BUILD_TIME = re.compile(
    r"(?:^\s*|\s:\s)(?:BUILD (?:SUCCESSFUL|FAILED)|Finished\b.*\btarget\S*|Started \S+|✓ built|Compiled\b.*)\s+in\s+"
    r"(?:(?P<minutes>\d+)\s?m(?:in)?\s+)?(?P<seconds>\d+(?:\.\d+)?)\s?(?:s|sec|secs|seconds)?\s*(?:\(.*\))?$"
    r"|(?:^\s*|\s:\s)(?:BUILD (?:SUCCESSFUL|FAILED)|Started \S+)\s+in\s+(?P<whole_minutes>\d+)\s?m(?:in)?\s*$"
)
# A command that names the fields it prints (`jq '{grade, score}'`, `vault kv get -field=x`,
# `kubectl … -o jsonpath=…`, `--format=%h`, `--query`, `awk '{print $1, $NF}'`, `cut -d, -f2`):
# its short output is the answer it was run for, dates and names as well as figures. (Each
# lookahead bounded: a command of a million `jq ` stays linear.)
_SELECTS_FIELDS = re.compile(
    r"\bjq\b[^|]{0,40}?['\"\s](?:\.[\w\[]|\{)|\byq\s|-field=|-o\s*=?\s*(?:jsonpath|go-template|custom-columns)"
    r"|--format[= ]|--query[= ]|--jq\s|\bawk\s[^|]{0,80}?\bprint\b|\bcut\s+(?:-\S+\s+)*-[fc]"
)
SELECTED_LINES = 6  # a longer output of a command that selects fields is a listing, not its answer
_ONLY_BRACKETS = re.compile(r"[\[\]{}(),]*")
# A crontab's line: five schedule fields (one a `*` at least) and its command (`15 3 * * * backup …`).
_CRON_LINE = re.compile(r"^[ \t]*((?=[^\n]*\*)(?:[\d*/,-]+[ \t]+){4}[\d*/,A-Za-z-]+)[ \t]+\S.*$", re.MULTILINE)
# What a database or a runtime says after its error line, of the same failure (`DETAIL:  Key (email)=(…) already exists.`).
_ERROR_DETAIL = re.compile(r"[ \t]*(?:DETAIL|HINT|Caused by):[ \t]+\S.*")
# What frames a query's result: psql's and mysql's rules, their row counts.
# A command that queries a database and prints its result framed in columns.
_QUERIED = re.compile(r"\b(?:psql|mysql|mariadb|sqlite3|clickhouse-client|duckdb)\b")
_DATED = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}:\d{2}\b")
_ROW_COUNT = re.compile(r"\((\d+) rows?\)|(\d+) rows? in set\b.*")
_QUERY_FRAME = re.compile(r"[-+=|]+|\(\d+ rows?\)|\d+ rows? in set.*")
_QUERY_HEADER = re.compile(r"[A-Za-z_][\w()*]{0,40}")  # a column's name: `count`, `count(*)`, `max_id`
# A benchmark's result, run to be compared with the same run before or after a change: a time or
# allocations per operation (`43710 ns/op`), a rate (`Requests/sec:   4705.52`, `4412 samples/s`), a query's
# `Execution Time:`; each run is its own fact, as each build's time is.
_COMPARED = re.compile(
    r"\b(?:ns|µs|us|ms|B|allocs)/op\b|\b(?i:requests|req|queries|transactions|ops)(?:/s(?:ec)?|\s+per\s+second)\s*:"
    r"|\d\s?(?!it/)[A-Za-z]+/s(?:ec)?\b|\btps\s*="  # a throughput: `4412 samples/s`, `1.53 GB/s`, pgbench's `tps = …`
    r"|\bExecution Time:"
    # an infrastructure plan's changes (Terraform's `Plan: 17 to add, 0 to change, 17 to destroy.`):
    # each plan is read against the one before it
    r"|\b\d+ to (?:add|change|destroy|create|update|delete|replace|import)\b"
)
# A process's memory (`rss start 182.4 MB, end 611.9 MB`, `heapUsed 503.7 MB`, `Maximum resident set
# size (kbytes): 812344`): a leak hunt measures it before and after the fix. Searched only in a
# line holding one of _MEMORY_MARKS (lower case).
_MEMORY = re.compile(
    r"\b(?i:rss|heap(?:used|total|_used|_size)?|peak memory)\b[^\n]{0,24}?\d[\d.,]*\s?[KMG]i?B\b"
    r"|\bMaximum resident set size \(kbytes\):\s*\d"
    # a runtime's own report of its memory, the amount first (GHC's `+RTS -s`: `1,912,604,160 bytes
    # maximum residency`, `3731 MiB total memory in use`)
    r"|\d[\d.,]*\s?(?:[KMG]i?B|bytes)\s(?:[a-z]+\s){0,2}(?:memory|residency)\b"
)
_MEMORY_MARKS = ("rss", "heap", "peak memory", "resident", "memory", "residency")


def _compared(text: str) -> bool:
    """Whether a measurement is one the session compares run by run (`_COMPARED`, `_MEMORY`)."""
    if _COMPARED.search(text):
        return True
    lowered = text.lower()
    return any(mark in lowered for mark in _MEMORY_MARKS) and _MEMORY.search(text) is not None


# A query plan's node (`->  Bitmap Index Scan on … (cost=0.00..23.97 rows=505 width=0) (actual
# time=…)`): the plan's shape, its estimates and counts per node; the plan's result is its `Execution Time:`.
_PLAN_NODE = re.compile(r"\((?:cost=\d|actual time=\d)")
# A progress bar's line (tqdm's `50/50 [00:12<00:00,  4.1it/s]`, a bar of blocks): how far it got, not what it found.
_PROGRESS_BAR = re.compile(
    r"[█▏▎▍▌▋▊▉]{3,}|\d(?:it/s|s/it)\]"
    r"|^\s*(?:Get|Hit|Ign):\d+\s"  # apt's fetch of each package: `Get:1 http://deb.debian.org/… [2,439 kB]`
    r"|\d\s?[KMG]i?B\s*/\s*[\d.]+\s?[KMG]i?B\s*\(\s*\d+\s?%\)"  # a download's `24.9 MiB /  24.9 MiB (100 %)`
)
# A figure a command is given, an option's value included (`-t4`, `-n 1000`, `--count=3`).
_GIVEN_FIGURE = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
# A profile's table header (pprof's `flat  flat%   sum%  cum   cum%`, cProfile's `ncalls  tottime
# percall  cumtime`, perf's `Overhead  Command`): its rows are ordered hottest first, and the first is what it found.
_PROFILE_HEADER = re.compile(
    r"^[\s#]*(?:flat\s+flat%|ncalls\s+tottime|(?:Children\s+)?Self\s+Command|Overhead\s+Command)(?=\s|$)"
    r"|^=+ slowest (?:\d+ )?durations =+$"  # pytest's `--durations`: its slowest test first
)
# A profile's row, not its rule (`# ....`) nor the program's own entry (cProfile's `<module>`, `builtins.exec`).
_PROFILE_ROW = re.compile(r"^\s*\d(?!.*(?:<module>|builtins\.exec|\(main\)$))")
_IN_PROFILE = re.compile(r"\s*(?:[\d#]|$)")  # a line of a profile's table: a row, a rule, a blank
_PROFILE_MARKS = ("flat%", "tottime", "Overhead", "slowest")  # what every _PROFILE_HEADER holds
# A latency distribution's row (`     99%   71.66ms`, `p99: 34.1 ms`): the highest percentile is the one compared.
_PERCENTILE = re.compile(r"^\s*p?(\d{2}(?:\.\d+)?)%?:?\s+\d[\d.]*\s?(?:ns|us|µs|ms|s)$")
BUILD_SECONDS = 10  # a build or a start shorter than this is routine: no one compares its time
# A value alone on the last line of a chained command's output (`… && docker images --format
# '{{.Size}}'`: 311MB; `grep -c … && …`): the answer of the command's last part.
_BARE_VALUE = re.compile(r"[$€£]?\d[\d,]*(?:\.\d+)?\s?(?:[KMGT]i?B|kB|ms|s|%)?")
ECHO_TABLE_GAPS = 2  # a line of output with this many column gaps is a table's row
# A name of words joined (`test_refund_rounding`, `acme-prod-logs`, `KubeAPIErrorsHigh`): three words at least,
# a code name of two (`parse_args`, `orderId`) the model says of code it reads all the time.
_ECHO_WORDY = re.compile(
    r"[A-Za-z][a-z0-9]*(?:[-_][A-Za-z0-9]+){2,}|(?=(?:[a-z0-9]*[A-Z]){3})(?=.*[a-z])[A-Za-z][A-Za-z0-9]{5,}"
)
# A host's address a tool printed (`10.12.9.12`, `10.0.3.7:6379`): the host the session turned on, said again.
_ADDRESS = re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?::\d{2,5})?")
ECHO_TOKEN_CHARS = 120
ECHO_OUTPUTS = 12  # of the outputs since the model last spoke, the last this many are looked in
ECHO_LISTED = 3  # names of one output's lines, each its own, said again together go over its list
ECHO_SAID = 40  # of one message, the tokens looked for in the outputs before it (a longer list pastes, it does not go on with them)
# Who wrote a commit `git log`/`git show` prints: `Author: Mia Koch <mia@…>`, or the line a
# `--format` with `%an` gives, where a person's name is its capitalised words.
# git's word on the stash it saved or dropped names the commit it stood on and the stash's own id: no commit the session turned on
# Lines where git and docker print ids of objects that are not commits: a diff's blobs (`index
# 3f2a1b9..8c7d6e5 100644`), a tree or a blob (`cat-file`, `ls-tree`, `ls-files -s`), an image or
# a layer (`---> 3e1f2a9b8c7d`, `Successfully built 9a8b7c6d5e4f`, `sha256:…`).
_NOT_COMMIT_LINE = re.compile(
    r"\s*(?:index [0-9a-f]{7,40}\.\.|tree [0-9a-f]|\d{6} (?:blob|tree) |\d{6} [0-9a-f]{40} \d\t|blob [0-9a-f]"
    r"|--->|Successfully built )"
)
# a command that sets the work aside before it runs (`git stash -q && cargo bench; git stash pop`)
_STASHED_FIRST = re.compile(r"\bgit\s+stash(?:\s+(?:push|save)\b[^;&|]*|(?:\s+-[a-z]+)*\s*)(?:&&|;)")
# a count of what went wrong (`Found 1 error`, `due to 1 previous error`, `3 problems`)
_ERRORS_COUNTED = re.compile(r"\b\d+\s+(?:previous\s+)?(?:errors?|failures?|problems?)\b", re.IGNORECASE)
_PICKED = re.compile(r"\|\s*(?:grep|egrep|rg)\b")  # an output's lines a search picked out
_STASHED = re.compile(r"\s*(?:Saved working directory and index state|Dropped refs/stash)")
_GIT_HISTORY = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?(?:log|show)\b")
_PERSON = re.compile(r"\b[A-Z][a-z'’-]+(?:\s[A-Z][a-z'’-]+){1,2}\b")
AUTHORS_AT_MOST = 2  # a log of more authors is a history surveyed, not the commit the session turned on
_COLUMN_GAP = re.compile(r"\S(?: {2,}|\t)(?=\S)")  # between a table's columns
_FILE_LINE = re.compile(r"^[\w./@+-]+\.\w+[:(]\d+")  # a search's hit or a diagnostic: `app.py:12: …`
# Where a sentence of prose turns to another clause: "; ", ": ", " — ".
_MEASURED_CLAUSE_END = re.compile(r"[,;]\s+(?=[^\W\d])")  # between a result line's clauses: `…, longest batch 388 ms`
_CLAUSE_END = re.compile(r";\s+|:\s+|\s+[—–-]{1,2}\s+")
_PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‐": "-", "…": "..."})
_WORDS = re.compile(r"\w+")
_FENCE = re.compile(r"(?:`{3,}|~{3,})[\w+-]*")  # a code block's marker line
_LIST_NUMBER = re.compile(r"^[ \t]*\d{1,2}\.[ \t]", re.MULTILINE)
_TOKENS = re.compile(r"\w+|[^\w\s]")
# Files whose edits are prose: their words are the fact.
PROSE_EXTENSIONS = frozenset(("md", "markdown", "rst", "txt", "adoc"))
# Files whose lines set values: a line there giving a key a figure or a string is a setting chosen.
CONFIG_EXTENSIONS = frozenset(("yaml", "yml", "toml", "ini", "cfg", "conf", "env", "properties", "tfvars"))
_CONFIG_KEY = re.compile(r"^-?\s*([\w.-]+)\s*[:=]\s*(\S.*)$")  # a configuration's line: its key, its value
_CONFIG_VALUE = re.compile(r"^-?\s*[\w.-]+\s*[:=]\s*()(?:-?\d|[\"']|[\w./@+-]*[\d._@][\w./@+-]*\s*$)")
_NUMBER = re.compile(r"(?<![\w.])(~|≈)?(\d+(?:,\d{3})*(?:\.\d+)?)([kKM](?![\w]))?(\.\.\.|…)?(?![\w])")
# A summary says small figures in words ("only two weeklies remained").
_NUMBER_WORDS = (
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"),
)
_THOUSANDS = {"k": 1_000, "K": 1_000, "M": 1_000_000}  # "180k SKUs", "312M rows": said round
_APPROXIMATE = re.compile(r"\b(?:about|around|approximately|approx|roughly|nearly|almost|some|over|under|~|≈)\s*$")
# The words that say a figure was rounded (not a bound: "over 200 runs" is no 187).
_ROUNDED = re.compile(r"(?:\b(?:about|around|approximately|approx|roughly)|~|≈)\s*$")
# Word-like file extensions a sentence ends with are not paths ("e.g", "i.e").
_NOT_FILES = {"e.g", "i.e", "etc.", "vs."}
_NEGATIONS = {
    *("never", "not", "dont", "don", "avoid", "without", "no", "forbid", "forbidden", "mustn", "shouldn", "cannot"),
    *("can't", "won", "isn", "doesn", "didn", "aren", "wasn"),
}
# Words a summary uses for the session's, one fixed list (after stemming): each group is one word.
_SYNONYMS = {
    word: group[0]
    for group in (
        ("prefer", "rather"),
        ("add", "introduc", "pull"),
        ("remov", "delet", "drop", "strip"),
        ("fail", "error", "broke", "broken", "crash"),
        ("chang", "modify", "modifi", "updat", "edit", "alter"),
        ("keep", "stay", "remain", "retain", "preserv"),
        ("dependency", "dependenci", "package", "librari", "library"),
        ("config", "configuration", "setting"),
        ("folder", "directory", "directori", "dir"),
        ("function", "method", "func", "fn"),
        ("run", "ran", "execut", "invok"),
        ("fast", "faster", "quick", "speed"),
        ("big", "larg", "huge", "size"),
        ("minut", "mins"),
        ("second", "sec", "secs"),
        ("cause", "reason"),
    )
    for word in group
}
_STOPWORDS = frozenset(
    re.findall(
        r"\S+",
        "a an the and or but if then else of to in on at by for with from into onto as is are was were be "
        "been being it its this that these those there here i you we he she they me us him them my your our "
        "their his her do does did doing done have has had having can could will would shall should may "
        "might must also just so such than too very what which who whom whose when where why how all any "
        "each both few more most other some own same s t ll re ve d m please ok okay yes let lets now then "
        "again up down out off over under about after before while once only very still even well really "
        "thing things get got make made use used using user asked asks wants want wanted said says told tell "
        "telling like need needs needed go going",
    )
)


@dataclass(frozen=True)
class Fact:
    kind: str
    text: str  # verbatim, as the entry holds it (cut to FACT_CHARS); an edit's "path: old → new"
    entry: int  # the entry's place in the savepoint's history, from 1 (recall's and show's numbering)
    detail: str | None = None  # a failed command's error line; the output line an identifier or measurement is on
    # DROPPED, or POSSIBLY_DROPPED where the summary holds something like it, or the fact is a
    # guess (a file a search found, a measurement before an output's result, a decision, an edit)
    confidence: str = DROPPED


@dataclass
class Dropped:
    instance: str
    sequence: int
    summary: str | None  # the compaction summary compared against; None when there is none
    summary_source: str  # where it came from
    facts: list[Fact] = field(default_factory=list)  # the facts the summary does not contain
    kept: int = 0  # facts the summary contains
    entries: int = 0
    copy_note: str | None = None  # resurrect.copy_note: git's copy read in place of an altered local one

    def ref(self, fact: Fact) -> str:
        """The fact's entry as `precompact show` takes it."""
        return f"{self.sequence}:{fact.entry}"

    def by_kind(self) -> list[tuple[str, list[Fact]]]:
        """The facts grouped by kind, in the order of KINDS (within a kind, the surer first)."""
        return [(kind, mine) for kind in KINDS if (mine := [f for f in self.facts if f.kind == kind])]

    def possibly(self) -> int:
        return sum(f.confidence == POSSIBLY_DROPPED for f in self.facts)

    def to_json(self) -> dict:
        return {
            "instance": self.instance,
            "sequence": self.sequence,
            "summary_source": self.summary_source,
            "summary": self.summary,
            "entries": self.entries,
            "kept": self.kept,
            # vars, not asdict: a fact's fields are flat, and asdict's deep copy was 0.3 s of 32,000 facts
            "dropped": [{**vars(f), "ref": self.ref(f)} for f in self.facts],
        }


# --- the rule ---------------------------------------------------------------------------------


def normalised(text: str) -> str:
    """`text` as the rule compares it: NFKC, case-folded, plain quotes and dashes, its words
    joined by single spaces."""
    return " ".join(_WORDS.findall(_plain(text).casefold()))


def _plain(text: str) -> str:
    """`text` in NFKC with plain quotes and dashes. ASCII text is both already: neither is run on
    it (translate looks up each character, for every message and fact of a session)."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text).translate(_PLAIN)


def content_words(text: str) -> set[str]:
    """The words of `text` that carry its meaning, stemmed, negations made one word ("not")."""
    found = set()
    for word in normalised(text).split():
        if word in _NEGATIONS:
            found.add("not")
        elif word not in _STOPWORDS and not word.isdigit() and len(word) > 1:
            found.add(_stem(word))
    return found


# A 100 MB session stems 800,000 words of a few tens of thousands: each is stemmed once (bounded,
# as the viewer lists savepoint after savepoint in one process).
@functools.lru_cache(maxsize=1 << 17)
def _stem(word: str) -> str:
    """`word` without its inflection, and a final "e" (`ignore`, `ignored`, `ignoring`: `ignor`),
    then as the synonyms' group says it."""
    for suffix, instead in (
        ("ingly", ""),
        ("edly", ""),
        ("ing", ""),
        ("ies", "y"),
        ("ied", "y"),
        ("ed", ""),
        ("es", ""),
        ("ly", ""),
        ("s", ""),
    ):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)] + instead
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return _SYNONYMS.get(word, word)


def sentences(text: str) -> list[str]:
    """`text` cut into sentences and list items; never at a decimal point or a file extension."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def numbers(text: str) -> list[tuple[str, float, bool]]:
    """The numbers of `text`: (digits without thousands separators, the share of it the figure may
    be off by, cut off with "…"): 0 when said exactly, APPROXIMATE_SHARE when said approximately,
    ROUND_SHARE when said rounded and round ("around 60", "180k")."""
    plain = _plain(text)
    found = []
    for m in _NUMBER.finditer(plain):
        digits = m.group(2).replace(",", "")
        before = plain[max(0, m.start() - 16) : m.start()]
        value = _multiplied(digits, m.group(3)) if m.group(3) else digits
        rounded = bool(m.group(3)) or (
            bool(m.group(1) or _ROUNDED.search(before)) and "." not in digits and digits.endswith("0")
        )
        approximate = bool(m.group(1)) or bool(_APPROXIMATE.search(before))
        found.append((value, ROUND_SHARE if rounded else APPROXIMATE_SHARE if approximate else 0.0, bool(m.group(4))))
    return found


# A figure with its unit of time or size (`2874.552 ms`, "2.9 s", `1.8G`, "1.8 GB"): a summary gives
# a measurement in the unit a reader reads it in, not always the tool's.
_UNIT_VALUE = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(ns|µs|us|ms|s|secs?|seconds?|mins?|minutes?|h|hours?|bytes|B|[kKMGT]i?B?)(?![\w/])"
)
_UNITS: dict[str, tuple[str, tuple[float, ...]]] = {
    **dict.fromkeys(("ns",), ("time", (1e-9,))),
    **dict.fromkeys(("µs", "us"), ("time", (1e-6,))),
    **dict.fromkeys(("ms",), ("time", (1e-3,))),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), ("time", (1.0,))),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), ("time", (60.0,))),
    **dict.fromkeys(("h", "hour", "hours"), ("time", (3600.0,))),
    **dict.fromkeys(("B", "bytes"), ("size", (1.0,))),
    # a size's prefix is read both ways: tools differ on 1000 and 1024 (`du -h`'s `1.8G` is GiB)
    **{
        prefix + tail: ("size", (1000.0**power, 1024.0**power))
        for power, prefix in enumerate("kMGT", start=1)
        for tail in ("", "B", "iB", "i")  # Kubernetes says `9214Mi`
    },
    **{"K" + tail: ("size", (1e3, 1024.0)) for tail in ("", "B", "iB", "i")},
}


_BOUND_BEFORE = re.compile(
    r"\b(?:under|below|less than|at most|within|up to|no more than|reaches|exceeds|crosses)\s+(?:the\s+|a\s+)?$",
    re.IGNORECASE,
)
_BOUND_AFTER = re.compile(r"\s*(?:limit|cap|budget|ceiling)\b", re.IGNORECASE)
_BARE_SIZE = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)([KMGT]i?)(?=\s|$)")  # `du -h`'s `1.8G`, Kubernetes's `9214Mi`


def _unit_values(text: str, bounds: bool = True) -> list[tuple[str, str, float, float]]:
    """The figures of `text` said with a unit of time or size: (digits, dimension, value in the
    dimension's base unit, half the step of its last digit, in that unit), once per reading of its
    prefix; without `bounds`, not a figure said as a bound ("under the 20 MB limit", "fails when it
    reaches 20 MB"): a limit set is no measure taken, however near the measure is to it."""
    found = []
    plain = _plain(text)
    for m in _UNIT_VALUE.finditer(plain):
        if not bounds and (
            _BOUND_BEFORE.search(plain, max(0, m.start() - 24), m.start()) or _BOUND_AFTER.match(plain, m.end())
        ):
            continue
        digits = m.group(1).replace(",", "")
        dimension, scales = _UNITS.get(m.group(2), ("", ()))
        step = 0.5 * 10.0 ** -len(digits.partition(".")[2])
        found += [(digits, dimension, float(digits) * scale, step * scale) for scale in scales]
    return found


def _multiplied(digits: str, suffix: str) -> str:
    """ "180" and "k": "180000"; "3.1" and "k": "3100"."""
    value = round(float(digits) * _THOUSANDS[suffix], 6)
    return str(int(value)) if value == int(value) else str(value)


def _same_number(fact: str, said: str, share: float, cut: bool) -> bool:
    """Whether the summary's `said` number is the fact's: equal, rounded to fewer decimals, cut off
    ("84.14999…" for 84.1499999), or within `share` of it when said approximately."""
    if fact == said:
        return True
    try:
        value, given = float(fact), float(said)
    except ValueError:
        return False
    if cut and len(said.replace(".", "")) >= 3 and fact.startswith(said):
        return True
    decimals = len(said.split(".")[1]) if "." in said else 0
    if "." in fact and decimals < len(fact.split(".")[1]) and round(value, decimals) == given:
        return True
    return value != 0 and abs(value - given) <= share * abs(value)


@dataclass
class Session:
    """What the rule knows of the whole session when it judges one fact: the paths it names, by
    file name, and every sentence-like fact (a summary sentence another fact matches clearly
    better is that fact's)."""

    paths: dict[str, set[str]] = field(default_factory=dict)  # file name -> the session's paths of that name
    said: list[set[str]] = field(default_factory=list)  # content words of each request, constraint, decision
    saying: dict[str, list[int]] = field(default_factory=dict)  # a content word -> the `said` holding it
    failures: dict[str, int] = field(default_factory=dict)  # a content word -> how many failed commands say it
    words: dict[str, set[str]] = field(default_factory=dict)  # a sentence fact's text -> its content words, made once
    asked: list[str] = field(default_factory=list)  # the user's requests and constraints: the commands they name
    _asked_words: str | None = None  # `asked` normalised, made when first looked in

    def user_named(self, command: str) -> bool:
        """Whether the user's own words give `command` (`CI runs make lint`): a summary restating
        the request names it whatever the session's runs of it did."""
        said = normalised(command)
        if not said:
            return False
        if self._asked_words is None:
            self._asked_words = f" {' '.join(normalised(text) for text in self.asked)} "
        return f" {said} " in self._asked_words

    @classmethod
    def of(cls, found: Iterable[Fact]) -> Session:
        session = cls()
        for fact in found:
            if fact.kind in _PATH_KINDS:
                session.paths.setdefault(PurePosixPath(fact.text).name, set()).add(fact.text.lstrip("./"))
            elif fact.kind in _SAID_KINDS:
                if fact.kind != "decision":
                    session.asked.append(fact.text)
                words = session.words[fact.text] = content_words(fact.text)
                for word in words:
                    session.saying.setdefault(word, []).append(len(session.said))
                session.said.append(words)
            elif fact.kind == "failed command":
                for word in _failure_words(fact):
                    session.failures[word] = session.failures.get(word, 0) + 1
        return session


_PATH_KINDS = ("file read", "file edited", "path")
_SAID_KINDS = ("request", "constraint", "decision")
_INSIDE_SENTENCES = ("path", "url", "identifier")
_HOLDING_NAMES = ("failed command", "identifier", "measurement")  # what a listed id or figure alone may stand in


class Summary:
    """A compaction summary, ready to be asked whether it contains a fact."""

    def __init__(self, text: str, cwd: str | None = None):
        self.text = text
        self._plain = _plain(text)
        self._words = f" {normalised(text)} "
        self._cwd = cwd.rstrip("/") + "/" if cwd else None
        self._said = sentences(text)
        self._sentences = [content_words(sentence) for sentence in self._said] or [set()]
        self._all = set().union(*self._sentences)
        # word -> the sentences holding it: a fact is matched against those alone (one that shares
        # no word with it covers none of it), not against every sentence of the summary.
        self._holding: dict[str, list[int]] = {}
        for i, sentence in enumerate(self._sentences):
            for word in sentence:
                self._holding.setdefault(word, []).append(i)
        said = numbers(_LIST_NUMBER.sub(" ", text))  # "5. Problem Solving:" states no 5
        self._exact = {n for n, _, _ in said}
        self._worded_words = {w for w in _WORDS.findall(text.casefold()) if w in _NUMBER_WORDS}
        self._worded = {str(_NUMBER_WORDS.index(w)) for w in self._worded_words}
        self._loose = [(n, approximate, cut) for n, approximate, cut in said if approximate or cut]
        self._in_units = [(dimension, value, step) for _, dimension, value, step in _unit_values(text, bounds=False)]
        self._elided = [
            [normalised(piece) for piece in re.split(r"\.\.\.|…", quote) if normalised(piece)]
            for quote in re.findall(r"[\"“']([^\"”\n]*?(?:\.\.\.|…)[^\"”\n]*?)[\"”']", text)
        ]
        self._rivals: tuple[Session, dict[int, list[tuple[float, set[str]]]]] | None = None
        self._failures_said: list[str] | None = None  # its sentences that tell something went wrong, casefolded

    def contains(self, fact: Fact, session: Session | None = None) -> bool:
        return self.judge(fact, session) == KEPT

    def judge(self, fact: Fact, session: Session | None = None) -> str:
        """KEPT, POSSIBLY_DROPPED or DROPPED: how much of `fact` the summary holds."""
        session = session or Session()
        if fact.kind in _PATH_KINDS:
            return self._path(fact.text, session)
        if self._holds(fact.text) and not (fact.kind == "failed command" and self._user_named_failure(fact, session)):
            return KEPT
        if fact.kind in _SAID_KINDS:
            if self._holds_each_sentence(fact.text):
                return KEPT
            # a decision's reason, and the reason a constraint's colon opens, are kept only with it
            judged = self._sentence(fact.text, session, fact.kind == "decision")
            if judged == KEPT and fact.kind == "constraint" and not self._holds_reason(fact.text, _colon_reason):
                return POSSIBLY_DROPPED
            # a constraint's bound said in words ("more than a second or two", "at most three
            # retries") is the constraint: a summary's "keep locks short" has lost it
            if judged == KEPT and fact.kind == "constraint" and self._bound_in_words_lost(fact.text):
                return POSSIBLY_DROPPED
            return judged
        if fact.kind == "identifier":
            issue = re.search(r"#\d+$", fact.text)  # "Closes #198" is kept by "#198"
            seed = _SEED.search(fact.text)  # "--randomly-seed=2218634011" by "2218634011"
            pinned = _PINNED.fullmatch(fact.text)  # "libcst==1.5.0" by "libcst 1.5.0"
            # "urllib3 1.26.18 -> 1.26.20" by "urllib3 … 1.26.20", `jinja2-3.1.6` by "jinja2 3.1.6"
            moved = (
                _MOVED.fullmatch(fact.text)
                or _PINNED.fullmatch(re.sub(r"-(?=v?\d[^-]*$)", "==", fact.text))
                or _OUTPUT_PIN.fullmatch(fact.text)
            )
            return (
                KEPT
                if any(len(t) >= 7 and (t.startswith(fact.text[:7]) and fact.text.startswith(t)) for t in self._hexes())
                or (issue and _whole(self._plain, issue.group(0)))
                or (seed and _whole(self._plain, seed.group(1)))
                or (pinned and self._pin_said(pinned))
                or (moved and self._pin_said(moved))
                else DROPPED
            )
        if fact.kind == "measurement":
            return self._measurement(fact.text)
        if fact.kind == "failed command":
            judged = self._command(fact.text, session)
            if judged == KEPT and self._user_named_failure(fact, session):
                judged = POSSIBLY_DROPPED
            if judged != KEPT and fact.detail and self._error(fact.detail):
                return KEPT
            return KEPT if self._failure_told(fact, session) or self._failure_named(fact) else judged
        if fact.kind == "edit":
            return self._edit(fact.text, session)
        if fact.kind == "setting":
            return self._setting(fact.text)
        return DROPPED

    # -- the forms -----------------------------------------------------------------------------

    def _user_named_failure(self, fact: Fact, session: Session) -> bool:
        """A check the user named (`make lint` of "CI runs make lint, keep it green") is named by
        the summary's restated request whatever its runs did: only the failure's own words (its
        error line told or named) keep this run of it."""
        return bool(fact.detail) and session.user_named(command_core(fact.text))

    def _holds(self, form: str) -> bool:
        if _whole(self.text, form):
            return True
        words = normalised(form)
        return bool(words) and f" {words} " in self._words

    def _holds_each_sentence(self, text: str) -> bool:
        """The summary quotes every sentence of a message, where its own sentences cut the quote
        apart (and the rule took some out, " … "): each is said, word for word."""
        said = [sentence for piece in text.split(" … ") for sentence in sentences(piece)]
        return len(said) > 1 and all(self._holds(sentence) for sentence in said)

    def _pin_said(self, pinned: re.Match[str]) -> bool:
        package = pinned.group("package").rstrip("/").rpartition("/")[2]
        version = pinned.group("version")
        said = _whole(self._plain, version) or _whole(self._plain, version.removeprefix("v"))
        return said and f" {normalised(package)} " in self._words

    def _hexes(self) -> list[str]:
        # a revision is named by its file too: `4c2d9e7a1b3f_refunds_table.py`
        plain = self._plain.casefold()
        return [t.casefold() for t in _HEX.findall(plain) + _REVISION_FILE.findall(plain)]

    def _failures_told(self, count: int) -> bool:
        """One summary sentence says that `count` things failed, in figures or words ("Two
        statement tests failed"); not a single failure: "1 failure" is said of any."""
        said = {str(count)} | ({_NUMBER_WORDS[count]} if count < len(_NUMBER_WORDS) else set())
        return count > 1 and any(
            _FAILED_SAID.search(sentence) and said & set(_WORDS.findall(sentence.casefold())) for sentence in self._said
        )

    def _in_other_unit(self, digits: str, units: list[tuple[str, str, float, float]]) -> bool:
        """The summary gives the figure `digits` of a line in another unit of its dimension, as
        precisely as the summary's figure says ("2.9 s" of `2874.552 ms`, "1.8 GB" of `1.8G`)."""
        return any(
            dimension == said_dimension and abs(value - said) <= step * (1 + 1e-9)
            for number, dimension, value, _ in units
            if number == digits
            for said_dimension, said, step in self._in_units
        )

    def _has_number(self, value: str) -> bool:
        if value in self._exact or value in self._worded:
            return True
        if "." in value:  # rounded to fewer decimals
            decimals = value.partition(".")[2]
            try:
                number = float(value)
            except ValueError:
                return False
            for places in range(len(decimals)):
                if f"{round(number, places):.{places}f}" in self._exact:
                    return True
        return any(_same_number(value, said, approximate, cut) for said, approximate, cut in self._loose)

    def _sentence(self, text: str, session: Session, with_reason: bool = False) -> str:
        """A sentence is kept when one summary sentence holds half its content words (and no
        near-identical fact of the session matches that one better), every number it gives, and,
        for a decision, the summary holds REASON_COVERAGE of the words of its reason: a summary
        that keeps the choice and loses why has dropped the why."""
        if self._elision(text):
            return KEPT
        words = session.words.get(text) or content_words(text)
        if not words:
            return DROPPED
        best = 0.0
        for i in sorted({i for word in words for i in self._holding.get(word, ())}):
            sentence = self._sentences[i]
            cover = len(words & sentence) / len(words)
            if cover <= best:
                continue
            # A summary sentence that a near-identical fact (half its words the same) matches
            # better restates that one ("never touch the payroll table" is not "…the invoice table").
            rival = (
                next(
                    (
                        c
                        for c, other in self._best_matched(session, i)
                        if other != words and 2 * len(other & words) >= len(words)
                    ),
                    0.0,
                )
                if cover >= KEPT_COVERAGE
                else 0.0
            )
            best = cover if rival <= cover else min(cover, KEPT_COVERAGE - 0.01)
        if (
            best >= KEPT_COVERAGE
            and len(words & self._all) >= min(2, len(words))
            and not self._missing_numbers(text)
            and (not with_reason or self._holds_reason(text))
        ):
            return KEPT
        return POSSIBLY_DROPPED if best >= POSSIBLE_COVERAGE else DROPPED

    def _bound_in_words_lost(self, text: str) -> bool:
        """`text` says a number from two to twenty in words that the summary says neither in
        words nor in figures ("one" is said of anything)."""
        said = {w for w in _WORDS.findall(text.casefold()) if w in _NUMBER_WORDS[2:]}
        return any(w not in self._worded_words and str(_NUMBER_WORDS.index(w)) not in self._exact for w in said)

    def _holds_reason(self, text: str, reason_of: Callable[[str], set[str]] | None = None) -> bool:
        """The summary holds REASON_COVERAGE of the words of the reason a sentence gives (`_reason`,
        or `reason_of`'s), or it gives none."""
        reason = (reason_of or _reason)(text)
        return not reason or len(reason & self._all) >= REASON_COVERAGE * len(reason)

    def _missing_numbers(self, text: str) -> list[str]:
        """The exact numbers of `text` (two digits or more, not part of a date, a line number…) the
        summary does not give; a figure said approximately ("about 30M rows") a restatement may leave out."""
        # Text of ASCII without two digits of one number has none of two digits or more (NFKC makes
        # none of it, and what _NOT_NUMBERS takes out leaves a space): not worth _NOT_NUMBERS.
        if text.isascii() and not _TWO_DIGITS.search(text):
            return []
        return [
            n
            for n, share, _ in numbers(_NOT_NUMBERS.sub(" ", text))
            if not share and len(n.replace(".", "")) >= 2 and not self._has_number(n)
        ]

    def _failure_told(self, fact: Fact, session: Session) -> bool:
        """The summary tells the failure in its own words: one sentence holds FAILURE_COVERAGE of
        the words of the command and its error line, one of them a word no other failed command of
        the session says (`pytest` is every test run's), and the summary every number the line gives."""
        words = _failure_words(fact)
        if not words or self._missing_numbers(_error_figures(fact.detail or "")):
            return False
        own = {word for word in words if session.failures.get(word, 0) <= 1}
        return any(
            len(words & sentence) >= 2
            and len(words & sentence) >= FAILURE_COVERAGE * len(words)
            and (own & sentence or not own)
            for sentence in self._sentences
        )

    def _failure_named(self, fact: Fact) -> bool:
        """The summary names what the failure's error line is about: the program not found
        ("adb not on PATH" of `bash: adb: command not found`), the name it quotes ("NameError for
        ZoneInfo" of `name 'ZoneInfo' is not defined`), the option or variable it names
        (`unrecognized arguments: --detect-anomaly`, `JAVA_HOME is not set`), and every number it gives."""
        detail = fact.detail or ""
        if self._missing_numbers(_error_figures(detail)):  # "after 94932 retries" is another failure
            return False
        subjects = [name.casefold() for name in _failure_subjects(detail)]
        if not subjects:
            return False
        # in a sentence that tells something went wrong: "urlsplit scheme/netloc checks" names the
        # function the fix used, not the `Undefined name urlsplit` the lint failed on
        if self._failures_said is None:
            self._failures_said = [sentence.casefold() for sentence in self._said if _tells_failure(sentence)]
        # a program or module not found is told as missing ("adb not on PATH", "no lintr"): a
        # sentence naming the program for what it later reported has not told that it was absent
        absent = _FAILURE_SUBJECT.search(detail) is not None
        return any(
            _whole(sentence, name) and (not absent or not _ABSENCE_WORDS.isdisjoint(_WORDS.findall(sentence)))
            for sentence in self._failures_said
            for name in subjects
        )

    def _best_matched(self, session: Session, at: int) -> list[tuple[float, set[str]]]:
        """The two sentence facts of `session` that summary sentence `at` matches best (their
        share of content words it holds), computed once per sentence and session."""
        if self._rivals is None or self._rivals[0] is not session:
            self._rivals = (session, {})
        known = self._rivals[1]
        if at not in known:
            shared = Counter(chain.from_iterable(session.saying.get(word, ()) for word in self._sentences[at]))
            best: list[tuple[float, set[str]]] = []
            for cover, index in sorted(((n / len(session.said[i]), i) for i, n in shared.items()), reverse=True):
                if all(session.said[index] != other for _, other in best):
                    best.append((cover, session.said[index]))
                if len(best) == 2:
                    break
            known[at] = best
        return known[at]

    def _elision(self, text: str) -> bool:
        """The summary quotes the fact with a part left out: its start and end, in order."""
        said = normalised(text)
        for pieces in self._elided:
            if sum(len(p.split()) for p in pieces) >= 3 and said.startswith(pieces[0]) and said.endswith(pieces[-1]):
                at = 0
                for piece in pieces:
                    at = said.find(piece, at)
                    if at < 0:
                        break
                    at += len(piece)
                else:
                    return True
        return False

    def _measurement(self, line: str) -> str:
        """Kept when the summary gives half the line's telling numbers: those of two digits or
        more where it has any (a summary says a "6" or a "1" of something else any day: "1412
        examples, 0 failures, 6 pending" is not kept by it)."""
        timed = _TIME_REAL.match(line)
        if timed:  # `real 0m3.911s` is kept by "3.9 s"
            seconds = int(timed.group(1) or 0) * 60 + float(timed.group(2))
            return KEPT if self._has_number(f"{seconds:.3f}".rstrip("0").rstrip(".")) else DROPPED
        built = _BUILD_TIME.search(line) if len(line) <= 200 else None
        if built:  # `BUILD SUCCESSFUL in 17m 52s` is kept by "17m 52s", "1072 s", "17.9 min"
            minutes = int(built.group("minutes") or built.group("whole_minutes") or 0)
            seconds = minutes * 60 + float(built.group("seconds") or 0)
            said = [f"{seconds:.3f}".rstrip("0").rstrip(".")]
            if minutes and round(seconds / 60, 1) % 1:  # "6.5 minutes" of 6m 31s; a whole "5" is any five
                said.append(f"{seconds / 60:.1f}")
            duration = line[built.end() - len(built.group(0).rpartition(" in ")[2]) :].strip()
            return KEPT if self._holds(duration) or any(self._has_number(n) for n in said) else DROPPED
        # a failing run's tally is told by how many failed ("two statement tests failed"): the rest is the suite's size
        failed = _FAILED_COUNT.search(line) if _TEST_TALLY.search(line) else None
        if failed and self._failures_told(int(failed.group(1))):
            return KEPT
        units = _unit_values(line)
        # a size of a unit's letter alone (`du -h`'s `1.8G`) is a figure all the same
        values = [n for n, _, _ in _telling_numbers(_BARE_SIZE.sub(r"\1 \2", line))]
        if not values:
            return KEPT if self._holds(line) else DROPPED
        found = sum(self._has_number(n) or self._in_other_unit(n, units) for n in values)
        if found * 2 >= len(values):
            return POSSIBLY_DROPPED if self._a_clause_untold(line) else KEPT
        return POSSIBLY_DROPPED if found else DROPPED

    def _a_clause_untold(self, line: str) -> bool:
        """A result line that measures several things, a clause each (`updated 51877 rows in 52
        batches, longest batch 388 ms`; `rss … ; heapUsed start 96.1 MB, end 503.7 MB`), is kept
        only with a figure of each clause that measures something of its own: the summary's "about
        52k rows in 52 batches" does not say how long a batch held its lock. A test run's tally
        is one count of its tests, told as a whole."""
        if _TEST_TALLY.search(line):
            return False
        # not how long the command took (`done in 41.7s`) nor how much it went through (`checked 12000 lines`)
        said = (_GONE_THROUGH.sub(" ", _RUN_DURATION.sub(" ", clause)) for clause in _MEASURED_CLAUSE_END.split(line))
        clauses = [clause for clause in said if _reports_work(clause)]
        if len(clauses) < 2:
            return False
        return any(
            not any(self._has_number(n) or self._in_other_unit(n, _unit_values(clause)) for n, _, _ in figures)
            for clause in clauses
            if (figures := _telling_numbers(_BARE_SIZE.sub(r"\1 \2", clause)))
        )

    def _setting(self, line: str) -> str:
        """A setting's value (`workers = 4`, `default 200`) is kept by a summary sentence that
        gives it with the setting's name, or as a default: "200 runs" is not "default 200"; a
        crontab line by its schedule, said as it is (`15 3 * * *`)."""
        schedule = _CRON_LINE.match(line)
        if schedule:
            return KEPT if _whole(self._plain, schedule.group(1)) else DROPPED
        given = [(m.group("value") or m.group("given"), m.group("name") or "default") for m in _SETTING.finditer(line)]
        return KEPT if given and all(self._setting_said(value, name) for value, name in given) else DROPPED

    def _setting_said(self, value: str, name: str) -> bool:
        for sentence in self._said:
            words = f" {normalised(sentence)} "
            if (f" {normalised(name)} " in words or " default" in words) and any(
                _same_number(value, said, share, cut) for said, share, cut in numbers(sentence)
            ):
                return True
        return False

    def _error(self, line: str) -> bool:
        if self._holds(line):
            return True
        message = line.split(":", 1)[1] if ":" in line else ""
        return len(normalised(message).split()) >= 3 and self._holds(message.strip())

    def _command(self, command: str, session: Session) -> str:
        core = command_core(command)
        if core != command and self._holds(core):
            return KEPT
        words = core.split()
        if not words:
            return DROPPED
        program = PurePosixPath(words[0]).name
        arguments = [a.split("=", 1)[-1] for a in words[1:] if not re.fullmatch(r"-{1,2}[\w-]+", a)]
        arguments = [a.strip("'\"") for a in arguments if len(a.strip("'\"")) >= 2]
        if f" {normalised(program)} " not in self._words:
            return DROPPED
        if not arguments:
            return POSSIBLY_DROPPED
        found = sum(self._argument(a, session) for a in arguments)
        if found == len(arguments):
            return KEPT
        return POSSIBLY_DROPPED if found * 2 >= len(arguments) else DROPPED

    def _argument(self, argument: str, session: Session) -> bool:
        if re.fullmatch(r"\d+(?:\.\d+)?", argument):
            return self._has_number(argument)
        if "/" in argument or PurePosixPath(argument).suffix[1:].casefold() in FILE_EXTENSIONS:
            return self._path(argument, session) == KEPT
        return self._holds(argument)

    def _edit(self, text: str, session: Session) -> str:
        """An edit is kept when the summary names a code name it brought in (`seen.entry`), or
        most of the words and every number it brought in; one that changed no word and no number
        (a plural, quotes, spacing) says no more than its file."""
        path, _, change = text.partition(": ")
        old, _, new = change.partition(" → ")
        if _is_prose(path):
            return self._sentence(new, session)
        declared = _DECLARED.match(new) if not old else None
        if declared:  # a route brought in: named as it is, or told in one sentence of the summary's
            name = next(group for group in declared.groups() if group)
            return KEPT if self._holds(name) or self._holds(name.replace("_", " ")) else self._sentence(name, session)
        if not old and (_PATTERN_BUILT.search(new) or (_TEST_PATH.search(path) and _ASSERTS_STRING.search(new))):
            # a pattern, or a string a test gives or expects, is its characters: a summary that tells
            # its words ("rejects QA addresses") has not kept `~r/@acme-qa\.test$/i`
            quoted = [q.strip().casefold() for q in _literals(new) if q.strip()] or [new.partition("~r")[2].casefold()]
            return KEPT if all(q in self._plain.casefold() for q in quoted) else DROPPED
        keyed = _CONFIG_KEY.match(new) if _is_config(path) else None
        if keyed:  # a configuration's key set (`LC_ALL: de_DE.UTF-8`): its value said of another key keeps nothing
            key, value = keyed.group(1), keyed.group(2).strip().strip("\"'")
            # a path under a home folder a summary writes from `~` (`~/keystores/upload.jks`)
            home = _HOME.match(value)
            said = (
                self._holds(value)
                or any(self._has_number(n) for n, _, _ in numbers(value))
                or bool(home and self._holds("~" + value[home.end() :]))
            )
            if not said:
                return DROPPED
            return KEPT if _whole(self._plain, key) or self._holds(key) else POSSIBLY_DROPPED
        brought = set(_CODE_NAME.findall(new)) - set(_CODE_NAME.findall(old))
        figures = [n for n, _, _ in numbers(new) if n not in {m for m, _, _ in numbers(old)}]
        # the strings it brought in ("Einladungslink kopieren"), each a value a summary gives as it is
        strings = _literals(new) - _literals(old)
        if (
            any(_whole(self._plain, name) for name in brought)
            and all(self._has_number(n) for n in figures)
            and all(self._holds(text) for text in strings)
        ):
            return KEPT
        added = content_words(new) - content_words(old) or content_words(old) - content_words(new)
        if not added and not figures:
            return self._path(path, session)
        found = len(added & self._all) + sum(self._has_number(n) for n in figures)
        share = found / (len(added) + len(figures))
        if share >= 0.6 and all(self._has_number(n) for n in figures):
            return KEPT
        return POSSIBLY_DROPPED if share >= POSSIBLE_COVERAGE else DROPPED

    def _path(self, path: str, session: Session) -> str:
        """A path is kept when the summary names it whole, relative to the working directory, by
        a suffix of whole folders, or by its file name where that name is unambiguous."""
        if self._holds(path):
            return KEPT
        if self._cwd and path.startswith(self._cwd) and self._holds(path[len(self._cwd) :]):
            return KEPT
        name = PurePosixPath(path).name
        if not name:
            return DROPPED
        others = session.paths.get(name, set()) - {path.lstrip("./")}
        others = {o for o in others if not (path.endswith("/" + o) or o.endswith("/" + path.lstrip("./")))}
        named_elsewhere = False
        for at in (m.start() for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", self._plain)):
            start = at
            while start > 0 and (self._plain[start - 1].isalnum() or self._plain[start - 1] in "_.@+-/~"):
                start -= 1
            said = self._plain[start : at + len(name)].lstrip("./")
            if said != name:
                if path.endswith("/" + said) or path == said:
                    return KEPT
                if not _alternatives(said, path):
                    named_elsewhere = True  # `api/reports.py` is not `services/reports.py`
                    continue
                return KEPT
            if not others:
                return KEPT
            # Several session paths have this name: the summary must name the folder that tells them apart.
            window = normalised(self._plain[max(0, at - 40) : at + len(name) + 40]).split()
            if any(part.casefold() in window for part in _distinct_parts(path, others)):
                return KEPT
        if self._alternatives_named(path):
            return KEPT
        return POSSIBLY_DROPPED if named_elsewhere or others else DROPPED

    def _alternatives_named(self, path: str) -> bool:
        """The summary names the path's folder and, right after it, its file's stem among
        alternatives: "locales (en/de/ja)" keeps `locales/de.json`."""
        parts = PurePosixPath(path).parts
        if len(parts) < 2 or not parts[-2].strip("/"):
            return False
        stem = PurePosixPath(path).stem
        alternatives = rf"(?:[\w-]+/)+{re.escape(stem)}\b|\b{re.escape(stem)}(?:/[\w-]+)+"
        return bool(re.search(rf"\b{re.escape(parts[-2])}\b[\s(:]{{1,3}}(?:{alternatives})", self._plain))


def _failure_subjects(line: str) -> set[str]:
    """What an error line is about: a program not found, a module, a quoted name, an option, a
    code name; not where it was said (`pool_test.go:88:`, a diagnostic's place)."""
    located = _DIAGNOSTIC.match(line)
    message = located.group(1) if located else line
    found = {name for pattern in (_FAILURE_SUBJECT, _QUOTED) for group in pattern.findall(message) for name in group}
    found |= set(_CODE_NAME.findall(message)) | set(_OPTION.findall(message))
    return {name.strip() for name in found if len(name.strip()) >= 3}


def _error_figures(line: str) -> str:
    """An error line as its figures are checked: without how long the command ran, the place a
    diagnostic is at (`page.tsx(14,8):`) and the paths it names (`chromium-1140/chrome`): a
    summary that tells the failure gives none of them."""
    located = _DIAGNOSTIC.match(line)
    return _RUN_DURATION.sub(" ", _PATH_WORD.sub(" ", located.group(1) if located else line))


def _reports_work(text: str) -> bool:
    """Whether `text`, its dates, line numbers and the like left out, holds a count or a measure
    of the work (`_measured`) with a figure other than 0."""
    said = _NOT_NUMBERS.sub(" ", text)
    return _measured(said) and any(n.strip("0.") for n, _, _ in numbers(said))


def _telling_numbers(line: str) -> list[tuple[str, float, bool]]:
    """The numbers of a measurement that tell it: not 0, not a date or a line number, and those of
    two digits or more where it has any."""
    values = [n for n in numbers(_NOT_NUMBERS.sub(" ", line)) if n[0].strip("0.")]
    return [n for n in values if len(n[0].replace(".", "").lstrip("0")) >= 2] or values


def _failure_words(fact: Fact) -> set[str]:
    return content_words(f"{command_core(fact.text)} {_RUN_DURATION.sub(' ', fact.detail or '')}")


def _reason(sentence: str) -> set[str]:
    """The content words of the reason a sentence gives: after *because, since, so that*…, or
    before *, so*; none when it gives none (a choice alone: "X rather than Y")."""
    after = _REASON_AFTER.search(sentence)
    if after:
        return content_words(sentence[after.end() :])
    before = _REASON_BEFORE.search(sentence)
    return content_words(sentence[: before.start()]) if before else set()


def _colon_reason(sentence: str) -> set[str]:
    """The content words of what a constraint's colon opens ("Never hold a lock for more than a
    second: finance's reconciliation times out on locks"), its reason; none without one."""
    head, colon, why = sentence.partition(": ")
    return content_words(why) if colon and _says_constraint(head) else set()


def _whole(text: str, form: str) -> bool:
    """Whether `text` holds `form`, not as part of a longer word."""
    at = text.find(form)
    while at >= 0:
        end = at + len(form)
        if not (at > 0 and _word_char(text[at - 1]) and _word_char(form[0])) and not (
            end < len(text) and _word_char(text[end]) and _word_char(form[-1])
        ):
            return True
        at = text.find(form, at + 1)
    return False


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _alternatives(said: str, path: str) -> bool:
    """`en/de/fr/reports.json`-like: folders given as alternatives, one of them the path's."""
    *folders, _ = said.split("/")
    parts = PurePosixPath(path).parts[:-1]
    return len(folders) > 1 and bool(parts) and parts[-1] in folders


def _distinct_parts(path: str, others: set[str]) -> set[str]:
    mine = set(PurePosixPath(path).parts[:-1])
    theirs = set().union(*(PurePosixPath(o).parts[:-1] for o in others)) if others else set()
    return {p for p in mine - theirs if p not in ("/", "")}


# Each command's output is read by several rules that ask for its core (bounded: the viewer lists
# savepoint after savepoint in one process).
@functools.lru_cache(maxsize=1 << 12)
def command_core(command: str) -> str:
    """A command without what no summary repeats: `cd X &&`, variable assignments, `2>&1`, and
    a pipe into head/tail/grep/less/tee."""
    parts = [p.strip() for p in re.split(r"&&|;", command) if p.strip()]  # no `\s*` around: quadratic on spaces
    parts = [p for p in parts if not re.match(r"^(?:cd|source|\.|export|set)\s", p)] or parts
    cores = []
    for part in parts:
        piped = [p.strip() for p in part.split("|")]
        kept = [piped[0]] + [
            p for p in piped[1:] if not re.match(r"^(?:head|tail|grep|less|more|tee|sort|uniq|wc|cat)\b", p)
        ]
        text = " | ".join(kept)
        text = re.sub(r"\s*\d?>+&?\s*\S+", "", text)
        text = re.sub(r"^(?:\w+=\S+\s+)+", "", text)
        text = re.sub(r"^(?:python3?|uv run|poetry run)\s+-m\s+", "", text)
        cores.append(text.strip())
    return " && ".join(c for c in cores if c)


# --- the facts --------------------------------------------------------------------------------


Add = Callable[..., None]


def facts(entries: Iterable[object]) -> list[Fact]:
    """Every fact of a history (oldest first), each once, at the entry that first says it, under
    its most telling kind; ranked: by kind (KINDS), then by entry."""
    found: dict[tuple[str, ...], Fact] = {}
    commands: dict[str, tuple[str, int]] = {}  # tool_use id -> (command, entry)
    reads: dict[str, str] = {}  # a Read's tool_use id -> the file it read
    # What was read since the model last spoke, where its settings are: (text, entry, where read)
    read_since: list[tuple[str, int, str]] = []
    cwd: list[str] = []
    echoes = _Echoes()
    histories = _Histories()

    # A test run that failed and then, run again the same way, passed is a failure the session fixed:
    # Claude Code's summary tells it under "Errors and fixes", in its words (the run -> its failures' keys).
    failing: dict[str, set[tuple[str, ...]]] = {}
    fixed: set[tuple[str, ...]] = set()
    # ... and its tally (`1 failed, 63 passed`) went with it, when the run that passed gave its own:
    # the newest tally is the one that counts
    failing_at: dict[str, set[int]] = {}
    fixed_at: set[int] = set()

    def add(
        kind: str, text: str, entry: int, detail: str | None = None, newest: bool = False, guessed: bool = False
    ) -> None:
        text = text.strip()
        if len(text) < 2:
            return
        key = _key(kind, text, cwd[-1] if cwd else None)
        where = _where_run(detail) if newest and detail else ""
        if where:  # a result of one shape is the newest of the runs where its command ran (staging, prod)
            key = (*key, where)
        held = found.get(key)
        if held is None or KINDS.index(kind) < KINDS.index(held.kind) or (newest and held.kind == kind):
            # A file found by a search and then edited keeps the line it was found by: what was looked for.
            if detail is None and held is not None and kind in _PATH_KINDS:
                detail = held.detail
            found[key] = Fact(kind, text[:FACT_CHARS], entry, detail, POSSIBLY_DROPPED if guessed else DROPPED)

    scanned: set[tuple[str, bool]] = set()

    def identifiers(text: str, position: int, paths: bool) -> None:
        # A text said again holds the same identifiers, each already kept at its first entry.
        if (text, paths) not in scanned:
            scanned.add((text, paths))
            _identifiers(text, position, add, paths)

    for position, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or _flagged(entry):
            continue
        if isinstance(entry.get("cwd"), str) and (not cwd or cwd[-1] != entry["cwd"]):
            cwd.append(entry["cwd"])
        request = conversation.user_text(entry)
        if request:
            _request(request, position, add)
            identifiers(request, position, paths=True)
        content = _content(entry)
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and entry.get("type") == "assistant" and isinstance(block.get("text"), str):
                for sentence in sentences(block["text"]) if _gives_reason(block["text"]) else ():
                    if (
                        len(sentence) <= SENTENCE_CHARS
                        and _gives_reason(sentence)
                        and _CHOICE_OR_CAUSE.search(sentence.translate(_PLAIN))
                        and len(_WORDS.findall(sentence)) >= DECISION_WORDS_AT_LEAST
                    ):
                        add("decision", sentence, position)
                _prose_decisions(block["text"], position, add)
                _prose_measurements(block["text"], position, add)
                echoes.repeated(block["text"], add, spoke=True)
                _settings_said(block["text"], read_since, add)
                _files_named(block["text"], read_since, position, add)
                histories.told(block["text"], add)
                read_since.clear()
                identifiers(block["text"], position, paths=False)
            elif kind == "tool_use":
                echoes.repeated(_command_of(block) or "", add, spoke=False)
                _tool_use(block, position, add, identifiers, commands, reads, cwd[-1] if cwd else None)
            elif kind == "tool_result":
                use = block.get("tool_use_id")
                where = (reads.pop(use, None) or commands.get(use, ("", 0))[0]) if isinstance(use, str) else None
                read = where if where and block.get("is_error") is not True else None
                if read or use in commands:
                    output = _result_text(block.get("content"))[:OUTPUT_CHARS]
                    if read:
                        read_since.append((output, position, read))
                    if use in commands:
                        echoes.hear(commands[use][0], output, position)
                        histories.read(commands[use][0], output, position)
                ran = commands.get(use, ("", 0))[0] if isinstance(use, str) else ""
                failed = _tool_result(block, position, add, commands)
                run = _test_run(ran) if ran else None
                if run and failed:
                    key = _key("failed command", ran.strip(), cwd[-1] if cwd else None)
                    failing.setdefault(run, set()).add(key)
                    failing_at.setdefault(run, set()).add(position)
                    fixed.discard(key)
                elif run:
                    fixed |= failing.pop(run, set())
                    superseded = failing_at.pop(run, set())
                    if _TEST_TALLY.search(_result_text(block.get("content"))[-MEASURED_TAIL:]):
                        fixed_at |= superseded
    for key in fixed:
        if key in found and found[key].kind == "failed command":
            del found[key]
    for key, fact in list(found.items()):
        if fact.kind == "measurement" and fact.entry in fixed_at:
            del found[key]
    ordered = sorted(found.values(), key=lambda f: (KINDS.index(f.kind), f.entry))
    ordered = _one_measurement_each(ordered)
    # A path named as a file read or edited is not listed again as a path.
    files = {_resolved(f.text, cwd[-1] if cwd else None) for f in ordered if f.kind in ("file read", "file edited")}
    return [f for f in ordered if not (f.kind == "path" and _names_one_of(f.text, files, cwd[-1] if cwd else None))]


def _settings_said(prose: str, read_since: list[tuple[str, int, str]], add: Add) -> None:
    """A setting read (`_SETTING`: `workers = 4`, `// default 200`) is a fact when the model's
    next words give its value and name it (or say it is a default): it read the file for that
    value ("with workers = 4 a client can get 4 × 100 requests"); the others it read in passing.
    Only the lines that hold a figure the model says are looked at: most of what is read is not."""
    if not read_since or not _FIGURE.search(prose):
        return
    said = {n for n in _PLAIN_NUMBER.findall(prose) if n.strip("0.")}
    lines = {
        (line, position, where) for text, position, where in read_since for n in said for line in _lines_with(text, n)
    }
    if lines:
        words = f" {normalised(prose)} "
        for line, position, where in sorted(lines):
            line = _LINE_NUMBER.sub("", line).strip()
            located = _HIT_PLACE.match(line)  # a search's hit: `app.py:12:` is where, not a setting
            for m in _SETTING.finditer(line, located.end() if located else 0):
                name, value = (m.group("name"), m.group("value")) if m.group("value") else ("default", m.group("given"))
                named = f" {normalised(name)} " in words or ("default" in words and "default" in line.casefold())
                if named and value.lstrip("-") in said:
                    add("setting", line, position, where[:200], guessed=True)


def _lines_with(text: str, value: str) -> Iterator[str]:
    """The lines of `text` (200 characters at most) where `value` stands as a number."""
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if not (at and (text[at - 1].isdigit() or text[at - 1] in ".,")) and not (
            end < len(text) and (text[end].isdigit() or (text[end] in ".," and text[end + 1 : end + 2].isdigit()))
        ):
            start, stop = text.rfind("\n", 0, at) + 1, text.find("\n", end)
            line = text[start : stop if stop >= 0 else len(text)]
            if len(line) <= 200:
                yield line
        at = text.find(value, end)


def _one_measurement_each(ordered: list[Fact]) -> list[Fact]:
    """The model's report of what a tool's output measured is that measurement, listed once: the
    output's where the model rounds it ("651 ns/op" of "651.2 ns/op"), the model's where it says
    the same figure and the output's line is a bare figure ("475 extra rows" of `475 22472.62`),
    the outputs' where it puts together the exact figures of several."""
    outputs = [
        (f, [n for n, _, _ in _telling_numbers(f.text)]) for f in ordered if f.kind == "measurement" and f.detail
    ]
    gone: set[int] = set()
    shown: dict[int, str] = {}  # a clause kept in place of a bare figure -> the output line it restates
    for fact in ordered:
        if fact.kind != "measurement" or fact.detail:
            continue
        said = _telling_numbers(fact.text)
        restated = [
            (output, all(n in figures for n, _, _ in said))
            for output, figures in outputs
            if said and all(any(_same_number(m, n, share, cut) for m in figures) for n, share, cut in said)
        ]
        for output, exactly in restated:
            bare = exactly and not content_words(_DIGITS.sub(" ", output.text))
            gone.add(id(output) if bare else id(fact))
            if bare and output.detail and _BARE_VALUE.fullmatch(output.detail.strip()) is None:
                shown.setdefault(id(fact), output.detail)  # the row or the line, not the figure again
        # A clause that puts together figures several outputs gave ("errors are 389, slow
        # requests 171") restates them: each is its output's measurement.
        if not restated and len(said) > 1 and all(any(n in figures for _, figures in outputs) for n, _, _ in said):
            gone.add(id(fact))
    return [replace(f, detail=shown[id(f)]) if id(f) in shown else f for f in ordered if id(f) not in gone]


def _told_by_a_listed_clause(missing: list[Fact]) -> list[Fact]:
    """A figure alone that the model repeated from an output (`312`) is told by the clause of its
    that is listed too ("312 of 400 requests were accepted"), with what it counts, and the clause is
    shown with the output's line it restates (`2318` of "2,318 of the 2,400 orders"); where the
    summary keeps the clause (by its other figures), the figure alone stays listed."""
    at = [i for i, f in enumerate(missing) if f.kind == "measurement" and not f.detail]
    clauses = [{n for n, share, _ in _telling_numbers(missing[i].text) if not share} for i in at]
    shown: dict[int, str] = {}  # a clause's place in `missing` -> the output line it restates

    def told(fact: Fact) -> bool:
        if fact.kind != "measurement" or not fact.detail or not _BARE_VALUE.fullmatch(fact.text):
            return False
        figures = {n for n, _, _ in _telling_numbers(fact.text)}
        clause = next(
            (
                i
                for i, exact in zip(at, clauses, strict=True)
                if figures and fact.entry <= missing[i].entry and figures <= exact
            ),
            None,
        )
        if clause is None:
            return False
        shown.setdefault(clause, fact.detail)
        return True

    kept = [(i, f) for i, f in enumerate(missing) if not told(f)]
    return [replace(f, detail=shown[i]) if i in shown else f for i, f in kept]


def _inside_a_longer(missing: list[Fact]) -> list[Fact]:
    """An identifier or a figure alone taken from the line (or the command) a longer listed fact
    is, a failed command or a measurement (`lychee@0.15.1` of the failed `npx --yes lychee@0.15.1
    …`, `617` of `requeued 617 orders`), is shown there: one thing, one fact, the longest. Another
    id a listed line names in passing (`fixes OOM from b93e4f7`) is a fact of its own, and so is
    a sure one in a line listed "possibly dropped" (`requests-2.32.3` of pip's `Successfully
    installed …`): the surer is the one a reader reads."""

    def shown_in_longer(fact: Fact) -> bool:
        if not fact.detail or not (
            fact.kind == "identifier" or (fact.kind == "measurement" and _BARE_VALUE.fullmatch(fact.text))
        ):
            return False
        line = fact.detail.strip()
        return any(
            len(f.text) > len(fact.text)
            and (f.confidence == DROPPED or fact.confidence != DROPPED)
            and _whole(f.text, fact.text)
            and (f.text.startswith(line) or line.startswith(f.text))
            for f in missing
            if f.kind in _HOLDING_NAMES
        )

    return [f for f in missing if not shown_in_longer(f)]


# Where a command acts, as it says it: an environment it sets (`MIX_ENV=prod`), the option naming
# a context, cluster, host… (`--context prod-eu-1`, `--env staging`), a variable holding an address
# (`"$STAGING_DATABASE_URL"`). The same tool run on staging and then on prod gives two results.
_WHERE = re.compile(
    r"(?:^|\s)([A-Z0-9_]*(?:ENV|STAGE|ENVIRONMENT|URL|HOST|DSN|DATABASE|CONTEXT|REGION|PROFILE)[A-Z0-9_]*=\S+)(?=\s)"
    r"|--(?:context|cluster|env|environment|host|region|profile|project|stage)[=\s]+(\S+)"
    r"|\$\{?([A-Z][A-Z0-9_]*(?:URL|HOST|DSN|ENV)[A-Z0-9_]*)"
)


def _where_run(command: str) -> str:
    return " ".join(sorted({"".join(m.groups(default="")) for m in _WHERE.finditer(command)}))


def _key(kind: str, text: str, cwd: str | None) -> tuple[str, ...]:
    """One thing, whatever kinds it fits: a sentence is one fact however the user's words read; a
    file one fact whether read, edited or named; a failed command one however often it ran."""
    if kind in _SAID_KINDS:
        return ("said", normalised(text) or text)
    if kind in _PATH_KINDS:
        return ("path", _resolved(text, cwd))
    if kind == "failed command":
        return ("command", normalised(text) or text)
    # each build's time, each benchmark's result and tail latency: the session compares them
    if kind == "measurement" and (_BUILD_TIME.search(text) or _compared(text) or _PERCENTILE.match(text)):
        return ("measurement", normalised(text))
    if kind == "measurement":  # one measurement of one shape ("batch #: # rows"); bare figures are each their own
        shape = re.sub(r"\d[\d,.]*", "#", normalised(text))
        return ("measurement", shape if re.search(r"[^\W\d_]", shape) else normalised(text))
    return (kind, normalised(text) or text)


def _resolved(path: str, cwd: str | None) -> str:
    if cwd and not path.startswith(("/", "~")):
        return str(PurePosixPath(cwd) / path.removeprefix("./"))
    return path


def _names_one_of(path: str, files: set[str], cwd: str | None) -> bool:
    resolved = _resolved(path, cwd)
    return resolved in files or any(f.endswith("/" + path.lstrip("./")) for f in files)


def _request(request: str, position: int, add: Add) -> None:
    """A user's message: its constraints and reasons, each a fact, and the rest as the request
    (" … " where a sentence was taken out)."""
    rest, cut = [], False
    for sentence in sentences(request):
        short = len(sentence) <= SENTENCE_CHARS
        if short and _says_constraint(sentence) and len(_WORDS.findall(sentence)) >= 3:
            # a sentence of clauses ("You can cordon the node, nothing else: no helm upgrades on
            # prod") is a constraint where its clause says one: the rest goes on with the request
            clauses = (
                [c.strip() for c in _CLAUSE_END.split(sentence) if c.strip()]
                if ": " in sentence or "; " in sentence
                else []
            )
            bound = [c for c in clauses if _says_constraint(c) and len(_WORDS.findall(c)) >= 3]
            # a constraint's clause and the one its colon opens, which says why ("Nothing may be
            # recreated: the NAT gateways take ten minutes to come back"), are one constraint
            why = {
                c: after
                for c, after in pairwise(clauses)
                if c in bound and after not in bound and f"{c}: {after}" in sentence
            }
            for said in bound or [sentence]:
                add("constraint", f"{said}: {why[said]}" if said in why else said, position)
            rest += [c for c in clauses if c not in bound and c not in why.values()] if bound else []
            cut = True
        elif short and _gives_reason(sentence) and len(_WORDS.findall(sentence)) >= 4:
            add("decision", sentence, position)
            cut = True
        elif not _FENCE.fullmatch(sentence):  # a code block's marker (```, ```python) is no part of what was asked
            rest.append(sentence)
    said = " … ".join(rest) if cut else request
    if len(_WORDS.findall(said)) >= MIN_REQUEST_WORDS:
        add("request", said, position)


def _tool_use(block: dict, position: int, add: Add, identifiers, commands: dict, reads: dict, cwd: str | None) -> None:
    name = block.get("name")
    if not isinstance(name, str):  # a call of no tool we know: its arguments are read as any other's
        name = ""
    given = block.get("input")
    arguments: dict = given if isinstance(given, dict) else {}
    if name in conversation.EDIT_TOOLS and isinstance(arguments.get(conversation.EDIT_TOOLS[name]), str):
        path = arguments[conversation.EDIT_TOOLS[name]]
        add("file edited", path, position)
        edits = arguments.get("edits")
        changes: list = edits if isinstance(edits, list) else [arguments]
        if isinstance(arguments.get("content"), str):  # a file written whole: the routes it declares
            shown = _shown(path, cwd)
            for line in _declared(path, "", arguments["content"]):
                add("edit", f"{shown}:  → {line}", position)
        for change in changes:
            if (
                isinstance(change, dict)
                and isinstance(change.get("old_string"), str)
                and isinstance(change.get("new_string"), str)
            ):
                described = _edit(path, change["old_string"], change["new_string"], cwd)
                if described:
                    add("edit", described, position)
                else:
                    for brought in _values_brought(path, change["old_string"], change["new_string"], cwd):
                        add("edit", brought, position)
    elif name in READ_TOOLS and isinstance(arguments.get(READ_TOOLS[name]), str):
        add("file read", arguments[READ_TOOLS[name]], position)
        if isinstance(block.get("id"), str):
            reads[block["id"]] = arguments[READ_TOOLS[name]]
    elif (command := _command_of(block)) is not None:
        if isinstance(block.get("id"), str):
            commands[block["id"]] = (command, position)
        _files_written(command, position, add)
        # The ids a command is given (`gh run watch 8812345678`, `git show 9f8e7d6`) name what it worked on.
        core = command_core(command)
        for found in _COMMAND_ID.finditer(core):
            if not core[: found.start()].split()[-1:] or not core[: found.start()].split()[-1].startswith("-"):
                add("identifier", found.group(0), position, command[:200])  # not a flag's value (`head -c 7000000`)
        for pinned in _PINNED.finditer(core):
            add("identifier", pinned.group(0), position, command[:200])
        _resources(core, position, add, command)
    else:
        for value in _strings(arguments):
            identifiers(value, position, paths=False)


def _resources(core: str, position: int, add: Add, command: str) -> None:
    """The cloud resources (`_RESOURCE_NAMED`, `_APP_NAMED`) and the images (`_IMAGE_REF`) a
    command names: what it ran against or built, which a reader looks up by that name; "possibly
    dropped" at most: a session runs many commands against the one cluster it says in words."""
    if not ("-" in core or "://" in core):  # every name they find is joined or an address: most commands hold none
        return
    for part in core.split(" && "):
        for m in _RESOURCE_NAMED.finditer(part):
            named = m.group("name")
            add(
                "url" if m.group("bucket") else "identifier",
                named or m.group("bucket"),
                position,
                command[:200],
                guessed=True,
            )
        app = _APP_NAMED.search(part)
        if app:
            add("identifier", app.group("name"), position, command[:200], guessed=True)
        for image in _IMAGE_REF.findall(part):
            add("identifier", image, position, command[:200])


def _edit(path: str, old: str, new: str, cwd: str | None) -> str | None:
    """ "path: old → new", each side the lines that changed (at most EDIT_SIDE_CHARS, cut around
    the change); None for an edit of code that is not a value changed (`ROUND_HALF_UP` →
    `ROUND_HALF_EVEN`, a bucket's name) or set (a line inserted with a figure or a string):
    other code added, removed or rewritten is told by its file,
    and a summary describes it in words of its own. An edit of prose (a changelog's line) is its
    words."""
    before, after = old.splitlines(), new.splitlines()
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    removed = " ".join(" ".join(before[start : len(before) - end]).split())
    added = " ".join(" ".join(after[start : len(after) - end]).split())
    if (
        not added
        if _is_prose(path)
        else not _value_changed(before[start : len(before) - end], after[start : len(after) - end])
        and not _value_added(before[start : len(before) - end], after[start : len(after) - end])
    ):
        return None
    shown = path[len(cwd.rstrip("/")) + 1 :] if cwd and path.startswith(cwd.rstrip("/") + "/") else path
    return f"{shown}: {_cut(removed, added)} → {_cut(added, removed)}"


def _values_brought(path: str, old: str, new: str, cwd: str | None) -> list[str]:
    """What a larger edit of code brought in that a reader asks for by its value (`_VALUE_LINE`: a
    constant set, a pattern, a shell default, an assertion's bound, a test's payload), "path: →
    line" each, at most VALUES_BROUGHT of them: the rest of the code it wrote its file tells."""
    before = {line.strip() for line in old.splitlines()}
    tested = bool(_TEST_PATH.search(path))
    brought = [
        line
        for line in (line.strip() for line in new.splitlines())
        if line not in before
        and len(line) <= EDIT_SIDE_CHARS
        and (
            _VALUE_LINE.search(line)
            or (_is_config(path) and _config_value(line))
            or (tested and _ASSERTS_STRING.search(line) and not _DECLARED.match(line))
        )
    ]
    if len(brought) > VALUES_BROUGHT:  # a table of values written, not the one the edit was about
        brought = []
    return [f"{_shown(path, cwd)}:  → {line}" for line in [*brought, *_declared(path, old, new)]]


def _shown(path: str, cwd: str | None) -> str:
    """`path` as an edit's fact shows it: relative to the working directory, where it is in it."""
    return path[len(cwd.rstrip("/")) + 1 :] if cwd and path.startswith(cwd.rstrip("/") + "/") else path


def _declared(path: str, old: str, new: str) -> list[str]:
    """The routes (`_DECLARED`) an edit's or a new file's text brings in, each its line,
    DECLARED_AT_MOST or fewer: what the change added that a reader names it by; more are an API
    written whole, its file tells it. Not a test's: the calls its client makes (`client.get('/login',
    …)`) are no routes."""
    if _TEST_PATH.search(path):
        return []
    before = {line.strip() for line in old.splitlines()}
    declared = [
        line
        for line in (line.strip() for line in new.splitlines())
        if line not in before and len(line) <= EDIT_SIDE_CHARS and _DECLARED.match(line)
    ]
    return declared if len(declared) <= DECLARED_AT_MOST else []


def _config_value(line: str) -> bool:
    """Whether a configuration's line sets a key to a value a reader asks for by itself: a figure,
    a quoted string, or a bare token with a figure or a dot in it (`LC_ALL: de_DE.UTF-8`); not a
    path or a file (`src: security_headers.conf.j2`), which names what the edit's file already tells."""
    keyed = _CONFIG_VALUE.match(line)
    return keyed is not None and not _is_path(line[keyed.end(1) :].strip().strip("\"'"))


def _is_config(path: str) -> bool:
    return PurePosixPath(path).suffix[1:].casefold() in CONFIG_EXTENSIONS


def _is_prose(path: str) -> bool:
    return PurePosixPath(path).suffix[1:].casefold() in PROSE_EXTENSIONS


def _value_added(removed: list[str], added: list[str]) -> bool:
    """Whether code was inserted that sets a value: at most two lines, nothing removed, with a
    figure or a string in them (`.layer(DefaultBodyLimit::max(8 * 1024 * 1024))`, a locale's
    `"members.invite.copy": "Einladungslink kopieren"`), not an import."""
    return (
        not removed
        and 0 < len(added) <= 2
        and not any(_IMPORT.match(line) for line in added)
        and any(_FIGURE.search(line) or _literals(line) for line in added)
    )


def _value_changed(removed: list[str], added: list[str]) -> bool:
    """Whether lines of code `removed` became `added` by a change of a few tokens: both sides
    there, at most two lines, and what differs between them at most SWAP_TOKENS tokens a side."""
    if not removed or not added or len(removed) > 2 or len(added) > 2:
        return False
    old, new = _TOKENS.findall(" ".join(removed)), _TOKENS.findall(" ".join(added))
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    tail = 0
    while tail < min(len(old), len(new)) - same and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return max(len(old), len(new)) - same - tail <= SWAP_TOKENS


def _cut(side: str, other: str) -> str:
    """`side` whole if short, else EDIT_SIDE_CHARS of it from a little before where it differs from `other`."""
    if len(side) <= EDIT_SIDE_CHARS:
        return side
    differs = next((i for i, (a, b) in enumerate(zip(side, other)) if a != b), min(len(side), len(other)))
    start = max(0, differs - EDIT_SIDE_CHARS // 4)
    cut = side[start : start + EDIT_SIDE_CHARS - 2].strip()
    return ("…" if start else "") + cut + ("…" if start + EDIT_SIDE_CHARS - 2 < len(side) else "")


def _tool_result(block: dict, position: int, add: Add, commands: dict) -> bool:
    """Adds the facts of a command's output; whether the command failed."""
    text = _result_text(block.get("content"))
    if len(text) > 2 * OUTPUT_CHARS:  # a huge output says its facts at its start and its end
        text = text[:OUTPUT_CHARS] + "\n" + text[-OUTPUT_CHARS:]
    use = block.get("tool_use_id")
    called = commands.pop(use, None) if isinstance(use, str) else None
    # Another tool's answer (a file read, an Edit refused because its old text is not there) says
    # nothing of the session's own: the tool's mistake is undone by the next call.
    if called is None:
        return False
    command, at = called
    errors = _error_lines(text)
    # A pipe into `tail` or `grep` hides the exit status: its error lines say it failed all the
    # same, unless what it piped was a log (`kubectl logs`, `journalctl`: the errors it read).
    hidden = _PIPED.search(command) and not _READS_LOG.search(command.split("|")[0])
    if block.get("is_error") is True or (hidden and any(not _GENERIC_ERROR.search(e) for e in errors)):
        # One failure, one fact: the command, with the line that says why; and what its output
        # measured ("47 tests completed, 1 failed").
        why = _why(text, errors)
        add("failed command", command, at, why[:300] or None)
        # its tally and summary lines (`1 failed, 611 passed`, valgrind's `ERROR SUMMARY: 1
        # errors`) mostly say again that it failed: "possibly dropped" beside the failure
        restating = [line.strip() for line in text[-MEASURED_TAIL:].splitlines() if _counts_errors_only(line)]
        _measurements(command, text, position, _unsure(add), besides=[why, *errors, *restating])
        # What reproduces it or holds it: the seed a randomised test run failed with, the one id
        # its output names (the lock a `terraform plan` could not take).
        seeds = {_with_its_word(text, m) for m in _SEED.finditer(text)}
        if len(seeds) == 1:
            add("identifier", seeds.pop(), position, command[:200])
        _output_ids(command, text, position, add, (("identifier", _UUID),))
        _advisories(command, text, position, add)
        _addresses(command, text, position, add)  # the server it failed against, the row its error names
        return True
    # A command that ran is a fact through what its output says (a commit's id, a count, the
    # files a search found), shown with the command; the command alone is not: a summary rarely
    # repeats one, nor a user miss it. Error lines in the output of a command that succeeded (a
    # log, a bisect's failing steps, a test that was meant to fail) are what it read, not a failure.
    _output_facts(command, text, position, add, errors)
    return False


def _test_run(command: str) -> str | None:
    """The test run `command` makes, as its reruns make it: the first of its chained commands that
    runs tests, without its options (`pytest -q -x` and `pytest -q` run the same tests; `go test
    ./pool -run TestDrain` and `go test ./pool` do not); None for a command that runs none."""
    for part in command_core(command).split(" && "):
        if _TEST_RUN.search(part):
            return " ".join(word for word in part.split() if not word.startswith("-"))
    return None


def _error_lines(text: str) -> list[str]:
    """The lines of `text` that say an error, in order."""
    found = (
        [(m.start(), m.group(1).strip()) for m in _ERROR_LINE.finditer(text)]
        if any(word in text for word in _ERROR_HINTS)
        else []
    )
    for m in _FAILURE_WORDS.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        line = text[start : end if end >= 0 else len(text)].strip()
        if line and all(at != start for at, _ in found):
            found.append((start, line))
    return [line for _, line in sorted(found)]


def _why(text: str, errors: list[str]) -> str:
    """The line of a failed command's output that says why: a test's assertion (`want 500`,
    `Expected: …`), else its first error or warning line that is not only "it failed" (`could not
    compile … due to 1 previous error`), else its first line; with the `DETAIL:` (`HINT:`,
    `Caused by:`) line right after it, which says what of the data failed."""
    asserted = [m.group(1).strip() for m in _ASSERTION_LINE.finditer(text) if len(m.group(1)) <= 300]
    warned = [m.group(1).strip() for m in _WARNING_LINE.finditer(text)] if "ARNING" in text.upper() else []
    diagnosed = [m.group(1).strip() for m in _DIAGNOSTIC.finditer(text)]
    telling = [line for line in asserted + errors + warned + diagnosed if not _GENERIC_ERROR.search(line)]
    why = (telling or errors or [_first_line(text)])[0]
    at = text.find(why)
    after = text[text.find("\n", at) + 1 :] if at >= 0 and "\n" in text[at:] else ""
    told = _ERROR_DETAIL.match(after[: after.find("\n") if "\n" in after else len(after)])
    if told:
        return f"{why} {told.group(0).strip()}"
    if why.endswith(":"):  # "Error: Screenshot comparison failed:" says what failed on the next line that has words
        going_on = next((line.strip() for line in after.splitlines()[:3] if _WORDS.search(line)), "")
        return f"{why} {going_on}" if 0 < len(going_on) <= SENTENCE_CHARS else why
    return why


def _first_line(text: str) -> str:
    # not a rule of "====" nor "Exit code 1": they say nothing
    return next((line.strip() for line in text.splitlines() if _WORDS.search(line) and not _EXIT_CODE.match(line)), "")


def _output_facts(command: str, text: str, position: int, add: Add, errors: list[str]) -> bool:
    """The identifiers and measurements a command's output states; whether it made a commit or a
    migration (an id the output marks)."""
    if _STASHED_FIRST.search(command) or _PICKED.search(command):
        # A run with the work stashed first measures the code before the change: the baseline,
        # which the session reads to compare and the summary tells by the change's effect. A line
        # a search picked out of an output (`… | grep -E 'problems|First Load JS'`) is a lookup's
        # answer, as often a step on the way as a fact to keep.
        add = _unsure(add, ("measurement",))
    marked: list[tuple[str, str]] = []
    if _VERSIONED.search(command):
        for line in text.splitlines():
            m = _MARKED_ID.search(line)
            if m:
                marked.append((next(g for g in m.groups() if g), line.strip()))
        # Unmarked ids are the fact only of a command that asks for them (`git log -1`, `alembic
        # heads`, `showmigrations`), not of one that mentions them (`Previous HEAD position was…`).
        chatter = all(_GIT_CHATTER.match(m.group(0)) for m in _GIT_SUBCOMMAND.finditer(command))
        # what a command asked `--version` of prints is a version (`git filter-repo --version`: a40bc1c42c2b),
        # no commit; a chain that also shows history (`… --version && git log -1`) prints its commits
        versions = "--version" in command and not _GIT_HISTORY.search(command)
        if not marked and not (chatter and "git" in command) and not versions:
            listed = {
                h: line
                for line in text.splitlines()
                if not _STASHED.match(line) and not _NOT_COMMIT_LINE.match(line) and "sha256:" not in line
                for h in _HEX.findall(line)
            }
            listed = listed or {m: line for line in text.splitlines() for m in _MIGRATION.findall(line)}
            marked = [(h, line.strip()) for h, line in listed.items()] if len(listed) <= 3 else []
            # Of a history of two or three commits (`git log --oneline -3`), the newest is what the
            # session asked for (the change it looks for came last); an older one is a fact where
            # the session names it again or tells it by its subject (`_Echoes`, `_Histories`).
            several = len(marked) > 1
            if several and _GIT_HISTORY.search(command):
                marked = marked[:1]
        else:
            several = len(marked) > 1
        for hexid, line in marked:
            add("identifier", hexid, position, line[:200], guessed=several and not _MARKED_ID.search(line))
        if any(_MARKED_ID.search(line) for _, line in marked):  # a commit's "1 file changed" is the commit's
            if "is the first bad commit" in text:  # who wrote the commit a bisect found
                _authors(command, text, position, add)
            return True
    _found_files(command, text, position, add)
    if _GIT_HISTORY.search(command):
        _authors(command, text, position, add)
        _tickets(text, position, add)
    # What a command made and printed the address or id of (`gh pr create`'s URL, a lock's id):
    # the one such thing in its output; the issue a change it shows closes.
    # what a log read names (a task's id in `tail worker.log`) the command did not make
    if not _LOG_READ.search(command_core(command)):
        # what a progress line names (the mirror apt fetched from) the command did not make
        made = (
            "\n".join(line for line in text.splitlines() if not _PROGRESS_BAR.search(line)) if "Get:" in text else text
        )
        # the one UUID an output names is what held a step that failed (the lock a plan could not
        # take, its error said); of a step that succeeded (an export's id), a fact where the
        # session refers back to it (`_Echoes`)
        held = (("identifier", _UUID),) if errors else ()
        addresses = () if _ASKS_VERSION.match(command_core(command)) else (("url", _OUTPUT_URL),)
        _output_ids(command, made, position, add, (*addresses, *held, ("identifier", _CLOSES)))
    _advisories(command, text, position, add)
    _versions_changed(command, text, position, add)
    _versions_diffed(command, text, position, add)
    _packages_added(command, text, position, add)
    _asked_version(command, text, position, add)
    _tool_version(command, text, position, add)
    _images(command, text, position, add)
    _addresses(command, text, position, add)
    if _TIMED.search(command):
        timed = [line.strip() for line in text.splitlines()[-5:] if _TIME_REAL.match(line.strip())]
        if timed:
            add("measurement", timed[-1], position, command[:200], newest=True)
        peak = [line.strip() for line in text.splitlines()[-30:] if _PEAK_MEMORY.match(line)]
        if peak:
            add("measurement", peak[-1], position, command[:200], newest=True)
    # The fields a command asked for are its answer, all of it: its lines are not read again for measurements.
    if not errors and _selected(command, text, position, add):
        return False
    _measurements(command, text, position, add, besides=errors)  # "due to 1 previous error" counts no work
    _stopped(command, text, position, add)
    _build_time(command, text, position, add)
    _last_answer(command, text, position, add)
    _query_answer(command, text, position, add)
    _schedules(command, text, position, add)
    if not errors:  # an error line is what a command read or a failure's, no answer
        _answer(command, text, position, add)
    return False


def _found_nothing(line: str) -> bool:
    """Whether `line` is a check's clean result (`_NOTHING_FOUND`): nothing it counts besides the 0
    it found and what it went through; not a test run's tally (its count of tests is the suite's)."""
    return (
        _NOTHING_FOUND.search(line) is not None
        and not _TEST_TALLY.search(line)
        and not _telling_numbers(_CHECK_INPUT.sub(" ", line))
    )


def _counts_errors_only(line: str) -> bool:
    """Whether a line of a failed run's output only counts its errors (tsc's `Found 1 error in
    src/cors.ts:10`, cargo's `… due to 1 previous error`): it says again that the run failed, which
    its failure already tells; a line that counts anything else (`1 failed, 611 passed`) is its tally."""
    return bool(_ERRORS_COUNTED.search(line)) and not _telling_numbers(_ERRORS_COUNTED.sub(" ", line))


def _unsure(add: Add, kinds: tuple[str, ...] = KINDS) -> Add:
    """`add`, every fact of `kinds` it adds "possibly dropped" at most."""

    def guessed(kind: str, *args: object, **given: object) -> None:
        add(kind, *args, **{**given, "guessed": True} if kind in kinds else given)

    return guessed


def _with_its_word(text: str, found: re.Match) -> str:
    """`found` from the start of the word it begins in (`--randomly-seed=2218634011`, not `seed=…`)."""
    start = max(text.rfind(space, 0, found.start()) for space in " \t\n") + 1
    return text[start : found.end()]


def _literals(text: str) -> set[str]:
    """The quoted strings of `text` that hold a letter ("Einladungslink kopieren", not "42")."""
    quoted = (a or b for a, b in _LITERAL.findall(text))
    return {string for string in quoted if any(c.isalpha() for c in string)}


def _authors(command: str, text: str, position: int, add: Add) -> None:
    """Who wrote the commits a `git log`/`git show` printed, when they are AUTHORS_AT_MOST or
    fewer: the name a reader asks for ("who changed this, and why")."""
    found = {}
    for line in text.split("\n"):
        if line.startswith("Author:") and (name := line[len("Author:") :].split("<", 1)[0].strip()):
            found[name] = line
    if not found and re.search(r"%a[nN]", command):
        first = _first_line(text)
        person = _PERSON.search(first)
        found = {person.group(0): first} if person else {}
    if 0 < len(found) <= AUTHORS_AT_MOST:
        for name, line in found.items():
            add("identifier", name, position, line[:200])


def _output_ids(command: str, text: str, position: int, add: Add, patterns: Iterable[tuple[str, re.Pattern]]) -> None:
    """The one thing of each pattern an output names and its command does not."""
    for kind, pattern in patterns:
        made = set(pattern.findall(text)) - set(pattern.findall(command))
        if len(made) == 1:
            add(kind, made.pop().rstrip(".,;:!?"), position, command[:200])


def _versions_changed(command: str, text: str, position: int, add: Add) -> None:
    """What a package manager's output says it moved: each version change it prints
    (`_VERSION_CHANGE`), VERSIONS_CHANGED or fewer, as "package old -> new"; and of the packages
    the command names, the version pip replaced and the one it installed (`Jinja2 3.1.3`,
    `jinja2-3.1.6`) and the one apt set up (`Setting up libssl-dev:amd64 (3.0.15-1~deb12u1) ...`):
    the versions a dependency upgrade is about."""
    if not any(mark in text for mark in _VERSION_MARKS):
        return
    changes = [
        m
        for m in _VERSION_CHANGE.finditer(text)
        if (m.group("old") or m.group("was")) != (m.group("new") or m.group("now"))
    ]
    if 0 < len(changes) <= VERSIONS_CHANGED:
        for m in changes:
            package = m.group("package") or m.group("installed")
            old, new = (m.group("old"), m.group("new")) if m.group("package") else (m.group("was"), m.group("now"))
            if (
                new in command and package.rpartition("/")[2] in command
            ):  # the command's pin says it (`go get x@v1.8.2`)
                continue
            add("identifier", f"{package} {old} -> {new}", position, (_line_at(text, m.group(0)) or m.group(0))[:200])
    asked = {word.casefold() for word in _PACKAGE_WORD.findall(command_core(command))}
    for m in _PIP_REPLACED.finditer(text):
        if m.group("package").casefold() in asked:
            add("identifier", f"{m.group('package')} {m.group('version')}", position, m.group(0).strip()[:200])
    for m in _PIP_INSTALLED.finditer(text):
        for installed in m.group(1).split():
            package, _, version = installed.rpartition("-")
            if package.casefold() in asked and re.fullmatch(_VERSION, version):
                add("identifier", installed, position, m.group(0)[:200])
    for m in _APT_SET_UP.finditer(text):
        if m.group("package").casefold() in asked:
            add("identifier", f"{m.group('package')} {m.group('version')}", position, m.group(0).strip()[:200])


def _versions_diffed(command: str, text: str, position: int, add: Add) -> None:
    """What a diff an output shows (`git diff`, `git show`, `diff -u`) moved in a manifest: a
    dependency's line taken out with one version and put back with another (`-  "@acme/ui":
    "5.1.4",` then `+  "@acme/ui": "5.2.0",`), "package old -> new" as a package manager says it,
    VERSIONS_CHANGED or fewer: more refresh a lockfile. The version it moved from is what a reader
    asks for when the upgrade is doubted, and the diff is where the session read it."""
    if "\n-" not in text or "\n+" not in text:
        return
    removed: dict[str, str] = {}
    changes: list[tuple[str, str, str, str]] = []  # (package, old, new, the line that says the new)
    for m in _DIFFED_PIN.finditer(text):
        if not _DIFFED_PIN_END.match(text, m.end()):  # a line that goes on is no manifest's pin
            continue
        package, version = m.group("package"), m.group("version")
        if m.group("side") == "-":
            removed[package] = version
        elif removed.get(package, version) != version:
            changes.append((package, removed.pop(package), version, m.group(0).strip()))
    if 0 < len(changes) <= VERSIONS_CHANGED:
        for package, old, new, line in changes:
            add("identifier", f"{package} {old} -> {new}", position, line[:200])


def _packages_added(command: str, text: str, position: int, add: Add) -> None:
    """The packages a package manager's output says it added (`_PACKAGE_ADDED`) that its command
    names without their version (`go get golang.org/x/sync` → `go: added golang.org/x/sync v0.8.0`,
    `pnpm add zod` → `+ zod 3.23.8`), each as `package@version`: the version the session now
    depends on, which the command did not say; not the packages they pulled in."""
    core = command_core(command)
    for m in islice(_PACKAGE_ADDED.finditer(text[:OUTPUT_CHARS]), VERSIONS_CHANGED * 4):
        package, version = m.group("package"), m.group("version")
        named = re.search(rf"(?<![\w@/.-]){re.escape(package)}(?![\w@/.-])", core, re.IGNORECASE)
        if named and version not in command:
            add("identifier", f"{package}@{version}", position, m.group(0).strip()[:200])


def _asked_version(command: str, text: str, position: int, add: Add) -> None:
    """The version a short output (SELECTED_LINES lines or fewer) gives of a package its command
    names (`pip freeze | grep -i django` → `Django==4.2.16`, `npm ls lodash` → `lodash@4.17.21`,
    `pip show urllib3` → `urllib3 1.26.20`): what the command was run to learn. Not a package and
    a version said apart (`axum v0.6.20`, `pool\t2.071s`): a tree or a run's listing says those."""
    if len(text) > ANSWER_CHARS * SELECTED_LINES or not ("==" in text or "@" in text or "ersion" in text):
        return
    lines = [line for line in text.splitlines() if line.strip()]
    if not 0 < len(lines) <= SELECTED_LINES:
        return
    asked = {word.casefold() for word in _PACKAGE_WORD.findall(command) if len(word) >= 3}  # a grep's pattern too
    for line in lines:
        if _FILE_LINE.match(line):  # a search's hit in a file (`requirements.txt:31:pandas==2.2.3`) names a line
            continue
        for m in _OUTPUT_PIN.finditer(line):
            named = re.split(r"[/:]", m.group("package").rstrip("/"))[-1].casefold()
            if named in asked and not m.group("package").casefold().startswith(("version", "python")):
                add("identifier", m.group(0).strip(), position, line.strip()[:200])
    name, version = _NAME_FIELD.search(text), _VERSION_FIELD.search(text)
    if version and name and name.group("package").casefold() in asked:
        add("identifier", f"{name.group('package')} {version.group('version')}", position, version.group(0).strip())


def _tool_version(command: str, text: str, position: int, add: Add) -> None:
    """Of a command that asks its tool's version (`_ASKS_VERSION`) and prints a banner of several
    lines, the tool and its version as the banner's first line naming it gives them (`Flutter
    3.24.5`, `Docker version 27.3.1` → `Docker 27.3.1`): the toolchain the session's findings hold
    for; a one-line answer is `_answer`'s."""
    asked = _ASKS_VERSION.match(command_core(command))
    if not asked or text.strip().count("\n") == 0 or len(text) > ANSWER_CHARS * SELECTED_LINES:
        return
    tool = re.escape(asked.group("tool"))
    for line in text.splitlines():
        m = re.search(rf"(?i)\b(?P<name>{tool})\b(?:\s+version)?[\s:]+(?P<version>{_VERSION})", line)
        if m:
            add("identifier", f"{m.group('name')} {m.group('version')}", position, line.strip()[:200], guessed=True)
            return


def _images(command: str, text: str, position: int, add: Add) -> None:
    """The images with their tags (`_IMAGE_REF`) an output names, IMAGES_NAMED or fewer, that its
    command does not (by name and tag): what a build pushed or a deploy runs (`image:
    registry.fly.io/…:deployment-…`)."""
    if "/" not in text or ":" not in text:
        return
    named = dict.fromkeys(_IMAGE_REF.findall(text[:OUTPUT_CHARS]))
    if 0 < len(named) <= IMAGES_NAMED:
        for image in named:
            # the local name a build gives the tag its command set (`naming to docker.io/library/api:slim`) is the command's
            if image.rpartition("/")[2] not in command:
                add("identifier", image, position, (_line_at(text, image) or command)[:200])


def _addresses(command: str, text: str, position: int, add: Add) -> None:
    """The e-mail addresses and host names (`_EMAIL`, `_HOST`) an output names, ADDRESSES_NAMED or
    fewer, that its command does not: the row a query or an error turned on (`Key (email)=(…) is
    duplicated`), the server a tool connected to; not a history's authors (`_authors` decides
    those), nor the addresses inside a URL (`_OUTPUT_URL`'s). More name a listing the session
    browsed. "Possibly dropped": as often a step on the way as a fact to keep."""
    if "." not in text or _GIT_HISTORY.search(command):
        return
    read = _OUTPUT_URL.sub(" ", text[:OUTPUT_CHARS])
    named = dict.fromkeys(m.group(0) for pattern in (_EMAIL, _HOST) for m in pattern.finditer(read))
    named = {address: None for address in named if address not in command and not _is_path(address)}
    if 0 < len(named) <= ADDRESSES_NAMED:
        for address in named:
            add("identifier", address, position, (_line_at(text, address) or command)[:200], guessed=True)


def _tickets(text: str, position: int, add: Add) -> None:
    """The tickets a history's commits name (`6aa0c1f tax: apply reduced VAT to e-books (LEGAL-88)`),
    TICKETS or fewer, each with its commit's line: why each change was made, which a reader looks
    up; more tickets are a release's worth of history surveyed."""
    found = dict.fromkeys(m.group(0) for m in _TICKET.finditer(text))
    if len(found) <= TICKETS:
        for ticket in found:
            add("identifier", ticket, position, (_line_at(text, ticket) or ticket)[:200])


def _advisories(command: str, text: str, position: int, add: Add) -> None:
    """The security advisories an output names by id (`_ADVISORY`), ADVISORIES or fewer, each with
    its line (`jinja2  3.1.3   GHSA-h75v-3vvj-5mfj 3.1.4`: the package, its version, the fix): not
    those the command names, nor one inside the one URL an output's fact already is."""
    if not any(mark in text for mark in _ADVISORY_MARKS):
        return
    urls = set(_OUTPUT_URL.findall(text)) - set(_OUTPUT_URL.findall(command))
    read = _OUTPUT_URL.sub(" ", text) if len(urls) == 1 else text
    named = dict.fromkeys(a for a in _ADVISORY.findall(read) if a not in command)
    if len(named) <= ADVISORIES:
        for advisory in named:
            add("identifier", advisory, position, (_line_at(read, advisory) or command)[:200])


def _focused_run(command: str) -> bool:
    """Whether `command` runs a part of a test suite (one file, one filter, one folder: `rspec
    spec/x_spec.rb`, `-k name`, `pytest tests/reports`): its tally counts the tests the session
    just wrote or fixed, not the suite's, and the summary's "it passes" says it."""
    return bool(_TEST_RUN.search(command) and _FOCUSED.search(command_core(command)))


def _answer(command: str, text: str, position: int, add: Add) -> None:
    """A command whose whole output is one short line with a figure answered what the session
    asked (`grep -c` 1207, `php artisan --version`): that line is the fact; not a line of a file a
    search found (`app.py:12: …`), nor one whose only figures are how long it took, a date or a name's."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if (
        len(lines) == 1
        and len(lines[0]) <= ANSWER_CHARS
        and len(_COLUMN_GAP.findall(lines[0])) < TABLE_GAPS
        and _telling_numbers(_GONE_THROUGH.sub(" ", _RUN_DURATION.sub(" ", lines[0])))
        and not _FILE_LINE.match(lines[0])
        and not _HEX.match(lines[0])
        and not _PROGRESS_BAR.search(lines[0])
        and not _found_nothing(lines[0])
        and not (_TEST_TALLY.search(lines[0]) and _focused_run(command))  # as `_measurements`: the tests just written
    ):
        # what the session looked up, but a lookup's answer is as often a step on the way (a
        # version checked, a count to decide the next command by) as a fact to keep: "possibly"
        add("measurement", lines[0], position, command[:200], guessed=True)


def _selected(command: str, text: str, position: int, add: Add) -> bool:
    """The output of one command that names the fields it prints (`_SELECTS_FIELDS`), when it is
    SELECTED_LINES short lines or fewer: one fact, its lines together ("grade": "D"; "score": 35),
    what the command was run to learn; a measurement if it holds a telling figure, else an
    identifier (a date a secret was rotated, the image a deployment runs). Whether it was that answer."""
    if len(text) > ANSWER_CHARS * SELECTED_LINES * 2 or not _SELECTS_FIELDS.search(command):
        return False
    # a chain prints the answers of several; `git log --format` is read for its commits and authors
    if re.search(r"&&|;|\|\|", command_core(command)) or _GIT_HISTORY.search(command):
        return False
    lines = [line.strip().rstrip(",") for line in text.splitlines() if not _ONLY_BRACKETS.fullmatch(line.strip())]
    if not 0 < len(lines) <= SELECTED_LINES or any(len(line) > ANSWER_CHARS for line in lines):
        return False
    # the files it picked (`cut -d: -f1 | sort -u`): a search's survey; not an image (`registry.example/api:3.14.1`)
    if all(_is_path(line) and ":" not in line for line in lines):
        return False
    answer = "; ".join(lines)
    # one word a line is a name (`registry.example/api:3.14.1`, `2026-03-14`), whatever its digits
    measured = any(len(line.split()) > 1 for line in lines) and _telling_numbers(_RUN_DURATION.sub(" ", answer))
    # a lookup's answer, as `_answer`'s: "possibly dropped" at most
    add("measurement" if measured else "identifier", answer, position, command[:200], guessed=True)
    return True


def _stopped(command: str, text: str, position: int, add: Add) -> None:
    """A run that exited 0 but ended on a warning line (`WARNING: loss is NaN at step 1774,
    stopping`) stopped itself and said why: that line is its result; not a log read (`tail
    app.log`: the warnings it read), nor a warning followed by the run's own end."""
    last = text[-MEASURED_TAIL:].rstrip().rpartition("\n")[2]
    m = _WARNING_LINE.match(last) if "ARNING" in last.upper() else None
    if m and not _READS_LOG.search(command.split("|")[0]):
        add("measurement", m.group(1).strip()[:200], position, command[:200])


def _schedules(command: str, text: str, position: int, add: Add) -> None:
    """The crontab lines an output shows (`15 3 * * * backup prune.sh`), each a setting: when a
    job runs is what a session about a job that ran (or did not) turns on."""
    if "*" not in text:
        return
    for m in islice(_CRON_LINE.finditer(text), FOUND_FILES):
        add("setting", m.group(0).strip()[:200], position, command[:200])


def _build_time(command: str, text: str, position: int, add: Add) -> None:
    """A build's or a start's result line with the time it took (`_BUILD_TIME`), BUILD_SECONDS or
    more: what a session about a slow build compares, and a reader asks after an upgrade; not a
    test run's (`./gradlew test`): its tally is its result, nor a check's (`cargo clippy`, `cargo
    check`: no artefact built). "Possibly dropped" at most: only a session about build time
    wants it back, and which one is, the rule cannot tell from the output."""
    if " in " not in text[-MEASURED_TAIL:] or _CHECKS_ONLY.search(command):
        return
    for line in text.rstrip().rsplit("\n", MEASURED_LINES * 3)[-MEASURED_LINES * 3 :]:
        m = _BUILD_TIME.search(line) if len(line) <= 200 else None
        if m and not _TEST_RUN.search(command_core(command)):
            minutes = int(m.group("minutes") or m.group("whole_minutes") or 0)
            if minutes * 60 + float(m.group("seconds") or 0) >= BUILD_SECONDS:
                add("measurement", line.strip()[:200], position, command[:200], newest=True, guessed=True)


def _last_answer(command: str, text: str, position: int, add: Add) -> None:
    """The last line of a chained command's output (`a && b`, `a; b`) when it is a value alone
    (`_BARE_VALUE`: `311MB`, `1207`): its last part's answer."""
    lines = text.rstrip().rsplit("\n", 2)
    last = lines[-1].strip()
    if len(lines) < 2 or not _BARE_VALUE.fullmatch(last) or not last.strip("$€£0.,KMGTiBkms% "):  # a figure, not 0
        return
    if re.search(r"&&|;", command_core(command)):
        add("measurement", last, position, command[:200])


def _query_answer(command: str, text: str, position: int, add: Add) -> None:
    """A query's one value (psql's ` count \n--------\n 503221\n(1 row)`, mysql's framed cell):
    what the session asked the database, "count: 503221"; or a query's short result of several
    columns (`_query_rows`)."""
    if len(text) > ANSWER_CHARS * 4:
        _query_rows(command, text, position, add)
        return
    lines = [
        line.strip(" |") for line in text.splitlines() if line.strip() and not _QUERY_FRAME.fullmatch(line.strip())
    ]
    if (
        len(lines) == 2
        and _QUERY_HEADER.fullmatch(lines[0])
        and _BARE_VALUE.fullmatch(lines[1])
        and _telling_numbers(lines[1])
    ):
        add("measurement", f"{lines[0]}: {lines[1]}", position, command[:200])
    else:
        _query_rows(command, text, position, add)


def _query_rows(command: str, text: str, position: int, add: Add) -> None:
    """The result of a query the session ran (`psql -c 'SELECT …'`, `mysql -e`, `sqlite3`), framed
    in columns and SELECTED_LINES rows or fewer (`(3 rows)`): what it asked the database, one fact,
    its header and rows together ("id | amount_cents: 1009312 | 4999; 1011870 | 12000"); a
    longer result is a listing it browsed, and so is one whose rows say when each was made (a
    schema history's `installed_on`, a log table's times)."""
    if not _QUERIED.search(command) or len(text) > ANSWER_CHARS * SELECTED_LINES * 3:
        return
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    counted = _ROW_COUNT.fullmatch(lines[-1]) if lines else None
    framed = [line for line in lines[:-1] if not _QUERY_FRAME.fullmatch(line)]  # psql's rule, mysql's borders
    if not counted or len(framed) == len(lines) - 1 or len(framed) < 2:
        return
    header, rows = framed[0], framed[1:]
    if "|" not in header or not 0 < len(rows) == int(counted.group(1) or counted.group(2)) <= SELECTED_LINES:
        return
    cells = [" | ".join(cell.strip() for cell in row.strip("|").split("|")) for row in rows]
    if any(_DATED.search(row) for row in cells):
        return
    named = " | ".join(cell.strip() for cell in header.strip("|").split("|"))
    answer = f"{named}: {'; '.join(cells)}"
    telling = _telling_numbers(_NOT_NUMBERS.sub(" ", "; ".join(cells)))
    add("measurement" if telling else "identifier", answer[:FACT_CHARS], position, command[:200])


def _measurements(command: str, text: str, position: int, add: Add, besides: Iterable[str] = ()) -> None:
    """An output's result is said last: its last lines with a count or a measure of the work
    (MEASURED_LINES of them, the one before the last "possibly dropped" at most), not of how long
    the command took, nor a progress line (its shape said again: "batch 3: 10000 rows"), nor one
    whose every number is 0 ("0 nanoseconds spent on 0 batches": nothing happened); `besides` are
    a failure's error lines, its fact's."""
    besides = set(besides)
    # A focused test run's tally (one file, one filter: `rspec spec/x_spec.rb`, `-k name`) counts
    # the tests the session just wrote or fixed, not the suite's: the summary's "it passes" says it.
    focused = _focused_run(command)
    measured: list[tuple[str, str]] = []  # (line, shape), last first
    tail = text.splitlines()[-MEASURED_TAIL:]
    tabled = sum(len(_COLUMN_GAP.findall(line)) >= TABLE_GAPS for line in tail) > 1
    # what the command was given (`wrk -t4 -c64` prints "4 threads and 64 connections") is no finding
    given = {n.replace(",", "") for n in _GIVEN_FIGURE.findall(command)}
    profiled = (
        next((at for at, line in enumerate(tail) if _PROFILE_HEADER.match(line)), None)
        if any(mark in text for mark in _PROFILE_MARKS)  # most outputs are no profile: spared a pass
        else None
    )
    if profiled is not None:  # a profile's first row is its finding; its other rows and its totals, the table
        top = next((row.strip() for row in tail[profiled + 1 :] if _PROFILE_ROW.match(row)), "")
        if 0 < len(top) <= 200 and not besides & {top}:
            add("measurement", top, position, command[:200])
        after = tail[profiled + 1 :]
        # what follows the table is the run's own result (pytest's tally after its slowest durations)
        tail = after[next((at for at, row in enumerate(after) if not _IN_PROFILE.match(row)), len(after)) :]
    percentiles = (
        [(float(m.group(1)), line.strip()) for line in tail if (m := _PERCENTILE.match(line))] if "%" in text else []
    )
    if len(percentiles) > 1:  # the tail latency is the one a target is set for (p99), not the median's
        add("measurement", max(percentiles)[1], position, command[:200], newest=True)
    for line in reversed(tail):
        line = line.strip()
        if not 0 < len(line) <= 200 or not _measured(line) or _PLAN_NODE.search(line):
            continue
        if given and {n.replace(",", "") for n, _, _ in _telling_numbers(line)} <= given:
            continue
        if tabled and len(_COLUMN_GAP.findall(line)) >= TABLE_GAPS:  # a row of a table the session read, not a result
            continue
        # a search's hit or a diagnostic (`src/worker.py:41: # retry 3 times`): a line of a file, no result
        if _FILE_LINE.match(line):
            continue
        if (focused and _TEST_TALLY.search(line)) or _CONTAINER_TALLY.match(line) or _found_nothing(line):
            continue
        if line.endswith(("...", "…")) or _PROGRESS_BAR.search(
            line
        ):  # a progress line ("2 of 4 replicas are available..."), not a result
            continue
        if line not in besides and _reports_work(_GONE_THROUGH.sub(" ", _RUN_DURATION.sub(" ", line))):
            measured.append((line, re.sub(r"\d[\d,.]*", "#", normalised(line))))
    shapes = Counter(shape for _, shape in measured)
    results = [line for line, shape in measured if shapes[shape] == 1][:MEASURED_LINES]
    # a test run's tallies of one shape are its suites' (`cargo test`'s `test result:` per binary): one result, together
    suites = [line for line, shape in reversed(measured) if shapes[shape] > 1 and _TEST_TALLY.search(line)]
    repeated = {shape for shape, said in shapes.items() if said > 1}
    if 1 < len(suites) <= SUITES and len(repeated) == 1:  # not beside a progress report's lines
        results = ["; ".join(suites), *results][:MEASURED_LINES]
    # the same figures said twice ("3 problems were found…", "…stored with 3 problems") are one result
    if len(results) > 1 and _telling_numbers(results[0]) == _telling_numbers(results[1]):
        del results[1]
    for at, line in enumerate(results):
        add("measurement", line, position, command[:200], newest=True, guessed=at > 0)


# A figure the model reports changed, whatever it counts ("went from 14 before the upgrade to 9");
# not a span of days ("from 14 November to 2 December").
_MONTH = r"(?:\s*(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b)"
_FROM_TO = re.compile(rf"\bfrom\s+~?\d[\d,.]*\b(?!{_MONTH})[^.;:\n]{{0,40}}?\bto\s+~?\d[\d,.]*\b(?!{_MONTH})")


def _prose_measurements(text: str, position: int, add: Add) -> None:
    """What the model reports it measured, in its own words ("41 mixed-case rows remain", "from
    2.87 kB to 3.41 kB"): each clause of its prose with a count or a measure of the work, at most
    PROSE_CLAUSE_CHARS long (a longer one explains, it does not report)."""
    if not _measured(text) and not (_FIGURE.search(text) and _FROM_TO.search(text)):  # most prose reports no figure
        return
    for sentence in sentences(text):
        if sentence.endswith("?"):  # a figure the model asks about ("…without picking it up?") it has not found
            continue
        previous = ""
        for clause in _CLAUSE_END.split(sentence):
            clause = clause.strip(" ,.")
            # a figure alone ("The covering version on the same sample: 0.31 s") is told by the clause before it
            told = f"{previous}: {clause}" if previous and _BARE_VALUE.fullmatch(clause) else clause
            previous = clause
            changed = _FROM_TO.search(clause) and _telling_numbers(clause)
            if len(told) > PROSE_CLAUSE_CHARS or not (changed or _measured(clause)):
                continue
            if changed or _reports_work(clause):
                add("measurement", told, position, guessed=True)


def _echo_tokens(text: str) -> Iterator[tuple[str, bool]]:
    """The tokens of `text` a session goes on with (`_ECHO_RUN`), each with whether it is a
    measurement (a duration, a size, a figure) rather than a name; not a date, a time, a line number."""
    not_figures: list[tuple[int, int]] | None = None  # where dates, line numbers… stand, found once when needed
    for run in _ECHO_RUN.finditer(text):
        token = run.group(0).strip(".:-+/")
        if len(token) > ECHO_TOKEN_CHARS:  # a pasted blob, no name (and the patterns below stay linear)
            continue
        if _ECHO_MEASURE.fullmatch(token):
            if not_figures is None:
                not_figures = [m.span() for m in _NOT_NUMBERS.finditer(text)]
            at = bisect.bisect_left(not_figures, (run.end(), -1)) - 1  # the last that starts before its end
            if at < 0 or not_figures[at][1] <= run.start():  # not a date's, a line number's, hand arithmetic's
                yield token, True
        elif (
            _ECHO_NAME.fullmatch(token) or _ECHO_WORDY.fullmatch(token) or _ADDRESS.fullmatch(token)
        ) and not _is_path(token):
            yield token, False


def _line_at(text: str, token: str, last: bool = False) -> str | None:
    """The line of `text` where `token` stands whole (not inside a longer token), or None; with
    `last`, the last such line: a figure an output says twice is its result where said last (the
    `longest batch 388 ms` of a run's summary line, not its progress line's `(388 ms)`)."""
    at = text.rfind(token) if last else text.find(token)
    while at >= 0:
        end = at + len(token)
        if not (at and (text[at - 1].isalnum() or text[at - 1] in "_.@-")) and not (
            end < len(text)
            and (text[end].isalnum() or text[end] in "_@" or text[end : end + 2].rstrip(".").startswith("."))
        ):
            start, stop = text.rfind("\n", 0, at) + 1, text.find("\n", end)
            return text[start : stop if stop >= 0 else len(text)].strip()
        at = text.rfind(token, 0, max(at + len(token) - 1, 0)) if last else text.find(token, end)
    return None


@dataclass
class _Histories:
    """The commits of the histories the session listed (`git log --oneline`, more than three: no
    fact of their own, `_output_facts`). One whose subject the model then tells in its words ("Mia's
    lazy-load change" of `9f8e7d6 cart: lazy-load line items`: HISTORY_WORDS of the subject's words
    no other listed subject has) is the commit the session turned on: its id, "possibly dropped"."""

    commits: dict[str, tuple[set[str], str, int]] = field(default_factory=dict)  # id -> (its own words, line, entry)

    def read(self, command: str, output: str, position: int) -> None:
        if not _GIT_HISTORY.search(command) or len(output) > OUTPUT_CHARS // 4:
            return
        listed = [(m.group(1), m.group(2), m.group(0)) for m in _ONELINE_COMMIT.finditer(output)]
        if len(listed) < 2:  # one is a fact already
            return
        words = [content_words(subject) for _, subject, _ in listed]
        said = Counter(word for subject in words for word in subject)
        for (commit, _, line), subject in zip(listed[:HISTORY_COMMITS], words[:HISTORY_COMMITS], strict=True):
            self.commits[commit] = ({word for word in subject if said[word] == 1}, line.strip(), position)

    def told(self, prose: str, add: Add) -> None:
        if not self.commits:
            return
        spoken = content_words(prose)
        for commit, (own, line, position) in list(self.commits.items()):
            if len(own & spoken) >= HISTORY_WORDS:
                add("identifier", commit, position, line[:200], guessed=True)
                del self.commits[commit]


@dataclass
class _Echoes:
    """The outputs of the commands since the model last spoke. A token of one (`_echo_tokens`)
    that the model's next words or a later command repeat is a fact the session went on with: a
    duration or a figure as a measurement, a name (a version, a pod, an image tag) as an
    identifier, each with its output's line; a token its own command gave is no answer of it."""

    # (output, entry, command), the last ECHO_OUTPUTS: a run of commands with no word between stays linear
    heard: deque[tuple[str, int, str]] = field(default_factory=lambda: deque(maxlen=ECHO_OUTPUTS))

    def hear(self, command: str, text: str, position: int) -> None:
        self.heard.append((text, position, command))

    def repeated(self, said: str, add: Add, spoke: bool) -> None:
        if self.heard and spoke:
            self._tallies_counted(said, add)
        if self.heard:
            tokens = dict(islice(_echo_tokens(said), ECHO_SAID))
            found: list[tuple[str, bool, int, str]] = []  # (token, measured, its output's entry, its line)
            for token, measured in tokens.items():
                # the model writes a figure with its thousands marked ("2,318") that a tool printed bare (`2318`)
                bare = token.replace(",", "") if measured and "," in token else token
                for text, position, command in self.heard:
                    line = _line_at(text, token, last=measured)
                    if line is None and bare != token:
                        line = _line_at(text, bare, last=True)
                        token = bare if line is not None else token
                    if line is None or _line_at(command, token) is not None:
                        continue
                    # A figure in a table's row (`gh run list`, a benchmark's) is one of many the session read;
                    # a number in a test's name (`✓ retry > does not retry on 400`) names the test.
                    if measured and token.isdigit() and _TEST_NAME_LINE.match(line):
                        continue
                    # a number a line keys as a thing's id (`job=88121`, `pid 4312`, `#198`) names it: no measure
                    if measured and token.isdigit() and _KEYED_ID.search(line[: line.find(token)]):
                        continue
                    # A figure of a table's row (a partition's lag, a run's time) is one of many the session read
                    # unless the model's own words single it out; a later command's is the row's id it looks up.
                    if not measured or spoke or len(_COLUMN_GAP.findall(line)) < ECHO_TABLE_GAPS:
                        found.append((token, measured, position, line[:200] or command[:200]))
                    break
            # Names of one output said again together, each from a line of its own (the licences it
            # allows, the versions it lists), go over its list: none of them is singled out.
            names = Counter(position for position, _ in {(p, line) for _, measured, p, line in found if not measured})
            for token, measured, position, line in found:
                if measured or names[position] < ECHO_LISTED:
                    # A name said again is one the session went on with, but as often a
                    # step (the pod, the runner it looked at) as a fact to keep; a commit's
                    # id said again is the commit the session turned on.
                    guessed = not measured and not _HEX.fullmatch(token)
                    add("measurement" if measured else "identifier", token, position, line, guessed=guessed)
        if spoke:
            self.heard.clear()

    def _tallies_counted(self, prose: str, add: Add) -> None:
        """A test run's tally whose count the model's next words give again ("7 passing now: the
        5 that were there plus the two new cases") is one the session reasons about (a test
        added, a suite grown), even of a focused run: its tally line, with its command."""
        counted = {m.group(1) for m in _COUNTED_TESTS.finditer(prose)}
        if not counted:
            return
        for text, position, command in self.heard:
            if not _TEST_RUN.search(command_core(command)):
                continue
            for line in reversed(text[-MEASURED_TAIL:].splitlines()):
                tally = _TALLY_COUNT.search(line)
                if tally and (tally.group(1) or tally.group(2)) in counted and len(line.strip()) <= 200:
                    add("measurement", line.strip(), position, command[:200], newest=True)
                    break


def _prose_decisions(text: str, position: int, add: Add) -> None:
    """The decisions of the model's prose that no marker word gives (`_CHOICE_OR_CAUSE` with a
    reason): a sentence stating what the choice the model makes next rests on ("Workers reconnect
    on every deploy. I'll keep the cache per process.": the two, one decision), and a sentence
    that sets two settings or more to their values ("MaxRetries 5, Backoff 2s, Jitter 0.5")."""
    choosing = _may_say(text, _CHOICE_MARKS)
    if not choosing and not _FIGURE.search(text):  # most of the model's prose: not split then
        return
    said = sentences(text)
    for before, sentence in zip([""] + said, said):
        if len(sentence) > SENTENCE_CHARS:
            continue
        if (
            choosing
            and _CHOICE_AHEAD.match(sentence.translate(_PLAIN))
            and _states_ground(before)
            and not _gives_reason(sentence)
        ):
            add("decision", before, position)
        elif _settings_given(sentence):
            add("decision", sentence, position)


def _settings_given(sentence: str) -> bool:
    """Whether a sentence gives SETTINGS_CHOSEN settings or more their values, one of them named as
    code names it (`MaxRetries 5, Backoff 2s, Jitter 0.5`; not "Python 3.12 and Node 20")."""
    if not _FIGURE.search(sentence):
        return False
    named = set()
    for value in _PROSE_VALUE.finditer(sentence):
        name = _name_before(sentence[max(0, value.start() - 48) : value.start()])
        if name and _SETTING_NAME.fullmatch(name):
            named.add(name)
    return len(named) >= SETTINGS_CHOSEN and any(_CODE_NAME.fullmatch(name) for name in named)


def _name_before(text: str) -> str:
    """The word a value follows (`MaxRetries` of "MaxRetries 5", "max_lag=", "`ttl`: ", "TTL to"),
    read by string operations: a pattern anchored at the end is tried at every place before it."""
    text = text.rstrip(" `-")
    if text.endswith(("=", ":")):
        text = text[:-1].rstrip(" `")
    elif text.endswith((" to", " of")):
        text = text[:-3].rstrip(" `")
    start = len(text)
    while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return text[start:]


def _states_ground(sentence: str) -> bool:
    """Whether a sentence of the model's states something a choice can rest on: a statement
    (not a question, not a list's heading) of DECISION_WORDS_AT_LEAST words or more that says what
    always, never or only holds ("the vendor app never sends a batch id"), as a rule does."""
    return (
        len(sentence) <= SENTENCE_CHARS
        and not sentence.rstrip().endswith(("?", ":"))
        and len(_WORDS.findall(sentence)) >= DECISION_WORDS_AT_LEAST
        and _ALWAYS_OR_NEVER.search(sentence) is not None
    )


def _found_files(command: str, text: str, position: int, add: Add) -> None:
    """The files a search found (`grep -rn`, `rg`: the files its output lines name, when they are
    FOUND_FILES or fewer) and the files a command printed (`cat`, `head`, `sed -n`): a fact read
    from a file is read where it stands."""
    core = command_core(command)
    # a search may be the last of a chain (`free -g && grep -n jvmargs gradle.properties`)
    if any(_SEARCH.match(part.strip()) for part in core.split(" && ")):
        found: dict[str, str] = {}
        for line in text.splitlines():
            m = re.match(r"^([^\s:]+\.[A-Za-z]\w{0,9}):\d+[:-]", line)
            if m and m.group(1) not in found:
                found[m.group(1)] = line.strip()[:200]
        if len(found) <= FOUND_FILES:
            for path, line in found.items():
                add("file read", path, position, line, guessed=True)
    elif _PRINTS_FILES.match(core) and "|" not in command:  # `cat X | grep Y` looks up a value: the value is the fact
        for word in re.split(r"&&|;", core)[0].split()[1:]:
            # a log printed (`tail -50 /var/log/celery/worker.log`) is read for its lines, which
            # say the facts; the log is no file the session worked on
            if _LOG_FILE.search(word):
                continue
            if not word.startswith("-") and _is_path(word) and "." in PurePosixPath(word).name:
                # a file a command printed is read as often for a line of it (a log's tail) as for
                # itself: unlike a Read, "possibly dropped" at most
                add("file read", word, position, guessed=True)


def _command_of(block: dict) -> str | None:
    """A shell call's command, None for any other tool's call (or a shell call without one)."""
    name, given = block.get("name"), block.get("input")
    if not isinstance(name, str) or name not in conversation.SHELL_TOOLS or not isinstance(given, dict):
        return None
    command = given.get(conversation.SHELL_TOOLS[name])
    return command if isinstance(command, str) else None


def _files_named(prose: str, read_since: list[tuple[str, int, str]], position: int, add: Add) -> None:
    """The file the model singles out in its prose from a survey it read since it last spoke (an
    output naming more than FOUND_FILES files: "Note notebooks/helpers.py imports it too" after a
    search's list): "possibly dropped" at most. A file it names in passing, one an output showed
    alone, a folder and a ratio (`origin/main`, `35/month`) are none."""
    if not read_since or "/" not in prose:
        return
    surveys: list[str] | None = None  # what was read that surveys files, found once if a file is named
    for found in _scanned(prose, paths=True):
        if found.lastgroup == "path":
            path = found.group("path").rstrip(".,;:")
            if "." in path.rpartition("/")[2] and path.rpartition(".")[2].casefold() in FILE_EXTENSIONS:
                if surveys is None:
                    surveys = [text for text, _, _ in read_since if _surveys(text)]
                if any(path in text for text in surveys):
                    add("path", path, position, guessed=True)


def _surveys(output: str) -> bool:
    """Whether an output names more than FOUND_FILES files, one a line (a search's or a listing's)."""
    return sum(1 for line in output.splitlines() if _NAMES_FILE.search(line)) > FOUND_FILES


def _files_written(command: str, position: int, add: Add) -> None:
    """The files a shell command writes (`sed -i … app.py`, `> /var/log/ghost.log`, `tee out.txt`,
    `git mv a.py b.py`): edited as an Edit's file is, though no Edit names them."""
    if not any(mark in command for mark in _WRITE_MARKS):  # most commands write no file: not split then
        return
    for part in re.split(r"&&|;|\|\|", command):  # no `\s*` around: a run of spaces would be read again at each
        part = part.strip()
        written = [m.group(1) for m in _REDIRECTED.finditer(part)]
        words = part.split()
        if _EDITS_IN_PLACE.match(part) and len(words) >= 3:  # its file, or where it moves one to: its last
            written += [word for word in words[1:] if not word.startswith("-")][-1:]
        for path in written:
            path = path.strip("'\"")
            if _is_path(path) and not path.startswith(("/dev/", "/tmp/")) and "$" not in path:  # not scratch
                add("file edited", path, position)


# What the words right before a hexadecimal id say it is when it is no commit: an image, a
# container, a layer, a digest or a checksum, a blob or a tree, a build.
_NAMES_NO_COMMIT = re.compile(
    r"\b(?i:images?|containers?|layers?|digests?|checksums?|sha-?256|sha-?512|md5|blobs?|trees?|volumes?|builds?"
    r"|etags?|artifacts?)\b(?:\s+(?:id|ID|is|of|was))?[\s:=(`'\"]*$"
)
NAMED_BEFORE = 24  # characters before an id where what it is is said


def _identifiers(text: str, position: int, add: Add, paths: bool) -> None:
    """Hexadecimal ids and URLs said anywhere; paths the user names (the model names many in
    passing). Code names and bare numbers are not facts of their own: a reader misses them inside
    the sentence, the edit or the measurement that says them."""
    for found in _scanned(text, paths):
        kind, value = found.lastgroup, found.group(found.lastgroup or 0)
        if kind == "url":
            add("url", value.rstrip(".,;:!?"), position)
        elif kind == "path" and paths:
            path = value.rstrip(".,;:")
            if path.casefold() not in _NOT_FILES and not path.replace(".", "").isdigit() and _is_path(path):
                add("path", path, position)
        elif kind == "ticked":
            _identifiers(value, position, add, paths)
        elif kind == "hex" and _NAMES_NO_COMMIT.search(text, max(0, found.start() - NAMED_BEFORE), found.start()):
            continue  # "image 9a8b7c6d5e4f", "sha256:…", "checksum 3f2a…": an object's hash, no commit
        elif kind in ("hex", "ticket", "advisory", "uuid", "issue"):
            add("identifier", value, position)


def _scanned(text: str, paths: bool) -> Iterator[re.Match[str]]:
    """`_IDENTIFIER`'s matches in `text` where one `_identifiers` adds may be: all of them in a text
    with a "#" or a backtick, those of its runs with a mark in any other."""
    if "#" in text or "`" in text:
        yield from _IDENTIFIER.finditer(text)
        return
    for run in (_MARKED_RUN_PATHS if paths else _MARKED_RUN).finditer(text):
        yield from _IDENTIFIER.finditer(text, run.start(), run.end())


def _is_path(path: str) -> bool:
    """A path has a folder or a file extension: `src/app`, `app.py`; not `os.path` or `r.text`."""
    if "/" in path.strip("/"):
        return not re.fullmatch(r"[\d/.-]+", path)
    return path.rpartition(".")[2].casefold() in FILE_EXTENSIONS


def _flagged(entry: dict) -> bool:
    """Claude Code's own entries (the summary, meta lines, subagents'): nothing said in the session.
    A message the user sent while a turn ran is said, though Claude Code writes it as an attachment."""
    if conversation.queued_command(entry) is not None:
        return not conversation.user_text(entry)
    return entry.get("type") not in ("user", "assistant") or any(
        entry.get(flag) for flag in ("isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
    )


def _content(entry: dict) -> object:
    message = entry.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return (
        "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
        if isinstance(content, list)
        else ""
    )


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def dropped_facts(entries: Iterable[object], summary: Summary | None) -> tuple[list[Fact], int]:
    """The facts of `entries` that `summary` does not contain (all of them without a summary),
    each with its confidence, and how many it contains."""
    every = facts(entries)
    if summary is None:
        return every, 0
    session = Session.of(every)
    missing = []
    for fact in every:
        judged = summary.judge(fact, session)
        if judged != KEPT:
            sure = fact.kind not in UNSURE_KINDS and fact.confidence == DROPPED
            missing.append(replace(fact, confidence=judged if sure else POSSIBLY_DROPPED))
    kept = len(every) - len(missing)
    # An identifier inside a listed sentence of the same entry is that sentence's, not a fact of its own.
    listed_at: dict[int, list[str]] = {}
    for f in missing:
        if f.kind in _SAID_KINDS:
            listed_at.setdefault(f.entry, []).append(f.text)
    missing = [
        f
        for f in missing
        if f.kind not in _INSIDE_SENTENCES or not any(_whole(said, f.text) for said in listed_at.get(f.entry, ()))
    ]
    missing = _told_by_a_listed_clause(missing)
    missing = _inside_a_longer(missing)
    # Within a kind, the surer first.
    missing.sort(key=lambda f: (KINDS.index(f.kind), f.confidence != DROPPED, f.entry))
    return missing, kept


# --- a savepoint --------------------------------------------------------------------------------

RECORDED = "recorded by the PostCompact hook"
LATER_SAVEPOINT = "the summary entry in savepoint {} of the same session"
AFTER_BOUNDARY = "the summary entry after the compaction boundary in savepoint {}"
NONE_RECORDED = "none recorded (PostCompact did not run, or this savepoint was not a compaction)"
NOT_RESTORED = "not restored from the remote (`precompact restore` brings back a summary only when your signing key bound it to its savepoint, and the remote held none so bound for this one: none was recorded, one was recorded before summaries were signed, or one failed that check, which restore named)"


def of_savepoint(config: Config, instance: str | None = None, sequence: int | None = None) -> Dropped:
    """What compaction dropped from savepoint `sequence` of `instance` (default: the newest of the
    configured instance), read from its snapshot on this machine after the verifier checked it."""
    return of_resurrection(
        config,
        resurrection.from_this_machine(
            config, instance, sequence, of_compaction=sequence is None, git_when_altered=True
        ),
    )


def of_resurrection(config: Config, found: resurrection.Resurrection) -> Dropped:
    """What compaction dropped from a savepoint already loaded and checked; refused (NotVouched)
    unless a root vouches for it, or only this machine's copy failed and git's stood in for it
    (its `copy_note` says so)."""
    found.check_vouched()
    with _collector_paused():
        history = [entry for _, entry in found.contents.located_entries()]
        entries = history[: capture.before_compaction(found.savepoint, history)]
        text, source = _summary(config, found, history, len(entries))
        summary = Summary(text, found.document.cwd) if text else None
        missing, kept = dropped_facts(entries, summary)
    return Dropped(
        found.instance,
        found.savepoint.sequence,
        text,
        source,
        missing,
        kept,
        len(entries),
        resurrection.copy_note(found),
    )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a history is parsed and listed: its collections walk
    every object alive, and a 100 MB history is millions of them, walked again and again as the
    rule allocates (they took 0.8 of the 1.2 s its parsing cost, and 1 s of the rule's 8). The
    entries and facts hold no cycles: reference counting frees them."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _summary(config: Config, found: resurrection.Resurrection, history: list, entries: int) -> tuple[str | None, str]:
    s = found.savepoint
    if s.compact_summary:
        return s.compact_summary, RECORDED
    if entries < len(history):  # made after the compaction: its summary entry follows the boundary
        text = _summary_entry(history[entries:])
        if text:
            return text, AFTER_BOUNDARY.format(s.sequence)
    later = [
        other
        for other in savepoint_log.savepoints(config.logs, found.instance)
        if other.sequence > s.sequence and s.session_id and other.session_id == s.session_id
    ]
    # The first later savepoint may have been made before Claude Code wrote its summary entry
    # (SessionStart and PostCompact run before it does): the next ones are read until one holds it.
    for other in later:
        after = resurrection.from_this_machine(config, found.instance, other.sequence)
        if after.copy_verified:
            text = _summary_entry([entry for _, entry in after.contents.located_entries()][entries:])
            if text:
                return text, LATER_SAVEPOINT.format(other.sequence)
    return None, NOT_RESTORED if s.restored else NONE_RECORDED


def _summary_entry(entries: list) -> str | None:
    """The text of the first compaction summary entry among `entries`."""
    for entry in entries:
        if isinstance(entry, dict) and entry.get("isCompactSummary"):
            # Claude Code marks it both ways; read as a user entry, it is the summary's text.
            text = conversation.user_text({**entry, "isCompactSummary": False, "isVisibleInTranscriptOnly": False})
            if text:
                return text
    return None


def render(report: Dropped) -> str:
    """The list as text, by kind; every fact quoted on one line, with its entry reference, those
    the rule is unsure of marked "possibly dropped"."""
    possibly = report.possibly()
    lines = [
        (
            f"savepoint {report.sequence} of {report.instance}: {len(report.facts)} fact(s) of {report.entries} entries "
            f"not in the compaction summary ({possibly} of them possibly dropped: it holds something like them; "
            f"{report.kept} in it); summary: {report.summary_source}"
        )
    ]
    for kind, mine in report.by_kind():
        lines.append(f"{kind} ({len(mine)}):")
        for fact in mine:
            detail = f" -> {quoting.inline(fact.detail)}" if fact.detail else ""
            unsure = f" ({POSSIBLY_DROPPED})" if fact.confidence == POSSIBLY_DROPPED else ""
            lines.append(f"  [{report.ref(fact)}]{unsure} {quoting.inline(fact.text)}{detail}")
    lines.append("`precompact show REF` prints an entry whole.")
    return "\n".join(lines)
