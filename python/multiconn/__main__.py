"""`python -m multiconn`: the command-line interface."""

from multiconn.cli import main

raise SystemExit(main())
