"""
The shared folder against dev/shared_manifest.yaml: check a copy, rebuild one, refresh checksums.

The weights, data and ROS launch wheels stay out of the repository, so the manifest is what tells
a reader what the folder must hold and where each file came from; this script holds a copy to it.

    check       every file of the manifest in the folder, with its size and SHA-256 (make
                check-shared); one line per missing or different file, exit 1 when any
    plan        what `rebuild` would do for each piece, without touching the network
    rebuild     make a folder from upstream (make shared): git checkouts at the recorded commits
                (from local clones with --mirror), the launch wheels built with the recorded
                patch; one line per piece it could not reach or cannot rebuild (the model exports
                need PyTorch)
    checksums   write the folder's sizes and SHA-256s into the manifest (after a deliberate change
                of the folder)

The folder is $TRITON_PERCEPTION_SHARED, else ../shared (system.paths.shared_directory), unless
--folder (check, checksums) or --into (rebuild) names another.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
import hashlib
import os
from pathlib import Path
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from typing import Callable, Mapping, Sequence
import zipfile

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from triton_perception.system.checksums import sha256_of  # noqa: E402
from triton_perception.system.paths import shared_directory  # noqa: E402

MANIFEST = REPO / 'dev' / 'shared_manifest.yaml'
# Files at least this large say so on stderr before they are hashed (the rest is quick).
LARGE_FILE = 16 << 20
Recipe = Mapping[str, str]


@dataclass(frozen=True)
class Entry:
    """One file of the manifest, with its group's description where it has none of its own."""

    path: str
    size: int
    sha256: str
    group: str
    root: str
    rebuild: Recipe
    contents: str = ''  # a wheel's contents_digest: the same for a rebuild, whose bytes differ


@dataclass(frozen=True)
class Piece:
    """What `rebuild` makes in one step: the files of one recipe (one checkout, one wheel...)."""

    kind: str  # git, wheel, copy, export, none
    recipe: Recipe
    entries: tuple[Entry, ...]

    def label(self) -> str:
        """Name the piece in one line: its files and their upstream."""
        more = len(self.entries) - 1
        paths = self.entries[0].path + (f' and {more} more' if more else '')
        origin = self.recipe.get('git') or self.recipe.get('wheel') or ''
        commit = self.recipe.get('commit') or 'default branch'
        where = {'git': f'{origin} at {commit}', 'wheel': f'{origin} at {commit}',
                 'copy': self.recipe.get('copy', '')}.get(self.kind, '')
        return f'{paths} ({where})' if where else paths


def load(manifest: Path = MANIFEST) -> list[Entry]:
    """Return the manifest's files, each with its group's rebuild recipe unless it has its own."""
    document = yaml.safe_load(manifest.read_text(encoding='utf-8'))
    entries = []
    for group in document['groups']:
        for file in group['files']:
            recipe = file.get('rebuild', group.get('rebuild', {'none': 'no recipe recorded'}))
            entries.append(Entry(path=str(file['path']), size=int(file['size']),
                                 sha256=str(file['sha256']), group=str(group['group']),
                                 root=str(group.get('root', '')),
                                 rebuild={str(k): str(v) for k, v in recipe.items()},
                                 contents=str(file.get('contents', ''))))
    return entries


def found(path: Path, name: str, log: Callable[[str], None]) -> tuple[int, str]:
    """Return the size and SHA-256 of `path`; a large file says on stderr that it is hashed."""
    size = path.stat().st_size
    if size >= LARGE_FILE:
        log(f'hashing {name} ({size / 1e6:.0f} MB)')
    return size, sha256_of(path)


def contents_digest(path: Path) -> str:
    """
    Return the SHA-256 of a zip's member names and their contents' SHA-256s, in name order.

    A wheel rebuilt from the same source has other bytes (zip timestamps) but what it installs is
    the same: this digest says so.
    """
    digest = hashlib.sha256()
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            digest.update(f'{name} {hashlib.sha256(archive.read(name)).hexdigest()}\n'.encode())
    return digest.hexdigest()


