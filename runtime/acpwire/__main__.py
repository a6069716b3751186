"""`python -m acpwire`: the `acpwire` command (see `acpwire.cli`)."""

import sys

from acpwire.cli import main

sys.exit(main())
