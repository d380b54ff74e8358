"""The one place that decides "verified": the rules (verdicts) over the roots the user set up, and
verify, which gathers the evidence (local bytes, git copies, the record) and walks the savepoints.
Imports the layers and what they stand on; nothing above."""