def difference(entry: Entry, path: Path) -> str:
    """Return '' when `path` is the entry's file (or a wheel of its contents), else what it is."""
    size, digest = found(path, entry.path, progress)
    if (size, digest) == (entry.size, entry.sha256):
        return ''
    if entry.contents and zipfile.is_zipfile(path) and contents_digest(path) == entry.contents:
        progress(f'{entry.path}: other bytes, the recorded contents (a rebuilt wheel)')
        return ''
    return f'size {size} sha256 {digest}'


def progress(line: str) -> None:
    """Say on stderr what is under way, apart from the result lines on stdout."""
    print(line, file=sys.stderr, flush=True)


def check(folder: Path, entries: Sequence[Entry]) -> int:
    """Print one line per missing or different file and a last line with the count; return 1."""
    problems = 0
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.group, []).append(entry)
    for group, members in groups.items():
        total = sum(entry.size for entry in members)
        progress(f'checking {group}: {len(members)} files, {total / 1e6:.1f} MB')
        for entry in members:
            path = folder / entry.path
            expected = f'size {entry.size} sha256 {entry.sha256}'
            if not path.is_file():
                print(f'missing: {entry.path} (expected {expected})')
                problems += 1
                continue
            other = difference(entry, path)
            if other:
                print(f'different: {entry.path} (expected {expected}, found {other})')
                problems += 1
    verdict = f'{problems} missing or different' if problems else 'all match'
    print(f'checked {len(entries)} files of {folder} against the manifest: {verdict}')
    return 1 if problems else 0


def write_checksums(folder: Path, manifest: Path) -> int:
    """
    Rewrite each entry's size, sha256 (and a wheel's contents) from `folder`; 1 if any is missing.

    The lines are replaced in place, so the manifest's comments and layout stay as written.
    """
    lines = manifest.read_text(encoding='utf-8').splitlines(keepends=True)
    path_line = re.compile(r'^(\s*)- path: (\S+)\s*$')
    value_line = re.compile(r'^(\s*)(size|sha256|contents): .*$')
    current: Path | None = None
    values: dict[str, str] = {}
    missing = updated = 0
    for number, line in enumerate(lines):
        match = path_line.match(line)
        if match:
            name = match.group(2)
            current = folder / name if (folder / name).is_file() else None
            if current is None:
                print(f'missing: {name} (left as it was)')
                missing += 1
                continue
            size, digest = found(current, name, progress)
            values = {'size': str(size), 'sha256': digest}
            updated += 1
            continue
        value = value_line.match(line)
        if value and current is not None:
            key = value.group(2)
            text = values.get(key) or contents_digest(current)
            lines[number] = f'{value.group(1)}{key}: {text}\n'
    manifest.write_text(''.join(lines), encoding='utf-8')
    print(f'wrote the sizes and sha256 of {updated} files from {folder} into {manifest}'
          + (f'; {missing} missing' if missing else ''))
    return 1 if missing else 0


def pieces(entries: Sequence[Entry]) -> list[Piece]:
    """Group the files by recipe: one checkout per repository and commit, one step otherwise."""
    grouped: dict[tuple[tuple[str, str], ...], list[Entry]] = {}
    for entry in entries:
        recipe = dict(entry.rebuild)
        if 'wheel' in recipe or 'copy' in recipe:
            recipe['for'] = entry.path  # one wheel, one copy per file
        grouped.setdefault(tuple(sorted(recipe.items())), []).append(entry)
    result = []
    for key, members in grouped.items():
        recipe = {k: v for k, v in key if k != 'for'}
        kind = next(k for k in ('git', 'wheel', 'copy', 'export', 'none')
                    if k in recipe)
        result.append(Piece(kind, recipe, tuple(members)))
    return result


