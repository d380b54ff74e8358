"""Layer 1, on this machine: the append-only savepoint index (savepoint_log), snapshots (and the
typed view, snapshot.Document, through which the rest of precompact reads one) and their
content-addressed chunks, canonical JSON, where a session's next savepoint starts reading
(read_position), this machine's record of what it wrote (provenance), the recovery of missed
savepoints (capture) and this machine's registry of the projects it archives (registry). Imports boundary, config and transcript; never the other layers."""
