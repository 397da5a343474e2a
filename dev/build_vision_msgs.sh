#!/usr/bin/env bash
# Build a development-only interface package (dev/vision_msgs, or dev/tf2_msgs) and install it
# into a Python venv that holds the ROS 2 wheels, so that `<venv>/bin/python -c "import
# vision_msgs.msg"` works without sourcing anything.
#
# Usage: dev/build_vision_msgs.sh VENV_DIR [PACKAGE]   (PACKAGE: vision_msgs (default), tf2_msgs)
#
# Development machines only: real deployments use the distro package ros-<distro>-<package>.
set -euo pipefail

PKG=${2:-vision_msgs}
log() { printf '%s: %s\n' "$PKG" "$*"; }
die() { printf '%s: ERROR: %s\n' "$PKG" "$*" >&2; exit 1; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 VENV_DIR [vision_msgs|tf2_msgs]"
[[ -d $1 ]] || die "venv directory '$1' does not exist"
VENV=$(cd "$1" && pwd -P)
PY="$VENV/bin/python"
[[ -x $PY ]] || die "$PY not found or not executable (is '$VENV' a venv?)"

case "$PKG" in
  vision_msgs) CHECK_TYPE='vision_msgs.msg import Detection2DArray' ;;
  tf2_msgs) CHECK_TYPE='tf2_msgs.msg import TFMessage' ;;
  *) die "unknown package '$PKG' (vision_msgs or tf2_msgs)" ;;
esac
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/$PKG" && pwd -P)
BUILD_DIR="$VENV/build/$PKG"
STAMP="$VENV/share/$PKG/.dev-source-sha256"

# Digest of everything that defines the interfaces: msg/*.msg, CMakeLists.txt, package.xml.
source_sha256() {
  (
    cd "$SRC_DIR"
    { printf '%s\n' CMakeLists.txt package.xml; find msg -type f -name '*.msg'; } \
      | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1
  )
}
SRC_SHA=$(source_sha256)

# Import check that also loads the compiled type support (catches missing shared libraries).
import_ok() {
  "$PY" -c "from $CHECK_TYPE as M; M.__class__.__import_type_support__()" \
    >/dev/null 2>&1
}

if [[ -f $STAMP && "$(cat "$STAMP")" == "$SRC_SHA" ]] && import_ok; then
  log "already installed in $VENV and up to date, nothing to do"
  exit 0
fi

# --- tools -------------------------------------------------------------------------------
command -v cmake >/dev/null 2>&1 || die "cmake not found: install it with 'sudo apt-get install cmake'"
command -v make >/dev/null 2>&1 || die "make not found: install it with 'sudo apt-get install make'"
CC_BIN=${CC:-}
[[ -n $CC_BIN ]] || CC_BIN=$(command -v cc || command -v gcc || command -v clang || true)
[[ -n $CC_BIN ]] && command -v "$CC_BIN" >/dev/null 2>&1 \
  || die "no C compiler (cc/gcc) found: install one with 'sudo apt-get install gcc'"
CXX_BIN=${CXX:-}
[[ -n $CXX_BIN ]] || CXX_BIN=$(command -v c++ || command -v g++ || command -v clang++ || true)
[[ -n $CXX_BIN ]] && command -v "$CXX_BIN" >/dev/null 2>&1 \
  || die "no C++ compiler (c++/g++) found: install one with 'sudo apt-get install g++'"

# --- interpreter facts ---------------------------------------------------------------------
# Prints: python include dir, numpy include dir, X.Y, site-packages relative to the prefix.
read -r PY_INC NP_INC PY_VER PY_SITE_REL < <(
  "$PY" - <<'EOF'
import os, sys, sysconfig
try:
    import numpy
    np_inc = numpy.get_include()
except ImportError:
    np_inc = "-"
purelib = sysconfig.get_path("purelib")
print(sysconfig.get_path("include"), np_inc, "%d.%d" % sys.version_info[:2],
      os.path.relpath(purelib, sys.prefix))
EOF
)
[[ $NP_INC != "-" ]] || die "numpy is not installed in $VENV: '$PY -m pip install numpy'"
[[ -f $PY_INC/Python.h ]] \
  || die "Python.h not found in $PY_INC: install the headers ('sudo apt-get install python${PY_VER}-dev')"
[[ $PY_SITE_REL == lib/python$PY_VER/site-packages ]] \
  || die "unexpected site-packages layout '$PY_SITE_REL' in $VENV"
[[ -d $VENV/share/rosidl_default_generators ]] \
  || die "rosidl_default_generators missing in $VENV: pip install ros-kilted-rosidl-default-generators"

# --- fix the wheels' exported include paths (machine that built them) ----------------------
# e.g. /opt/python/cp311-cp311/include/python3.11 and
#      /opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include
PY_RE='/opt/python/cp3[0-9]+-cp3[0-9]+t?/include/python3\.[0-9]+t?'
NP_RE='/opt/python/cp3[0-9]+-cp3[0-9]+t?/lib/python3\.[0-9]+t?/site-packages/numpy/(_core|core)/include'
mapfile -t bad_files < <(grep -rlE --include='*.cmake' '/opt/python/cp3' "$VENV/share" || true)
if (( ${#bad_files[@]} )); then
  sed -i -E -e "s#${NP_RE}#${NP_INC}#g" -e "s#${PY_RE}#${PY_INC}#g" "${bad_files[@]}"
  log "rewrote wheel include paths in ${#bad_files[@]} cmake file(s)"
fi

# --- configure, build, install -------------------------------------------------------------
export AMENT_PREFIX_PATH="$VENV"
export CMAKE_PREFIX_PATH="$VENV"
export PATH="$VENV/bin:$PATH"
mkdir -p "$BUILD_DIR"
LOG="$BUILD_DIR/build.log"
: >"$LOG"

run() {
  if ! "$@" >>"$LOG" 2>&1; then
    tail -n 40 "$LOG" >&2
    die "'$*' failed; full log: $LOG"
  fi
}

# A cache from another source directory (repository moved) cannot be reused.
if [[ -f $BUILD_DIR/CMakeCache.txt ]] \
  && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$SRC_DIR" "$BUILD_DIR/CMakeCache.txt"; then
  rm -rf "${BUILD_DIR:?}"/*
  : >"$LOG"
fi

START=$SECONDS
log "configuring..."
run cmake -S "$SRC_DIR" -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_TESTING=OFF \
  -DCMAKE_INSTALL_PREFIX="$VENV" \
  -DPython3_EXECUTABLE="$PY" \
  -DPYTHON_INSTALL_DIR="$PY_SITE_REL" \
  -DCMAKE_C_COMPILER="$CC_BIN" \
  -DCMAKE_CXX_COMPILER="$CXX_BIN"

log "building (vision_msgs about 1 min)..."
run cmake --build "$BUILD_DIR" -j2

# Remove what a previous install put there, so a renamed or deleted message leaves nothing stale.
if [[ -f $BUILD_DIR/install_manifest.txt ]]; then
  while IFS= read -r f; do
    [[ $f == "$VENV"/* ]] && rm -f -- "$f"
  done <"$BUILD_DIR/install_manifest.txt"
fi
run cmake --install "$BUILD_DIR"

import_ok || die "installed, but '$PY -c \"import $PKG.msg\"' fails; see $LOG"
printf '%s\n' "$SRC_SHA" >"$STAMP"
log "installed into $VENV in $((SECONDS - START)) s"