def describe(piece: Piece) -> str:
    """Say in one line what `rebuild` does for the piece, or why it cannot."""
    recipe = piece.recipe
    if piece.kind == 'git':
        return f'check out {piece.label()}'
    if piece.kind == 'wheel':
        patch = f', patched with {recipe["patch"]}' if 'patch' in recipe else ''
        return f'build {piece.label()}: pip wheel of {recipe["package"]}{patch}'
    if piece.kind == 'copy':
        return f'copy {piece.label()} from the repository'
    if piece.kind == 'export':
        return f'cannot rebuild {piece.label()}: {recipe["export"]}'
    return f'cannot rebuild {piece.label()}: {recipe["none"]}'


def online(host: str = 'github.com') -> bool:
    """Say whether GitHub answers on HTTPS within 5 s."""
    try:
        socket.create_connection((host, 443), timeout=5).close()
    except OSError:
        return False
    return True


def run(command: Sequence[str], cwd: Path | None = None) -> None:
    """Run a command, its output shown; a failure raises CalledProcessError."""
    subprocess.run(list(command), cwd=cwd, check=True)


def mirrored(repository: str, mirror: Path | None) -> Path | None:
    """Return the local clone of `repository` (owner/name) under `mirror`, None if none."""
    local = mirror / repository if mirror and repository else None
    return local if local and local.is_dir() else None


def checkout(repository: str, commit: str, work: Path, mirror: Path | None, ref: str = '') -> Path:
    """
    Clone a repository without blobs and check out `commit` (or its default branch).

    From the local clone under `mirror` where there is one, else from GitHub. A commit on no
    branch is fetched by `ref` (a pull request's, refs/pull/N/head) or by itself.
    """
    tree = work / (repository.replace('/', '+') + '@' + (commit or 'HEAD'))
    if not tree.is_dir():
        local = mirrored(repository, mirror)
        origin = local.as_uri() if local else f'https://github.com/{repository}.git'
        run(['git', 'clone', '-q', '--filter=blob:none', '--no-checkout', origin, str(tree)])
        known = subprocess.run(['git', '-C', str(tree), 'cat-file', '-e', f'{commit}^{{commit}}'],
                               capture_output=True).returncode == 0
        if commit and not known:
            run(['git', '-C', str(tree), 'fetch', '-q', 'origin', ref or commit])
        run(['git', '-C', str(tree), 'checkout', '-q', commit or 'HEAD'])
    return tree


def relative(entry: Entry) -> str:
    """Return the entry's path below its group's root (the path a recipe's `from` prefixes)."""
    return entry.path[len(entry.root) + 1:] if entry.root else entry.path


def make(piece: Piece, work: Path, into: Path, mirror: Path | None) -> None:
    """Make the piece's files under `into`; raises OSError or CalledProcessError on failure."""
    recipe = piece.recipe
    for entry in piece.entries:
        (into / entry.path).parent.mkdir(parents=True, exist_ok=True)
    if piece.kind == 'git':
        tree = checkout(recipe['git'], recipe.get('commit', ''), work, mirror,
                        recipe.get('ref', ''))
        for entry in piece.entries:
            inside = recipe.get('file') or recipe.get('from', '') + relative(entry)
            shutil.copyfile(tree / inside, into / entry.path)
    elif piece.kind == 'copy':
        shutil.copyfile(REPO / recipe['copy'], into / piece.entries[0].path)
    elif piece.kind == 'wheel':
        tree = checkout(recipe['wheel'], recipe['commit'], work, mirror)
        if 'patch' in recipe:
            patched = tree.with_name(tree.name + '+patched')
            if not patched.is_dir():
                shutil.copytree(tree, patched, ignore=shutil.ignore_patterns('.git'))
                run(['patch', '-s', '-p1', '-i', str(REPO / recipe['patch'])], cwd=patched)
            tree = patched
        built = work / 'wheels'
        run([sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps', '--no-build-isolation',
             '-w', str(built), str(tree / recipe['package'])])
        name = Path(piece.entries[0].path).name
        shutil.copyfile(built / name, into / piece.entries[0].path)


