"""Bringing a savepoint back: resurrect (choose and verify, then restore), the SessionStart brief
(brief) and uncompact (a verified savepoint written back as a session). Imports recall, the
verifier and below."""
