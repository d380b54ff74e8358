"""Layer 2: the savepoint branch committed through git plumbing and pushed (gitstore), and its
encryption (encryption). Reads Layer 1's index and chunks, which it backs up; never Layer 3.
Imports boundary, config, transcript and local."""
