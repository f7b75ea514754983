"""`python -m gradviz.cli ...` runs the `gradviz` command."""
import sys

from . import main

sys.exit(main())
