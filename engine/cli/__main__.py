"""`python -m engine.cli`: the `graphmem` command."""

import sys

from engine.cli.app import main

sys.exit(main())
