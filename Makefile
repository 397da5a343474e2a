# The README's commands. Each sets up what it needs first, so a fresh clone needs only these.
SHELL := /bin/bash
PYTHON_VENV := .venv/bin/python
CLI := .venv/bin/triton-perception

.PHONY: setup models test test-fast demo bench soak shell clean

setup:
	@bash dev/setup.sh

models: setup
	@$(CLI) models install

# Everything: unit tests, real tritonserver, real ROS nodes over Fast DDS, real bags.
test: models
	@$(PYTHON_VENV) -m pytest -ra --durations=15

# The tests that need no tritonserver, no ROS processes and no target environment.
test-fast: setup
	@$(PYTHON_VENV) -m pytest -ra -m "not server and not ros and not target"

demo: models
	@$(CLI) demo

bench: models
	@$(CLI) bench --json out/bench.json
	@$(CLI) bench --memory
	@$(CLI) bench --glue --json out/bench-glue.json

# 30 minutes of looped replay: node and server memory growth, accounting (not in CI).
soak: models
	@$(CLI) soak --minutes 30

# Fast DDS 2 (Humble, Jazzy) reads FASTRTPS_DEFAULT_PROFILES_FILE, Fast DDS 3 (Kilted, this
# environment) FASTDDS_DEFAULT_PROFILES_FILE: both are set.
shell: setup
	@echo "Entering a shell with .venv active (exit to leave)"; \
	bash --rcfile <(echo '. ~/.bashrc 2>/dev/null; . .venv/bin/activate; export FASTRTPS_DEFAULT_PROFILES_FILE=$(CURDIR)/config/fastdds_profile.xml; export FASTDDS_DEFAULT_PROFILES_FILE=$(CURDIR)/config/fastdds_profile.xml')

clean:
	rm -rf out .pytest_cache
