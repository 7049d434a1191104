# -*- coding: utf-8 -*-
# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check `vllm serve` options against the option table of a vLLM version.

An option table is what `vllm serve`'s own argument parser reports for one vLLM version
(tools/vllm_option_table.py writes it): ``{"vllm_version": "0.6.3", "options": {"--flag":
{"takes_value": bool, "nargs": None|0|"+"|"*"|"?"|int, "choices": [...]|None, "dest": ...}}}``.
Pure functions; an unknown option is named with the nearest real one (module_utils/typos.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.llmhost.vllm.plugins.module_utils import typos, wishes


# Options the plan and the unit own; a user who passes them through vllm_service_extra_args
# would contradict the plan (or put a secret in argv), so they are refused there: those of the plan's wishes
# (module_utils/wishes.py), and these.
OWNED = dict(wishes.OWNED_FLAGS, **{
    "--api-key": "vllm_service_api_key (it goes to the 0600 environment file, never argv)",
    "--hf-token": "vllm_service_hf_token (it goes to the 0600 environment file, never argv)",
    "--model": "vllm_service_model_path",
    # ways around the plan: more options from a file, a listener off TCP (the gateway, the checks and Prometheus
    # dial TCP), a dtype the plan chose for the GPUs, parallel sizes and engines it did not plan, a KV budget of
    # its own (a few blocks leave a replica unable to start), SSL the gateway does not speak to the replicas
    "--config": "the plan's variables (vllm_service_*): options read from a file would escape its checks",
    "--uds": "vllm_service_host and vllm_service_base_port (the replicas listen on TCP)",
    "--dtype": "vllm_service_weight_format",
    "--pipeline-parallel-size": "vllm_service_tensor_parallel_size (pipeline parallel is not planned)",
    "-pp": "vllm_service_tensor_parallel_size (pipeline parallel is not planned)",
    "--data-parallel-size": "more replicas (vllm_service_gpus, vllm_service_mode)",
    "-dp": "more replicas (vllm_service_gpus, vllm_service_mode)",
    "--api-server-count": "more replicas (vllm_service_gpus, vllm_service_mode)",
    "--headless": "one replica per GPU group (vllm_service_mode)",
    "--distributed-executor-backend": "vllm_service_tensor_parallel_size (the plan uses vLLM's own backend)",
    "--num-gpu-blocks-override": "vllm_service_gpu_memory_utilization (the KV budget is the plan's)",
    "--ssl-keyfile": "the gateway's TLS (gateway_tls_certificate, gateway_tls_key): the replicas speak HTTP to it",
    "--ssl-certfile": "the gateway's TLS (gateway_tls_certificate, gateway_tls_key): the replicas speak HTTP to it",
    "--root-path": "the gateway (the checks and Prometheus reach the replicas at /)",
    "-asc": "more replicas (vllm_service_gpus, vllm_service_mode)",
    "--prefill-context-parallel-size": "vllm_service_tensor_parallel_size (context parallel is not planned)",
    "-pcp": "vllm_service_tensor_parallel_size (context parallel is not planned)",
    "--decode-context-parallel-size": "vllm_service_tensor_parallel_size (context parallel is not planned)",
    "-dcp": "vllm_service_tensor_parallel_size (context parallel is not planned)",
})
# Whole families the plan owns, whatever vLLM adds to them: data parallel (its address, rank, ports, local size; the
# long forms and their short -dp... ones) runs replicas of its own, beside the plan's.
OWNED_FAMILIES = (("--data-parallel-", "more replicas (vllm_service_gpus, vllm_service_mode)"),
                  ("--no-data-parallel-", "more replicas (vllm_service_gpus, vllm_service_mode)"),
                  ("-dp", "more replicas (vllm_service_gpus, vllm_service_mode)"))
# Short forms of the tables that set nothing the plan owns (reviewed one by one; a new one fails a contract test
# until it is classed here or in OWNED).
FREE_SHORT_FORMS = frozenset(["-h", "-ac", "-cc", "-dc", "-ep", "-n", "-r", "-sc", "-spec-draft-tp"])


def owner(name):
    """The variable (and why) that owns an option of vllm serve, or None when a user may pass it."""
    return OWNED.get(name) or next((why for prefix, why in OWNED_FAMILIES if name.startswith(prefix)), None)


# Options that load and run code of someone else's, refused unless vllm_service_allow_foreign_code is true.
FOREIGN_CODE = ("--trust-remote-code", "--middleware", "--worker-cls", "--worker-extension-cls", "--tool-parser-plugin",
                "--reasoning-parser-plugin", "--logits-processors", "--model-loader-extra-config")


# Options vLLM's parser appends to (action="append"): given more than once on purpose. Every other option given twice
# keeps only its last value, silently, and a switch and its --no- form contradict each other.
APPENDED = frozenset(["--middleware"])


def canonical(name, options):
    """The option a flag sets: --no-X is --X's switch turned off, where --X is in the table."""
    if name.startswith("--no-") and "--" + name[len("--no-"):] in options:
        return "--" + name[len("--no-"):]
    return name


def repeated_errors(names, options, variable):
    """A sentence for each option set more than once (names: the flags in the order given)."""
    seen, errors = set(), []
    for name in names:
        key = canonical(name, options)
        if key in seen and key not in APPENDED:
            errors.append("%s: %s is given more than once (vLLM keeps only the last, silently); give it once"
                          % (variable, key))
        seen.add(key)
    return errors


def split_flag(token):
    """'--a=b' -> ('--a', 'b'); '--a' -> ('--a', None)."""
    if token.startswith("--") and "=" in token:
        name, value = token.split("=", 1)
        return name, value
    return token, None


def validate(argv, table, variable, refuse_owned=False, allow_foreign=True):
    """Errors (plain sentences naming ``variable``) for an argv list of options and values.

    Unknown, removed or misspelled options, values given to switches, missing values and
    values outside an option's choices are errors. With ``refuse_owned``, options the serving
    plan owns are refused too (with the variable that sets them); without ``allow_foreign``, options that load
    code of someone else's (FOREIGN_CODE)."""
    options = table.get("options", {})
    version = table.get("vllm_version", "?")
    errors, names = [], []
    i = 0
    argv = [str(a) for a in argv]
    while i < len(argv):
        token = argv[i]
        if not token.startswith("-"):
            errors.append("%s: %r is not an option (options start with --; a value must follow its option)"
                          % (variable, token))
            i += 1
            continue
        name, inline = split_flag(token)
        spec = options.get(name)
        if spec is None:
            close = typos.closest(name, options)
            hint = " (did you mean %s?)" % close if close else ""
            errors.append("%s: %s is not an option of vllm serve in vLLM %s%s" % (variable, name, version, hint))
            i += 1
            continue
        names.append(name)
        if refuse_owned and owner(name):
            errors.append("%s: %s is set by the serving plan; use %s instead" % (variable, name, owner(name)))
        if not allow_foreign and name in FOREIGN_CODE:
            errors.append("%s: %s loads and runs code from outside vLLM (the model's folder, a module, a plugin); set "
                          "vllm_service_allow_foreign_code=true to allow it" % (variable, name))
        values = []
        if not spec.get("takes_value"):
            if inline is not None:
                errors.append("%s: %s is a switch and takes no value (got %r)" % (variable, name, inline))
            i += 1
            continue
        if inline is not None:
            values = [inline]
            i += 1
        else:
            j = i + 1
            nargs = spec.get("nargs")
            many = nargs in ("+", "*")
            while j < len(argv) and not (argv[j].startswith("--") or (argv[j].startswith("-") and argv[j] in options)):
                values.append(argv[j])
                j += 1
                if not many:
                    break
            if not values and nargs not in ("?", "*"):
                errors.append("%s: %s needs a value" % (variable, name))
            i = j
        choices = spec.get("choices")
        if choices:
            bad = [v for v in values if v not in [str(c) for c in choices]]
            if bad:
                errors.append("%s: %s %s is not one of %s" % (variable, name, " ".join(bad),
                                                              ", ".join(str(c) for c in choices)))
    return errors + repeated_errors(names, options, variable)


def option_value(argv, name):
    """The last value given to option ``name`` in an argv list (--name=value or --name value), or None."""
    found = None
    for i, token in enumerate(str(a) for a in argv):
        flag, inline = split_flag(token)
        if flag == name:
            found = inline if inline is not None else (str(argv[i + 1]) if i + 1 < len(argv) else None)
    return found


_SIZE_RE = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kmgtKMGT]?)\Z")


def size_bytes(text):
    """A size as vLLM's parser reads it: a whole number of bytes, or one with a suffix, k m g t in thousands and
    K M G T in 1024s (25.6k, 4G; a fraction only with k m g t); None for anything else."""
    match = _SIZE_RE.match(str(text).strip())
    if not match or ("." in match.group(1) and not match.group(2).islower()):
        return None  # a fraction only with a decimal suffix, as vLLM's parser says
    number, suffix = match.group(1), match.group(2)
    if not suffix:
        return int(number)
    return int(float(number) * ((1024 if suffix.isupper() else 1000) ** ("kmgt".index(suffix.lower()) + 1)))


def has(table, name):
    return name in table.get("options", {})
