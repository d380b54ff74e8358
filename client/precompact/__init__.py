"""precompact: save a Claude Code session before compaction, back it up in git, prove it on Solana."""
