"""User-facing errors: each carries a one-line message the CLI prints without a traceback."""


class UserError(Exception):
    """Bad input from a user (file, flag, id). The CLI prints `error: <message>` and exits 2."""


class DatasetError(UserError, ValueError):
    """A dataset fails validation (shape, finiteness, labels, T >= 2, n >= 1)."""
