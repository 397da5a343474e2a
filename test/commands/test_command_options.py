"""
The `triton-perception` command line: every command's options build, read from their tables.

The parser is built as cli.py builds it (commands/), without running a command: each command
and subcommand prints its help, and `models install --layout` offers the detector head layouts
and the lane layouts of lanes/layouts.py's table.
"""
from __future__ import annotations

import argparse

import pytest

from triton_perception.cli import build_parser
from triton_perception.graphs import HEAD_LAYOUTS
from triton_perception.lanes import LAYOUTS


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Return every command and subcommand's parser by its words ('bag play', ...)."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = sub
                found.update({f'{name} {word}': subsub for word, subsub in commands(sub).items()})
    return found


@pytest.mark.parametrize('words', sorted(commands(build_parser())))
def test_every_command_prints_its_help(words: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`triton-perception WORDS --help` exits 0 with a usage line naming the command."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*words.split(), '--help'])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f'usage: triton-perception {words}')


def test_model_layouts_come_from_the_tables() -> None:
    """--layout offers auto, the detector head layouts and every lane layout of the table."""
    layout = next(action for action in commands(build_parser())['models']._actions
                  if action.dest == 'layout')
    assert list(layout.choices or ()) == ['auto', *HEAD_LAYOUTS, *LAYOUTS]
