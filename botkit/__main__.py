"""``python -m botkit`` runs the command line."""

import sys

from botkit.cli import main

sys.exit(main())