def rebuild(into: Path, entries: Sequence[Entry], force: bool, offline: bool,
            mirror: Path | None, environment: Mapping[str, str]) -> int:
    """
    Make a shared folder at `into` from upstream; return 1 when a piece could not be made.

    Refuses in CI (it reaches the network) and on an existing non-empty folder unless `force`;
    with `force`, files already there and as the manifest says are kept.
    """
    if environment.get('CI'):
        print('refused: make shared reaches the network and is not run in CI ($CI is set)')
        return 2
    if into.exists() and any(into.iterdir()) and not force:
        print(f'refused: {into} exists and is not empty; rebuild into another folder '
              '(make shared INTO=/path) or pass --force (FORCE=1) to fill in what is missing '
              'or different there')
        return 2
    reachable: bool | None = None  # GitHub asked once, when a piece needs it
    work = Path(tempfile.mkdtemp(prefix='triton_perception-shared-'))
    failures = 0
    try:
        for piece in pieces(entries):
            wanted = tuple(entry for entry in piece.entries if not (into / entry.path).is_file()
                           or difference(entry, into / entry.path))
            if not wanted:
                continue
            piece = Piece(piece.kind, piece.recipe, wanted)
            if piece.kind in ('export', 'none'):
                print(describe(piece))
                failures += 1
                continue
            local = piece.kind == 'copy' or mirrored(
                piece.recipe.get('git') or piece.recipe.get('wheel', ''), mirror) is not None
            if not local and reachable is None:
                reachable = not offline and online()
            if not local and not reachable:
                why = 'offline (--offline)' if offline else 'github.com does not answer'
                print(f'not reached: {piece.label()}: {why}')
                failures += 1
            else:
                progress(describe(piece))
                try:
                    make(piece, work, into, mirror)
                except (OSError, subprocess.CalledProcessError) as error:
                    print(f'failed: {piece.label()}: {error}')
                    failures += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f'rebuilt what could be rebuilt into {into}; {failures} pieces not made. Check it '
          f'with: TRITON_PERCEPTION_SHARED={into} make check-shared (an export of your own '
          'differs from the recorded one; the manifest says what models install accepts)')
    return 1 if failures else 0


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--manifest', type=Path, default=MANIFEST)
    commands = parser.add_subparsers(dest='command', required=True)
    for name in ('check', 'checksums'):
        command = commands.add_parser(name)
        command.add_argument('--folder', type=Path, default=None,
                             help='default: $TRITON_PERCEPTION_SHARED, else ../shared')
    commands.add_parser('plan')
    command = commands.add_parser('rebuild')
    command.add_argument('--into', type=Path, default=None,
                         help='default: $TRITON_PERCEPTION_SHARED, else ../shared')
    command.add_argument('--force', action='store_true',
                         help='write into an existing folder (files that match are kept)')
    command.add_argument('--offline', action='store_true', help='reach nothing on the network')
    command.add_argument('--mirror', type=Path, default=None,
                         help='local clones as MIRROR/owner/name, used before GitHub')
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; return its exit status."""
    options = arguments(argv)
    entries = load(options.manifest)
    if options.command == 'plan':
        for piece in pieces(entries):
            print(describe(piece))
        return 0
    if options.command == 'rebuild':
        return rebuild(options.into or shared_directory(), entries, options.force,
                       options.offline, options.mirror, os.environ)
    folder = options.folder or shared_directory()
    if not folder.is_dir():
        print(f'{folder} is not a folder: set TRITON_PERCEPTION_SHARED or put shared/ beside '
              'the checkout')
        return 2
    if options.command == 'checksums':
        return write_checksums(folder, options.manifest)
    return check(folder, entries)


if __name__ == '__main__':
    sys.exit(main())
