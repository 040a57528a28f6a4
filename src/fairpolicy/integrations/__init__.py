"""Integrations with other tools (each imports its tool only when used)."""
