"""
The model repository tritonserver is given for a profile: the repository itself, or a view of it.

Each model step keeps its Orin configuration in `config.pbtxt` and its CPU one in
`configs/cpu.pbtxt`. Triton selects a configuration by name only from r24.05 on
(`--model-config-name`, triton-inference-server/server PR #7185); r24.03, the release for
JetPack 6.0, refuses the option. So every release is given the CPU profile the same way: a
view of the repository in the user's cache, one directory per model, whose `config.pbtxt`
links to `configs/cpu.pbtxt` and whose every other entry (the version directories, labels,
records) links to the repository's own. Nothing is copied, so an installed model or engine is
seen at once; the view's name is derived from what it links, so servers started side by side
share one view and never rebuild it under each other.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
import shutil
import tempfile

from triton_perception.serving.server_config import ServerError

CPU_CONFIG = Path('configs') / 'cpu.pbtxt'


def profile_repository(repository: Path, profile: str, cache: Path) -> Path:
    """
    Return the repository to serve `profile` from: `repository`, or its CPU view under `cache`.

    Raises ServerError if the view cannot be written (the message names the directory).
    """
    repository = Path(repository).resolve()
    if profile == 'tensorrt':
        return repository
    links = view_links(repository)
    digest = hashlib.sha256(repr((str(repository), sorted(links.items()))).encode())
    view = cache / f'{profile}-profile-{digest.hexdigest()[:16]}'
    if view.is_dir():
        return view
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f'.{view.name}.', dir=cache))
        for name, target in links.items():
            (partial / name).parent.mkdir(parents=True, exist_ok=True)
            (partial / name).symlink_to(target)
        try:
            partial.rename(view)
        except OSError:
            if not view.is_dir():
                raise
            shutil.rmtree(partial)  # another start made the same view meanwhile
    except OSError as error:
        raise ServerError(f'cannot write the CPU profile view of {repository} in {cache} '
                          f'({error.strerror or error}); set XDG_CACHE_HOME to a writable '
                          'directory') from error
    return view


def view_links(repository: Path) -> dict[str, str]:
    """
    Return the CPU view's entries: its relative path -> the absolute path it links to.

    A model directory is one with a `config.pbtxt`; its configuration is `configs/cpu.pbtxt`
    where it has one (the ensembles have none and serve the same graph in both profiles).
    """
    links = {}
    for model in sorted(path for path in repository.iterdir() if (path / 'config.pbtxt').is_file()):
        cpu_config = model / CPU_CONFIG
        links[f'{model.name}/config.pbtxt'] = str(
            cpu_config if cpu_config.is_file() else model / 'config.pbtxt')
        for entry in sorted(model.iterdir()):
            if entry.name not in ('config.pbtxt', 'configs'):
                links[f'{model.name}/{entry.name}'] = str(entry)
    return links
