"""What the tests and the scripts share: a running precompact-localnet, throwaway projects,
realistic transcripts, the precompact command runners, the fault trials, the secret corpus and
the real Claude Code driver. Tests import it as `support`; scripts put tests/python on sys.path."""
