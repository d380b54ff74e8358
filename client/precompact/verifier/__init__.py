"""The one place that decides "verified": the rules (verdicts) over the roots the user set up; the
evidence they judge, gathered once (evidence: git's copies and chunks at their commits); one
savepoint's checks for whoever brings it back (savepoint), and verify, which walks them all.
Imports the layers and what they stand on; nothing above."""
