"""
dev/shared_manifest.yaml describes the shared folder, and dev/shared_folder.py holds a copy to it.

A reader outside the team has only the repository: the manifest must name every file the code,
the tests and the dev tools read from the folder (found here by parsing them), and the check must
name exactly what is missing or different. `make shared` reaches the network, so its tests run
only its refusals and its offline path.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path
import re
import subprocess
import sys
import zipfile

import pytest
import yaml

from support.checkout import REPO, SHARED
from triton_perception.system.checksums import sha256_of

SCRIPT = REPO / 'dev' / 'shared_folder.py'
MANIFEST = REPO / 'dev' / 'shared_manifest.yaml'
# Folders named only as the place where files named elsewhere are looked up: models/ (the files
# of config/models.yaml) and data/ (the check images of config/models.yaml).
SEARCH_ROOTS = {'models', 'data'}
# Where the repository names shared paths: its Python, its shell scripts and its Makefile.
SOURCES = ('triton_perception', 'test', 'dev', 'launch', 'scripts')


def manifest_paths() -> set[str]:
    """Return the paths the manifest lists."""
    document = yaml.safe_load(MANIFEST.read_text(encoding='utf-8'))
    return {file['path'] for group in document['groups'] for file in group['files']}


def leading_strings(nodes: list[ast.expr]) -> list[str]:
    """Return the string constants at the start of `nodes`, up to the first that is not one."""
    parts = []
    for node in nodes:
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            break
        parts.append(node.value)
    return parts


def division_parts(node: ast.expr) -> tuple[ast.expr, list[ast.expr]]:
    """Return the left-most operand of a chain of `/` and the operands after it, in order."""
    parts: list[ast.expr] = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        parts.insert(0, node.right)
        node = node.left
    return node, parts


def shared_prefix(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """Return the shared path `node` stands for ('' the folder itself), None if it is none."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == 'shared_directory'):
        return ''
    return None


def python_names(path: Path) -> set[str]:
    """
    Return the shared paths a Python file names: shared_path(...) and SHARED / ... chains.

    A module's own name for a shared folder (`SHARED = shared_directory() / 'data'`) is followed.
    """
    tree = ast.parse(path.read_text(encoding='utf-8'))
    aliases = {'SHARED': ''}  # conftest's
    names = set()
    for node in ast.walk(tree):
        parts: list[str] = []
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == 'shared_path'):
            parts = leading_strings(node.args)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            root, operands = division_parts(node)
            prefix = shared_prefix(root, aliases)
            if prefix is not None:
                parts = [part for part in (prefix, *leading_strings(operands)) if part]
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name)):
            root, operands = division_parts(node.value)
            prefix = shared_prefix(root, aliases)
            strings = leading_strings(operands)
            if prefix is not None and len(strings) == len(operands):
                aliases[node.targets[0].id] = '/'.join(p for p in (prefix, *strings) if p)
        if parts:
            names.add('/'.join(parts))
    return names


def text_names(text: str) -> set[str]:
    """Return shared paths written out in text: ../shared/..., $SHARED/..., $ROS_PYTHON/..."""
    names = set(re.findall(r'\.\./shared/([\w./-]*\w)', text))
    names |= set(re.findall(r'\$\{?SHARED\}?/([\w./-]*\w)', text))
    names |= {f'ros-python/{match}' for match in
              re.findall(r'\$\{?ROS_PYTHON\}?"?/([\w./-]*\w)', text)}
    return names


def data_names() -> set[str]:
    """Return the shared files the repository's data names: models.yaml's, the lane labels'."""
    models = yaml.safe_load((REPO / 'config' / 'models.yaml').read_text(encoding='utf-8'))
    names = {f'models/{model["file"]}' for model in models['models']}
    names |= {f'data/{model["check"]["image"]}' for model in models['models']}
    labels = json.loads((REPO / 'test' / 'data' / 'lane_labels.json').read_text(encoding='utf-8'))
    names |= {f'data/road/bdd/{entry["image"]}' for entry in labels['frames']
              if entry.get('source') == 'road'}
    return names


