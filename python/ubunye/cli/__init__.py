"""The ``ubunye`` command line: ``main.py`` assembles the app from one module per command group."""
