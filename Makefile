# llmhost.vllm developer entry points. The two that matter:
#   make preflight   read-only survey of this machine (localhost)
#   make test        every test layer (lint, sanity, unit, molecule container + vm)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(CURDIR)/$(VENV)/bin
COLLECTIONS := $(CURDIR)/.cache/collections
COLLECTION_LINK := $(COLLECTIONS)/ansible_collections/llmhost/vllm
export PATH := $(BIN):$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export ANSIBLE_COLLECTIONS_SCAN_SYS_PATH := true
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help preflight test lint sanity unit molecule-container molecule-vm venv collection lock clean clean-cache

help:
	@echo "make preflight | test | lint | sanity | unit | molecule-container | molecule-vm | lock | clean | clean-cache"

$(VENV)/.stamp: requirements/dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements/dev.txt
	touch $@

venv: $(VENV)/.stamp

# Make this checkout importable as llmhost.vllm (for playbooks, molecule and pytest).
collection: $(COLLECTION_LINK)
$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn $(CURDIR) $@

preflight: venv collection
	ansible-playbook -i inventories/local/hosts.yml playbooks/preflight.yml

test: venv collection
	tests/harness/run-layers.sh

lint: venv collection
	tests/harness/host-deps.sh lint
	shellcheck tests/harness/*.sh .ci/run
	ansible-lint --strict

sanity: venv
	tests/harness/sanity.sh

unit: venv collection
	pytest -q tests/unit

molecule-container: venv collection
	tests/harness/molecule.sh container

molecule-vm: venv collection
	tests/harness/molecule.sh vm

# Re-resolve requirements/dev.in into the full lock requirements/dev.txt.
lock:
	rm -rf .cache/lockvenv && $(PYTHON) -m venv .cache/lockvenv
	.cache/lockvenv/bin/pip install -q -r requirements/dev.in
	{ echo "# Full lock of requirements/dev.in (pip freeze in a fresh venv on Python 3.11). Regenerate: make lock"; \
	  .cache/lockvenv/bin/pip freeze; } > requirements/dev.txt

clean:
	rm -rf $(VENV) .cache tests/output

clean-cache:
	rm -rf /var/cache/llmhost-test
