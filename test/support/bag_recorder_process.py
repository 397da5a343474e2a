"""
Run a BagRecorder in its own process (its own DDS participant) for test_bag_tools.py.

Records one topic until COUNT messages arrived or TIMEOUT_S passed, then prints one JSON
line: {"counts": {topic: n}, "publisher_type_hashes": [...]}. The hashes are those the
publishers announced over DDS, so the test can compare them with the bag's metadata.
Recording starts only once a publisher is in this process's graph: the player waits for our
subscription, so the publisher is alive when its hash is read, and our reader matches it at
creation, before the player can send. Exit status 0 when COUNT arrived, 1 otherwise. The ROS
environment (domain id, profiles file, log directory) comes from the parent.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import sys
import time

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor

from triton_perception.bag.record import BagRecorder


def main(argv: list[str]) -> int:
    """Record the topic named in `argv` as the module says; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('output', type=Path)
    parser.add_argument('topic')
    parser.add_argument('type_name')
    parser.add_argument('count', type=int)
    parser.add_argument('timeout_s', type=float)
    arguments = parser.parse_args(argv)

    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node(f'bag_recorder_test_{os.getpid()}', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    recorder = BagRecorder(node, arguments.output, {arguments.topic: arguments.type_name})
    hashes: set[str] = set()
    deadline = time.monotonic() + arguments.timeout_s
    try:
        while not hashes and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
            hashes.update(str(info.topic_type_hash)
                          for info in node.get_publishers_info_by_topic(arguments.topic))
        recorder.start()
        while (recorder.counts()[arguments.topic] < arguments.count
               and time.monotonic() < deadline):
            executor.spin_once(timeout_sec=0.05)
    finally:
        counts = recorder.stop()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    print(json.dumps({'counts': counts, 'publisher_type_hashes': sorted(hashes)}), flush=True)
    return 0 if counts[arguments.topic] >= arguments.count else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
