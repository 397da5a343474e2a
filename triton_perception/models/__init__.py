"""
What the model repository holds and how it gets there.

Owns: installing and checking the shipped models (shipped_models), your own detectors
(detectors) and your own lane models (lane_model_install). May import lanes/, serving/,
graphs/, frames/, outputs/ and system/.
"""
