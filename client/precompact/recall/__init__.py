"""Full-text search over what the savepoints hold (fulltext): a derived index, never a source of
truth; excerpts are read only from snapshots the verifier checked. Across every project this
machine archived (everywhere): each project's index opened in turn, one BM25 ranking. Imports the
verifier and below."""
