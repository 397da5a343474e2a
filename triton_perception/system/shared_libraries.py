"""
A program that cannot start for a missing shared library, told as the apt command that mends it.

The dynamic loader says `error while loading shared libraries: NAME: cannot open shared object
file`. On a Jetson the CUDA and TensorRT libraries come with the `nvidia-jetpack` meta package,
which a board flashed with the BSP alone lacks (NVIDIA's JetPack install guide: `sudo apt
install nvidia-jetpack`); Triton's core links libnuma (core r24.03 `src/CMakeLists.txt`, and
its runtime image installs libnuma1), and the other libraries are those of Triton's jetson.md
runtime list.
"""
from __future__ import annotations

import re

JETPACK = 'sudo apt-get install nvidia-jetpack'
# Library name prefixes and the apt command that installs them on JetPack 6 (Ubuntu 22.04).
REMEDIES = (
    ('libnvinfer', JETPACK), ('libnvonnxparser', JETPACK), ('libnvparsers', JETPACK),
    ('libcudart', JETPACK), ('libcublas', JETPACK), ('libcudnn', JETPACK), ('libcuda.', JETPACK),
    ('libnuma', 'sudo apt-get install libnuma1'),
    ('libb64', 'sudo apt-get install libb64-0d'),
    ('libre2', 'sudo apt-get install libre2-9'),
    ('libarchive', 'sudo apt-get install libarchive13'),
    ('libssl', 'sudo apt-get install libssl3'), ('libcrypto', 'sudo apt-get install libssl3'),
    ('libopenblas', 'sudo apt-get install libopenblas0'),
)
LOADER_ERROR = re.compile(r'error while loading shared libraries: ([^:\s]+)')


def missing_library(output: str) -> str | None:
    """Return the shared library the loader could not find, as named in `output`, or None."""
    found = LOADER_ERROR.search(output)
    return found.group(1) if found else None


def missing_library_cause(program: str, output: str) -> str | None:
    """
    Return one line: `program` cannot start, the library missing and the command that mends it.

    None when `output` holds no loader error.
    """
    library = missing_library(output)
    if library is None:
        return None
    remedy = next((command for prefix, command in REMEDIES if library.startswith(prefix)),
                  f'install the package that provides {library} (apt-file search {library})')
    return f'{program} cannot start: {library} is missing; mend: {remedy}'
