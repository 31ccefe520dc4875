"""The CLI as the tests drive it in-process: `run(monkeypatch, capsys, *args)` sets argv, runs
`attnsvm`'s main and returns (exit code, stdout, stderr)."""

import sys

import pytest

from attnsvm.interfaces import cli


def run(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["attnsvm", *map(str, args)])
    with pytest.raises(SystemExit) as e:
        cli.main()
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err
