# llmhost.vllm developer entry points. The two that matter:
#   make host-report   read-only survey of this machine (localhost); STACK=current picks a profile
#   make test          every test layer (lint, sanity, unit, molecule container + vm), two lanes side by side
#   make test-fast     the inner loop: lint, sanity, unit and the container scenario (no VM)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(CURDIR)/$(VENV)/bin
# The user's controller: ansible-core and what it needs, nothing for tests (requirements/controller.txt).
CONTROLLER_VENV ?= .venv-controller
CONTROLLER_BIN := $(CURDIR)/$(CONTROLLER_VENV)/bin
COLLECTIONS := $(CURDIR)/.cache/collections
COLLECTION_LINK := $(COLLECTIONS)/ansible_collections/llmhost/vllm
export PATH := $(BIN):$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export ANSIBLE_COLLECTIONS_SCAN_SYS_PATH := true
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help host-report test test-fast lint sanity unit molecule-container molecule-vm docs venv controller collection lock locks \
	clean clean-cache

help:
	@echo "make host-report [STACK=seed|current] | test | test-fast | lint | sanity | unit | molecule-container | molecule-vm"
	@echo "     docs | lock | locks | clean | clean-cache"

# ansible-core 2.19 runs on Python 3.11+ (Ubuntu 22.04's python3 is 3.10). A venv is made anew each time: one
# half-made by another interpreter would otherwise keep it.
define need_python311
@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
  echo "make $(1): the controller needs Python 3.11 or later (ansible-core 2.19); $(PYTHON) is" \
    "$$($(PYTHON) -V 2>&1 || echo missing). On Ubuntu 22.04: sudo apt-get install python3.11 python3.11-venv," \
    "then: make $(1) PYTHON=python3.11" >&2; exit 1; }
endef

# The developer's venv: the full development lock (molecule, ansible-lint, pytest, the ansible bundle).
$(VENV)/.stamp: requirements/dev.txt
	$(call need_python311,venv collection)
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements/dev.txt
	touch $@

# The user's venv: what the playbooks need on the controller and nothing else; pip shows what it fetches.
$(CONTROLLER_VENV)/.stamp: requirements/controller.txt
	$(call need_python311,host-report)
	rm -rf $(CONTROLLER_VENV)
	$(PYTHON) -m venv $(CONTROLLER_VENV)
	@echo "make host-report: installing ansible-core and its requirements into $(CONTROLLER_VENV) (requirements/controller.txt)"
	$(CONTROLLER_BIN)/pip install --disable-pip-version-check --progress-bar on -r requirements/controller.txt
	touch $@

controller: $(CONTROLLER_VENV)/.stamp

venv: $(VENV)/.stamp

# Make this checkout importable as llmhost.vllm (for playbooks, molecule and pytest).
collection: $(COLLECTION_LINK)
$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn $(CURDIR) $@

# STACK names the stack profile to survey against (default: the inventory's, i.e. seed).
STACK ?=
host-report: controller collection
	$(CONTROLLER_BIN)/ansible-playbook -i inventories/local/hosts.yml playbooks/host_report.yml $(if $(STACK),-e llmhost_stack=$(STACK))

test: venv collection
	tests/harness/run-layers.sh

test-fast: venv collection
	LLMHOST_LAYERS="lint sanity unit molecule-container" tests/harness/run-layers.sh

lint: venv collection
	tests/harness/lint.sh

# Write the serving plan's wishes from their one home (plugins/module_utils/wishes.py) into the vllm_service role's
# argument_specs, defaults and README (CONTRIBUTING.md: adding a vLLM option).
docs: venv
	$(BIN)/python tools/wish_docs.py

sanity: venv
	tests/harness/sanity.sh

unit: venv collection
	tests/harness/unit.sh

molecule-container: venv collection
	tests/harness/molecule.sh container

molecule-vm: venv collection
	tests/harness/molecule.sh vm

