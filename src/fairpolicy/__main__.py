"""``python -m fairpolicy``."""

import sys

from fairpolicy.cli import main

if __name__ == "__main__":
    sys.exit(main())
