"""``python -m levysde`` is the same as the ``levysde`` console script."""
import sys

from levysde.cli import main

if __name__ == "__main__":
    sys.exit(main())
