# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Callback: load the collection's controller-side plugins once, before Ansible forks a worker per task."""

from __future__ import annotations

DOCUMENTATION = r"""
name: preload
type: aggregate
short_description: Load this collection's filters and plugins once, in the controller, before the tasks run
version_added: 0.3.0
description:
  - ansible-core runs each task of each host in a worker process forked from the controller, and compiles a
    collection's Python plugins from their source (it keeps no bytecode of them). A task that uses one of this
    collection's filters makes its worker load the collection's filter files and the C(module_utils) they import,
    again for every task (docs/measurements.md has the figures).
  - The first play's checks read the roles' YAML files (argument specs, defaults, tasks) in every task that uses them;
    each worker parsed them all again.
  - This callback loads the plugins and parses those files once, in the controller, when the playbook starts; every
    worker inherits them. It prints nothing and changes no result. Where a plugin cannot be loaded, it says so at
    C(-vvv) and the task that uses the plugin loads it as it would have.
  - At the start of each play it also collects Python's garbage once and then moves what the controller holds by
    then (the playbook, the inventory, the loaded plugins) out of the collector's sight (C(gc.freeze)). A worker's
    own collections otherwise walk all of it, and copy every page of the controller's memory they touch
    (docs/measurements.md has the figures).
  - Enabled in the collection's C(ansible.cfg); elsewhere add C(llmhost.vllm.preload) to C(callbacks_enabled).
requirements:
  - enable it in C(callbacks_enabled) (ANSIBLE_CALLBACKS_ENABLED)
author: llmhost.vllm maintainers (@llmhost)
"""

import gc
import pkgutil
from functools import partial
from importlib import import_module

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import action_loader, filter_loader, lookup_loader, test_loader

COLLECTION = "llmhost.vllm"
# plugin folder: how one plugin of it is loaded without a task (Jinja plugin files hold several plugins each)
LOADERS = {
    "filter": filter_loader.get,
    "test": test_loader.get,
    "lookup": partial(lookup_loader.get, class_only=True),
    "action": partial(action_loader.get, class_only=True),
}


def plugin_names(kind, collection=COLLECTION):
    """The fully qualified names of the collection's plugin files of one kind (none where it has no such folder)."""
    try:
        package = import_module("ansible_collections.%s.plugins.%s" % (collection, kind))
    except ImportError:
        return []
    return ["%s.%s" % (collection, name) for _finder, name, ispkg in pkgutil.iter_modules(package.__path__)
            if not ispkg]


def warm_files(collection=COLLECTION):
    """Parse, in this process, the collection's YAML files that its first play's checks read
    (plugin_utils/collection_files.warm); returns how many are held parsed (0 where the collection has no such
    helper)."""
    try:
        package = import_module("ansible_collections.%s" % collection)
        files = import_module("ansible_collections.%s.plugins.plugin_utils.collection_files" % collection)
    except ImportError:
        return 0
    return files.warm(list(package.__path__)[0])


def preload(loaders=None, collection=COLLECTION):
    """Load each plugin file of the collection through its loader; returns (loaded names, [(name, error)])."""
    loaded, failed = [], []
    for kind, load in (loaders or LOADERS).items():
        for name in plugin_names(kind, collection):
            try:
                load(name)
            except Exception as error:  # pylint: disable=broad-exception-caught
                failed.append((name, "%s: %s" % (type(error).__name__, error)))
            else:
                loaded.append(name)
    return loaded, failed


def settle_for_forks():
    """Before a play's workers are forked: collect once, then freeze what is left (gc.freeze), so that the workers'
    collections leave the controller's objects alone. Returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


class CallbackModule(CallbackBase):
    """llmhost.vllm callback preload."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "llmhost.vllm.preload"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_start(self, playbook):
        loaded, failed = preload()
        parsed = warm_files()
        self._display.vvv("llmhost.vllm.preload: %d plugin files loaded and %d YAML files parsed in the controller"
                          % (len(loaded), parsed))
        for name, error in failed:
            self._display.vvv("llmhost.vllm.preload: %s not loaded (%s); its tasks load it themselves" % (name, error))

    def v2_playbook_on_play_start(self, play):
        self._display.vvv("llmhost.vllm.preload: %d objects of the controller frozen before the play's workers fork"
                          % settle_for_forks())
