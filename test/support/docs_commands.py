"""
What the README and docs/ tell a user to type, read out of the pages and checked against the code.

Each `triton-perception ...` command (in a fenced block, continued lines joined, or an inline
code span) is parsed by the package's own parser without running it; each `name:=value` of a
`ros2 launch triton_perception ...` line names a launch argument the plan knows; each
`from triton_perception.X import a, b` resolves through the folder's face; each repository path
in backticks exists (but a path cited from an upstream project at a release); no link leaves the
repository. `problems(page_text)` returns one line per
thing that fails, so a test can hold a page to none and a fixture to the ones it plants.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import io
from pathlib import Path
import re
import shlex

from triton_perception.cli import build_parser
from triton_perception.pipeline import ARGUMENT_NAMES

FENCE = re.compile(r'^```[^\n]*\n(.*?)^```', re.S | re.M)
INLINE = re.compile(r'(?<!`)`([^`\n]+)`(?!`)')
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')
IMPORT = re.compile(r'^\s*from (triton_perception[\w.]*) import (?:\(([\w\s,]+)\)|([\w ,]+))',
                    re.M)
# The checkout's top-level folders and files: a backticked path starting with one is checked.
REPOSITORY_ROOTS = ('triton_perception/', 'launch/', 'config/', 'docs/', 'test/',
                    'model_repository/', 'dev/', 'scripts/', 'rosdep/', 'resource/', '.ci/')
# Words a page writes in place of a value the user chooses (a drive, a bag, a directory), and
# what it shows as optional ([--option VALUE]).
PLACEHOLDER = re.compile(r'^[A-Z][A-Z0-9_]*$|^<.*>$|^\.\.\.$')
# An upstream project cited at a release, as the pages cite one ("ros2/launch tag 1.0.7,"): a
# path after it in the same paragraph is that project's, not this repository's.
UPSTREAM = re.compile(r'\b[A-Za-z0-9][\w.-]*/[\w.-]+ (?:tag|branch|commit) ')
OPTIONAL = re.compile(r'\[[^\[\]]*\]')


def commands(text: str) -> list[str]:
    """Return every triton-perception command of a page, continued lines joined."""
    found = []
    for block in FENCE.findall(text):
        joined = re.sub(r'\\\n\s*', ' ', block)
        found += [line for line in joined.splitlines() if command_words(line)]
    found += [span for span in INLINE.findall(text) if command_words(span)]
    return found


def command_words(line: str) -> list[str]:
    """Return the words after `triton-perception` (or .venv/bin/...), [] for another line."""
    try:
        words = shlex.split(OPTIONAL.sub('', line.split(' #', 1)[0]), comments=False)
    except ValueError:
        return []
    while words and re.fullmatch(r'[A-Z_][A-Z0-9_]*=\S*', words[0]):  # VAR=value prefixes
        words = words[1:]
    if not words or Path(words[0]).name != 'triton-perception':
        return []
    for stop in ('|', '&&', ';', '>', '2>&1'):
        if stop in words:
            words = words[:words.index(stop)]
    return words[1:] or ['--help']


def parse_problem(words: list[str]) -> str:
    """Return why the package's parser refuses `words` ('' when it takes them)."""
    chosen = ['1' if PLACEHOLDER.search(word) else word for word in words]
    error = io.StringIO()
    try:
        with contextlib.redirect_stderr(error), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(chosen)
    except SystemExit as stop:
        if stop.code:
            lines = error.getvalue().strip().splitlines()
            return lines[-1] if lines else f'exit {stop.code}'
    except argparse.ArgumentError as refused:
        return str(refused)
    return ''


def launch_problems(text: str) -> list[str]:
    """Return each `name:=value` of a triton_perception launch line that is no argument."""
    found = []
    for line in re.sub(r'\\\n\s*', ' ', text).splitlines():
        if 'ros2 launch triton_perception' not in line:
            continue
        for name in re.findall(r'(?:^|\s)([A-Za-z_][\w]*):=', line):
            if name not in ARGUMENT_NAMES:
                found.append(f'launch argument {name!r} does not exist: {line.strip()}')
    return found


def import_problems(text: str) -> list[str]:
    """Return each name of a `from triton_perception... import` a face or module does not give."""
    found = []
    spans = '\n'.join(INLINE.findall(text))  # `from triton_perception.x import y` in prose too
    for module_name, grouped, listed in IMPORT.findall(f'{text}\n{spans}'):
        names = grouped or listed
        if module_name != module_name.lower():  # a pattern: triton_perception.FOLDER.MODULE
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            found.append(f'from {module_name}: {error}')
            continue
        for name in (name.strip() for name in names.replace('\n', ' ').split(',')):
            if name and not hasattr(module, name):
                found.append(f'from {module_name} import {name}: no such name')
    return found


def path_problems(text: str, repository: Path) -> list[str]:
    """Return each backticked repository path that does not exist in `repository`."""
    found = []
    for match in INLINE.finditer(text):
        path = match.group(1).strip().split(' ')[0].split('#')[0].rstrip(':,.')
        if not path.startswith(REPOSITORY_ROOTS) or any(mark in path for mark in '<>{}$'):
            continue
        if path.startswith('docs/') and path.count('/') > 1:  # an upstream project's docs/ path
            continue
        if UPSTREAM.search(text[:match.start()].rsplit('\n\n', 1)[-1]):
            continue
        matches = list(repository.glob(path)) if '*' in path else [repository / path]
        if not any(match.exists() for match in matches):
            found.append(f'{path} does not exist')
    return found


def link_problems(text: str) -> list[str]:
    """Return each link that leaves the repository."""
    return [f'link out of the repository: {target}' for target in LINK.findall(text)
            if re.match(r'[a-z]+://', target)]


def problems(text: str, repository: Path) -> list[str]:
    """Return every problem of a page's text, one line each."""
    found = [f'{" ".join(words)}: {problem}' for words in map(command_words, commands(text))
             if (problem := parse_problem(words))]
    return (found + launch_problems(text) + import_problems(text)
            + path_problems(text, repository) + link_problems(text))
