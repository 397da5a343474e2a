#!/usr/bin/env bash
# The system checks dev/setup.sh makes before it builds anything: a supported Python and the
# shared libpython that tritonserver's Python backend stub embeds. Prints the Python version
# (X.Y) on success; exits 1 with what to install otherwise. Runnable alone (the tests do).
#
# No `producer | grep -q` under pipefail: grep -q exits at its first match, the producer then
# dies of SIGPIPE and pipefail reports the check as failed. Output is captured first instead.
set -euo pipefail

PYTHON=${PYTHON:-python3}
fail() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null || fail "no '$PYTHON' on PATH; install Python 3.10-3.12 (apt-get install python3 python3-venv) or set PYTHON=/path/to/python3"
PY_VERSION=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")') \
  || fail "'$PYTHON' is on PATH but does not run; set PYTHON=/path/to/python3.1X"

case "$PY_VERSION" in
  3.10|3.11|3.12) ;;
  *) fail "Python $PY_VERSION found; the ROS 2 Kilted wheels and Triton's Python backend stubs exist for 3.10-3.12: set PYTHON=/path/to/python3.1X" ;;
esac
shared_libraries=$(ldconfig -p 2>/dev/null || true)
case "$shared_libraries" in
  *"libpython$PY_VERSION.so.1.0"*) ;;
  *) fail "libpython$PY_VERSION.so.1.0 not found; tritonserver's Python backend needs it: apt-get install libpython$PY_VERSION" ;;
esac
echo "$PY_VERSION"
