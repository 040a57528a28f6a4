"""Policy models and loading."""
