"""Full-text search over what the savepoints hold (fulltext): a derived index, never a source of
truth; excerpts are read only from snapshots the verifier checked. Imports the verifier and
below."""
