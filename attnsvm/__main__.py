"""`python -m attnsvm`: the command line."""

from attnsvm.interfaces.cli.entry import main

main()