# Re-resolve requirements/dev.in into the full lock requirements/dev.txt, then requirements/controller.in into
# requirements/controller.txt within it (constrained by dev.txt: both locks pin the same versions).
lock:
	rm -rf .cache/lockvenv && $(PYTHON) -m venv .cache/lockvenv
	.cache/lockvenv/bin/pip install -q -r requirements/dev.in
	{ echo "# Full lock of requirements/dev.in (pip freeze in a fresh venv on Python 3.11). Regenerate: make lock"; \
	  .cache/lockvenv/bin/pip freeze; } > requirements/dev.txt
	rm -rf .cache/lockvenv && $(PYTHON) -m venv .cache/lockvenv
	.cache/lockvenv/bin/pip install -q -r requirements/controller.in -c requirements/dev.txt
	{ echo "# Full lock of requirements/controller.in (pip freeze in a fresh venv on Python 3.11, within requirements/dev.txt). Regenerate: make lock"; \
	  .cache/lockvenv/bin/pip freeze; } > requirements/controller.txt

clean:
	rm -rf $(VENV) $(CONTROLLER_VENV) .cache tests/output
	rm -f $(HOME)/.ansible/test/cache/get_pip_*.py  # the pip stand-in tests/harness/sanity.sh puts there

# Stops the harness's helpers first: dockerd keeps mounts under the cache that rm cannot remove.
clean-cache:
	tests/harness/clean-cache.sh

# Re-resolve the stack profiles' venv locks (roles/llmhost_stack/files/locks/*.in -> .txt) with uv.
# The seed locks are resolved as of vLLM 0.6.3's release date, so later releases cannot creep in.
LOCKS := roles/llmhost_stack/files/locks
UV_COMPILE = .cache/uv/bin/uv pip compile --quiet --no-header --no-annotate --native-tls
locks:
	test -x .cache/uv/bin/uv || { $(PYTHON) -m venv .cache/uv && .cache/uv/bin/pip install -q uv==0.13.9; }
	$(UV_COMPILE) $(LOCKS)/seed-vllm.in --python-version 3.10 --python-platform x86_64-manylinux_2_17 \
	  --exclude-newer 2024-10-21T00:00:00Z --exclude-newer-package pyairports=2026-11-01T00:00:00Z -o $(LOCKS)/seed-vllm.txt
	$(UV_COMPILE) $(LOCKS)/seed-vllm.in --python-version 3.11 --python-platform x86_64-manylinux_2_17 \
	  --exclude-newer 2024-10-21T00:00:00Z --exclude-newer-package pyairports=2026-11-01T00:00:00Z -o $(LOCKS)/seed-vllm-py311.txt
	$(UV_COMPILE) $(LOCKS)/seed-autoawq.in --python-version 3.10 --python-platform x86_64-manylinux_2_28 \
	  --exclude-newer 2024-10-21T00:00:00Z -o $(LOCKS)/seed-autoawq.txt
	$(UV_COMPILE) $(LOCKS)/seed-autoawq.in --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	  --exclude-newer 2024-10-21T00:00:00Z -o $(LOCKS)/seed-autoawq-py311.txt
	$(UV_COMPILE) $(LOCKS)/current-vllm.in --python-version 3.12 --python-platform x86_64-manylinux_2_28 -o $(LOCKS)/current-vllm.txt
	$(UV_COMPILE) $(LOCKS)/current-vllm.in --python-version 3.11 --python-platform x86_64-manylinux_2_28 -o $(LOCKS)/current-vllm-py311.txt
	$(UV_COMPILE) $(LOCKS)/current-vllm-ray.in -c $(LOCKS)/current-vllm.txt --python-version 3.12 \
	  --python-platform x86_64-manylinux_2_28 -o $(LOCKS)/current-vllm-ray.txt
	$(UV_COMPILE) $(LOCKS)/current-vllm-ray.in -c $(LOCKS)/current-vllm-py311.txt --python-version 3.11 \
	  --python-platform x86_64-manylinux_2_28 -o $(LOCKS)/current-vllm-ray-py311.txt
	$(UV_COMPILE) $(LOCKS)/current-llm-compressor.in --python-version 3.12 --python-platform x86_64-manylinux_2_28 \
	  -o $(LOCKS)/current-llm-compressor.txt
	$(UV_COMPILE) $(LOCKS)/current-llm-compressor.in --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	  -o $(LOCKS)/current-llm-compressor-py311.txt
	for v in 3.10 3.11 3.12; do $(UV_COMPILE) $(LOCKS)/bench.in --python-version $$v --python-platform x86_64-manylinux_2_28 \
	  -o $(LOCKS)/bench-py$$(echo $$v | tr -d .).txt; done
	for f in $(LOCKS)/*.txt; do sed -i "1i # Full lock for the $${f##*/} venv of this stack profile. Generated by \`make locks\` (uv pip compile); do not edit." $$f; done