def named_shared_paths() -> set[str]:
    """Return every shared path the repository names, files and folders."""
    names = data_names()
    for source in SOURCES:
        for path in sorted((REPO / source).rglob('*')):
            if path.suffix == '.py':
                names |= python_names(path) | text_names(path.read_text(encoding='utf-8'))
            elif path.suffix in ('.sh', '.yaml', '.cfg') and path.name != MANIFEST.name:
                names |= text_names(path.read_text(encoding='utf-8'))
    names |= text_names((REPO / 'Makefile').read_text(encoding='utf-8'))
    # The team's READMEs are cited as the source of reference figures; nothing reads them.
    return {name.rstrip('/') for name in names if not name.endswith('README.md')}


def run_script(*arguments: str, environment: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    """Run dev/shared_folder.py as make does; it never reaches the network in these tests."""
    return subprocess.run([sys.executable, str(SCRIPT), *arguments], capture_output=True,
                          text=True, env=environment or dict(os.environ), timeout=120)


def test_the_manifest_covers_every_shared_path_the_repository_names() -> None:
    """Each named file is listed; each folder read whole has every file it holds listed."""
    listed = manifest_paths()
    names = named_shared_paths()
    assert {'data/videos/solidWhiteRight.mp4', 'ros-python/wheels',
            'rosdistro/rosdep/python.yaml'} <= names, 'the repository scan finds too little'
    unlisted = []
    for name in sorted(names - SEARCH_ROOTS):
        if name in listed:
            continue
        inside = {path for path in listed if path.startswith(name + '/')}
        folder = SHARED / name
        held = {str(path.relative_to(SHARED)) for path in folder.rglob('*')
                if path.is_file() and path.name != 'README.md'} if folder.is_dir() else set()
        if not inside or held - inside:
            unlisted.append(f'{name}: {sorted(held - inside) or "not in the manifest"}')
    assert not unlisted, 'shared paths the manifest does not list:\n' + '\n'.join(unlisted)


def test_the_shared_folder_matches_the_manifest() -> None:
    """The check (make check-shared) on the folder the suite uses: every file, as recorded."""
    result = run_script('check')
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == [
        f'checked {len(manifest_paths())} files of {SHARED} against the manifest: all match']


def test_the_check_reads_the_folder_the_variable_names(tmp_path: Path) -> None:
    """TRITON_PERCEPTION_SHARED moves the check as it moves everything else: an empty folder."""
    environment = {**os.environ, 'TRITON_PERCEPTION_SHARED': str(tmp_path)}
    result = run_script('check', environment=environment)
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert len(lines) == len(manifest_paths()) + 1
    assert all(line.startswith('missing: ') for line in lines[:-1])
    assert lines[-1].startswith(f'checked {len(manifest_paths())} files of {tmp_path} ')


FAKE_MANIFEST = """\
# A fake folder's manifest: this comment and the layout stay as written.
manifest: 1
groups:
  - group: fake
    root: fake
    files:
      - path: fake/one.txt
        size: 0
        sha256: ''
      - path: fake/two.txt
        size: 0
        sha256: ''
      - path: fake/deeper/three.txt
        size: 0
        sha256: ''
"""


def test_check_names_exactly_the_changed_and_the_removed_file(tmp_path: Path) -> None:
    """Checksums written from a folder; then one file changed, one removed: two lines, exit 1."""
    folder = tmp_path / 'shared'
    for name, text in (('one.txt', 'one'), ('two.txt', 'two'), ('deeper/three.txt', 'three')):
        (folder / 'fake' / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / 'fake' / name).write_text(text)
    manifest = tmp_path / 'manifest.yaml'
    manifest.write_text(FAKE_MANIFEST)
    written = run_script('--manifest', str(manifest), 'checksums', '--folder', str(folder))
    assert written.returncode == 0, written.stdout
    rewritten = manifest.read_text()
    assert rewritten.splitlines()[:7] == FAKE_MANIFEST.splitlines()[:7]
    assert "sha256: ''" not in rewritten and 'size: 5' in rewritten  # three.txt
    assert run_script('--manifest', str(manifest), 'check', '--folder',
                      str(folder)).returncode == 0

    (folder / 'fake' / 'one.txt').write_text('one, changed')
    (folder / 'fake' / 'two.txt').unlink()
    result = run_script('--manifest', str(manifest), 'check', '--folder', str(folder))
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert len(lines) == 3, result.stdout
    assert lines[0].startswith('different: fake/one.txt (expected size 3 sha256 ')
    assert 'found size 12 sha256 ' in lines[0]
    assert lines[1].startswith('missing: fake/two.txt (expected size 3 sha256 ')
    assert lines[2] == f'checked 3 files of {folder} against the manifest: 2 missing or different'
    assert 'checking fake: 3 files' in result.stderr  # progress, apart from the result


def test_make_shared_refuses_in_ci_and_on_an_existing_folder(tmp_path: Path) -> None:
    """Nothing is fetched or written in CI, nor into a folder that exists, unless told (--force)."""
    existing = tmp_path / 'shared'
    existing.mkdir()
    (existing / 'kept.txt').write_text('mine')
    environment = {**os.environ, 'CI': 'true'}
    in_ci = run_script('rebuild', '--into', str(tmp_path / 'new'), environment=environment)
    assert in_ci.returncode == 2 and in_ci.stdout.startswith('refused: '), in_ci.stdout
    assert not (tmp_path / 'new').exists()
    environment.pop('CI')
    there = run_script('rebuild', '--into', str(existing), '--offline', environment=environment)
    assert there.returncode == 2 and f'refused: {existing} exists' in there.stdout, there.stdout
    assert [path.name for path in existing.iterdir()] == ['kept.txt']


def test_make_shared_offline_names_each_piece_it_could_not_make(tmp_path: Path) -> None:
    """Offline: what the repository holds is made, every other piece is named in one line."""
    environment = {key: value for key, value in os.environ.items() if key != 'CI'}
    plan = run_script('plan', environment=environment)
    assert plan.returncode == 0, plan.stderr
    steps = plan.stdout.splitlines()
    target = tmp_path / 'rebuilt'
    result = run_script('rebuild', '--into', str(target), '--offline', environment=environment)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    copies = [step for step in steps if step.startswith('copy ')]
    assert len(lines) == len(steps) - len(copies) + 1, result.stdout
    reached = [line for line in lines[:-1] if not line.startswith(('not reached: ', 'cannot '))]
    assert not reached, result.stdout
    assert sum(line.startswith('cannot rebuild models/') for line in lines) == 2  # the exports
    assert all(line.endswith('offline (--offline)') for line in lines
               if line.startswith('not reached: '))
    made = sorted(str(path.relative_to(target)) for path in target.rglob('*') if path.is_file())
    assert made == ['ros-python/patches/launch_testing-pytest9.patch']
    check = run_script('check', '--folder', str(target), environment=environment)
    assert 'launch_testing-pytest9.patch' not in check.stdout  # the copy is the recorded patch


MIRROR_MANIFEST = """\
manifest: 1
groups:
  - group: checked out
    root: fake/files
    rebuild: {{git: upstream/project, commit: {commit}, from: data/}}
    files:
      - path: fake/files/note.txt
        size: 0
        sha256: ''
  - group: built
    root: fake/wheels
    files:
      - path: fake/wheels/tiny-1.0+patched-py3-none-any.whl
        size: 0
        sha256: ''
        rebuild: {{wheel: upstream/project, commit: {commit}, package: tiny, patch: {patch}}}
"""
TINY_PATCH = """\
--- a/tiny/setup.py
+++ b/tiny/setup.py
@@ -1 +1 @@
-from setuptools import setup; setup(name='tiny', version='1.0', py_modules=['tiny'])
+from setuptools import setup; setup(name='tiny', version='1.0+patched', py_modules=['tiny'])
"""


@pytest.mark.slow
def test_make_shared_checks_out_and_builds_from_a_local_mirror(tmp_path: Path) -> None:
    """
    The rebuild steps themselves, on a local clone: a file at a commit, a wheel after its patch.

    `--mirror` takes the repositories from local clones (MIRROR/owner/name), so this runs the
    checkout, the patch and `pip wheel` without the network.
    """
    upstream = tmp_path / 'mirror' / 'upstream' / 'project'
    (upstream / 'data').mkdir(parents=True)
    (upstream / 'tiny').mkdir()
    (upstream / 'data' / 'note.txt').write_text('at the recorded commit\n')
    (upstream / 'tiny' / 'tiny.py').write_text('"""A module."""\n')
    (upstream / 'tiny' / 'setup.py').write_text(
        "from setuptools import setup; setup(name='tiny', version='1.0', py_modules=['tiny'])\n")
    git = ['git', '-C', str(upstream), '-c', 'user.name=test', '-c', 'user.email=test@example.com']
    subprocess.run(['git', 'init', '-q', str(upstream)], check=True)
    subprocess.run([*git, 'add', '.'], check=True)
    subprocess.run([*git, 'commit', '-q', '-m', 'recorded'], check=True)
    commit = subprocess.run([*git, 'rev-parse', 'HEAD'], capture_output=True, text=True,
                            check=True).stdout.strip()
    (upstream / 'data' / 'note.txt').write_text('a later change\n')
    subprocess.run([*git, 'commit', '-q', '-am', 'later'], check=True)
    patch = tmp_path / 'tiny.patch'
    patch.write_text(TINY_PATCH)
    manifest = tmp_path / 'manifest.yaml'
    manifest.write_text(MIRROR_MANIFEST.format(commit=commit, patch=patch))
    target = tmp_path / 'rebuilt'
    environment = {key: value for key, value in os.environ.items() if key != 'CI'}
    result = run_script('--manifest', str(manifest), 'rebuild', '--into', str(target),
                        '--offline', '--mirror', str(tmp_path / 'mirror'),
                        environment=environment)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (target / 'fake' / 'files' / 'note.txt').read_text() == 'at the recorded commit\n'
    assert (target / 'fake' / 'wheels' / 'tiny-1.0+patched-py3-none-any.whl').is_file()


WHEEL_MANIFEST = """\
manifest: 1
groups:
  - group: wheels
    files:
      - path: tiny-1.0-py3-none-any.whl
        size: 0
        sha256: ''
        contents: ''
"""


def write_wheel(path: Path, module: str, year: int) -> None:
    """Write a zip with one member, stamped `year`: a wheel as pip wheel writes one."""
    with zipfile.ZipFile(path, 'w') as archive:
        archive.writestr(zipfile.ZipInfo('tiny.py', date_time=(year, 1, 1, 0, 0, 0)), module)


def test_a_rebuilt_wheel_passes_and_other_contents_do_not(tmp_path: Path) -> None:
    """Other bytes with the recorded members pass the check (a rebuild); another member fails."""
    folder = tmp_path / 'shared'
    folder.mkdir()
    wheel = folder / 'tiny-1.0-py3-none-any.whl'
    write_wheel(wheel, '"""A module."""\n', 2024)
    manifest = tmp_path / 'manifest.yaml'
    manifest.write_text(WHEEL_MANIFEST)
    assert run_script('--manifest', str(manifest), 'checksums', '--folder',
                      str(folder)).returncode == 0
    assert "contents: ''" not in manifest.read_text()
    recorded = sha256_of(wheel)
    write_wheel(wheel, '"""A module."""\n', 2026)
    assert sha256_of(wheel) != recorded
    rebuilt = run_script('--manifest', str(manifest), 'check', '--folder', str(folder))
    assert rebuilt.returncode == 0, rebuilt.stdout
    assert 'other bytes, the recorded contents' in rebuilt.stderr
    write_wheel(wheel, '"""Another module."""\n', 2026)
    other = run_script('--manifest', str(manifest), 'check', '--folder', str(folder))
    assert other.returncode == 1
    assert other.stdout.startswith('different: tiny-1.0-py3-none-any.whl (expected size ')
