"""
How a pipeline is started: launch arguments -> processes, parameters and remappings.

Owns: the plan (plan), the launch files' helpers (launch_support) and `triton-perception run`
without ROS launch (runner). May import serving/, system/ and parameters; never nodes/ (nodes
are started as processes).
"""
