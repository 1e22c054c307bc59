"""`python -m bench`: measure and print the table."""

import sys

from bench.run import main

sys.exit(main())
