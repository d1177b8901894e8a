"""People: who may log in (users file) and what sessions are called outside the process (tokens)."""
