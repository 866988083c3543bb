"""Public-safety rules (detect and redact secrets and private material) and the local-state
boundary. Pure functions over text and records: no git, no CLI, standard library only."""
