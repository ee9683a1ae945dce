"""`python -m pipelines.cli ...` runs the `research` command (handy in a checkout without the console script)."""

import sys

from pipelines.cli import main

sys.exit(main())
