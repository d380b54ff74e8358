"""Everything that touches the outside world, and nothing else: child processes (processes: Python
children isolated from the project, git through git_env with the repository's own programs
disarmed; git_exclude: a project's own files kept out of git status, checked), the confined logs/
directory (logs_dir: opened by descriptor, links and non-regular files refused, reads capped),
atomic writes, private files (private_file: 0600 from creation, never through a link), the files
precompact is told to read (small_file, their one opener: keys, identities, configuration,
approvals, agents' settings; opened without blocking, checked on the descriptor, capped), an
agent's session files (session_file: opened through small_file, streamed from the descriptor it
checked), the quoting of outside text given to the model (quoting), what reaches a terminal
(terminal: the only writer to stdout and stderr, controls made visible), the limits on JSON from
outside (outside_json), and the user's home and XDG directories (user_roots: never relative, and
in the modes the agent starts never in the project). Imports nothing of precompact but the error
family."""
