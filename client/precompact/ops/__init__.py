"""Operations over several layers: flushing Layers 2 and 3 in order and re-encrypting the branch
(layers), inspecting the on-chain record and the ledgers (inspection), posting to the chain in
order (anchoring), starting the background worker (background), what the hook does at each
session event and the brief it delivers (compaction), init, prune, import and doctor. Imports
everything below the facade; the facade only delegates to it."""
