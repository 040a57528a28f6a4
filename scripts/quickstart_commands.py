"""Print the README's Quickstart commands, one per line, exactly as written.

`.ci/run` runs what this prints, so CI runs the two commands a newcomer copies from the
README, never a paraphrase of them. A Quickstart block must hold one command on one line.
Usage: python scripts/quickstart_commands.py README.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def quickstart_commands(readme: str) -> list[str]:
    """The one-line commands of the fenced ``bash`` blocks under ``## Quickstart``."""
    if "\n## Quickstart\n" not in f"\n{readme}":
        raise SystemExit("README.md has no '## Quickstart' section")
    section = f"\n{readme}".split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", section, re.S | re.M):
        lines = [line for line in block.splitlines() if line.strip()]
        if len(lines) != 1:
            raise SystemExit(f"a Quickstart block must be one command on one line: {block!r}")
        commands.append(lines[0].strip())
    return commands


if __name__ == "__main__":
    for command in quickstart_commands(Path(sys.argv[1]).read_text("utf-8")):
        print(command)
