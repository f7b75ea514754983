"""`python -m gradviz ...` runs the `gradviz` command (where the console script is not on PATH)."""
import sys

from .cli import main

sys.exit(main())
