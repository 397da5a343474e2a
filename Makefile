# The README's commands. Each sets up what it needs first, so a fresh clone needs only these.
SHELL := /bin/bash
PYTHON_VENV := .venv/bin/python
CLI := .venv/bin/triton-perception

.PHONY: setup models test test-fast demo bench soak shell clean check-shared shared

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

# The shared folder ($$TRITON_PERCEPTION_SHARED, else ../shared) against dev/shared_manifest.yaml: one
# line per missing or different file. Without set-up, since set-up itself needs the folder.
SHARED_PYTHON = $(if $(wildcard $(PYTHON_VENV)),$(PYTHON_VENV),python3)
check-shared:
	@$(SHARED_PYTHON) dev/shared_folder.py check

# Rebuild the shared folder from upstream (online, not in CI) into INTO (default: the shared
# folder, refused when it exists unless FORCE=1), from local clones MIRROR/owner/name where there
# are; one line per piece it could not make.
shared:
	@$(SHARED_PYTHON) dev/shared_folder.py rebuild $(if $(INTO),--into $(INTO)) $(if $(FORCE),--force) $(if $(MIRROR),--mirror $(MIRROR))

clean:
	rm -rf out .pytest_cache
