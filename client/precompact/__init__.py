"""precompact: save a Claude Code session before compaction, back it up in git, prove it on Solana."""

# The one place the version is written: pyproject.toml reads it, and tests/python/test_plugin.py
# checks that the plugin's manifests say the same.
__version__ = "0.1.0"
