"""Operations over several layers: posting to the chain in order (anchoring), starting the
background worker (background), what the hook does at each session event (compaction), init,
prune, import and doctor. Imports everything below the facade."""
