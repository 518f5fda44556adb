"""The mail server's game-neutral core: commands, their handlers and the processing runner."""
