"""User-facing errors: each carries a one-line message the CLI prints without a traceback, made
safe for a terminal (`printable`) whatever names from the input it quotes."""

MESSAGE_LIMIT = 2000        # characters of one message (a name from the input may be megabytes)


def printable(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` safe to print on a terminal: whitespace as spaces, every other non-printable
    character (C0 and C1 controls, ESC, DEL, lone surrogates, line separators) as its Python
    escape, cut to about `limit` characters with the full length said."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text)} characters)"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else " " if c in "\t\n\r" else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def shell_word(text: str) -> str:
    """`text` as one shell word that is safe to print and to paste: shlex's quoting, or bash's
    $'...' form with escapes where it holds characters a terminal must not see raw."""
    import shlex

    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join("\\" + c if c in "\\'" else c if c.isprintable() else
                          c.encode("unicode_escape").decode("ascii") for c in text) + "'"


class UserError(Exception):
    """Bad input from a user (file, flag, id). The CLI prints `error: <message>` and exits 2."""

    def __init__(self, message: object = ""):
        super().__init__(printable(str(message)))


class DatasetError(UserError, ValueError):
    """A dataset fails validation (shape, finiteness, labels, T >= 2, n >= 1)."""
