"""`python -m attnsvm`: the command line."""

from attnsvm.interfaces.cli import main

main()
