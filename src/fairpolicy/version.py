"""The package version, in a leaf module so every layer can name it without importing the
package root (which lazily exports the run's entry points). Kept equal to
``pyproject.toml``'s ``version`` by ``tests/test_import_graph.py``."""

__version__ = "0.1.0"
