# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's pure logic (playbooks/benchmark.yml): the load generator's command line for one phase, and
what its result files say, as a table, a comparison with an earlier run, and charts.

Both load generators are vLLM's own serving benchmark: ``vllm bench serve`` (vLLM 0.10 on, in the vLLM venv)
and, for releases that ship it only as a script, ``benchmarks/benchmark_serving.py`` of a pinned vLLM release.
They take the same options and write the same result JSON, except how ``--random-range-ratio`` draws lengths.
Standard library only (matplotlib is imported by the chart function alone), so the lent-GPU proof runs this
file as it is."""

from __future__ import annotations

import json
import math
import re

# The columns of a phase's summary, in the table's order: (key, heading, what the result JSON calls it)
METRICS = (
    ("output_tok_s", "output tok/s", "output_throughput"),
    ("input_tok_s", "prompt tok/s", None),  # total_input_tokens / duration: what a prefill phase measures
    ("request_s", "req/s", "request_throughput"),
    ("ttft_p50_ms", "TTFT p50 ms", "p50_ttft_ms"),
    ("ttft_p95_ms", "TTFT p95 ms", "p95_ttft_ms"),
    ("ttft_p99_ms", "TTFT p99 ms", "p99_ttft_ms"),
    ("itl_p50_ms", "ITL p50 ms", "p50_itl_ms"),
    ("itl_p95_ms", "ITL p95 ms", "p95_itl_ms"),
    ("e2el_p95_ms", "E2E p95 ms", "p95_e2el_ms"),
)
HEADINGS = {key: heading for key, heading, _source in METRICS}
# Higher is better for these; lower for the rest (latencies).
HIGHER_IS_BETTER = ("output_tok_s", "input_tok_s", "request_s")
CLIENTS = ("vllm", "script")


class BenchError(Exception):
    pass


_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_]{0,39}\Z")


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def phase_errors(phases, variable="benchmark_phases"):
    """Sentences naming what is wrong with a list of phases; empty when every phase can run."""
    if not isinstance(phases, list) or not phases:
        return ["%s: a list of phases, at least one" % variable]
    errors, seen = [], set()
    for n, phase in enumerate(phases):
        if not isinstance(phase, dict):
            errors.append("%s[%d]: a dict with name, input_len, output_len, concurrency, requests" % (variable, n))
            continue
        name = phase.get("name")
        where = "%s[%d] (%s)" % (variable, n, name)
        if not isinstance(name, str) or not _NAME_RE.match(name):
            errors.append("%s: name must be 1 to 40 of a-z, 0-9 and _, starting with a letter or digit (it names the "
                          "result file)" % where)
        elif name in seen:
            errors.append("%s: name used twice" % where)
        seen.add(name)
        bad = [k for k in ("output_len", "concurrency", "requests") if not _whole(phase.get(k))]
        if bad:
            errors.append("%s: %s must be whole numbers of 1 or more" % (where, ", ".join(bad)))
        lengths = phase.get("input_len")
        if not (_whole(lengths) or (isinstance(lengths, list) and len(lengths) == 2 and all(_whole(v) for v in lengths)
                                    and lengths[0] <= lengths[1])):
            errors.append("%s: input_len must be a length or [shortest, longest], each 1 or more" % where)
        unknown = sorted(set(phase) - {"name", "input_len", "output_len", "concurrency", "requests"})
        if unknown:
            errors.append("%s: unknown keys %s" % (where, unknown))
    return errors


def input_range(phase):
    """A phase's prompt lengths as (shortest, longest): input_len is a number or [shortest, longest]."""
    value = phase["input_len"]
    low, high = (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))
    if low < 1 or high < low:
        raise BenchError("phase %s: input_len %s is no length or [shortest, longest]" % (phase["name"], value))
    return low, high


def _lengths(client, phase):
    """--random-input-len and --random-range-ratio for the lengths a phase asks for. vllm bench serve draws
    prompts from [len*(1-r), len*(1+r)], and takes {"input": r, "output": 0} to keep outputs fixed; the
    0.6.4 script draws both from [len*r, len] with one r, so its outputs then vary too (the report shows
    the mean lengths each phase really had)."""
    low, high = input_range(phase)
    if low == high:
        return ["--random-input-len", str(high)] + (["--random-range-ratio", "1.0"] if client == "script" else [])
    if client == "script":
        return ["--random-input-len", str(high), "--random-range-ratio", "%.4f" % (low / high)]
    ratio = (high - low) / (high + low)
    return ["--random-input-len", str((low + high) // 2),
            "--random-range-ratio", json.dumps({"input": round(ratio, 4), "output": 0.0})]


def client_argv(client, program, phase, target):
    """The load generator's command line for one phase. program: the command that starts it ([vllm] or
    [python, benchmark_serving.py]); target: base_url, model (the served name), tokenizer (a path),
    result_dir, seed."""
    if client not in CLIENTS:
        raise BenchError("client %r is none of %s" % (client, ", ".join(CLIENTS)))
    head = list(program) + (["bench", "serve"] if client == "vllm" else [])
    return head + [
        "--backend", "vllm", "--base-url", target["base_url"], "--endpoint", "/v1/completions",
        "--model", target["model"], "--tokenizer", target["tokenizer"],
        "--dataset-name", "random", "--random-output-len", str(phase["output_len"]),
    ] + _lengths(client, phase) + [
        "--num-prompts", str(phase["requests"]), "--max-concurrency", str(phase["concurrency"]),
        "--request-rate", "inf", "--ignore-eos", "--seed", str(target.get("seed", 0)),
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,95,99",
        "--save-result", "--result-dir", target["result_dir"], "--result-filename", phase["name"] + ".json",
    ] + (["--save-detailed"] if client == "vllm" else [])  # per-request times (the script always saves them)


def _number(value):
    return round(float(value), 2) if isinstance(value, (int, float)) and math.isfinite(value) else None


def summarize_phase(phase, result):
    """One phase's row from the load generator's result JSON (a dict), with the errors and the lengths the
    requests really had. A phase where no request completed has no figures, only its errors."""
    errors = [e for e in result.get("errors") or [] if e]
    completed = int(result.get("completed") or 0)
    row = {"phase": phase["name"], "requests": int(phase["requests"]), "concurrency": int(phase["concurrency"]),
           "completed": completed,
           "errors": max(len(errors), int(result.get("failed") or 0), int(phase["requests"]) - completed),
           "first_error": (errors[0].strip().splitlines() or [""])[-1][:200] if errors else "",
           "duration_s": _number(result.get("duration"))}
    for key, _heading, source in METRICS:
        row[key] = _number(result.get(source)) if completed and source else None
    duration = result.get("duration")
    if completed and isinstance(duration, (int, float)) and duration > 0:
        row["input_tok_s"] = _number(float(result.get("total_input_tokens") or 0) / duration)
    row["mean_input_len"] = round(result.get("total_input_tokens", 0) / completed, 1) if completed else None
    row["mean_output_len"] = round(result.get("total_output_tokens", 0) / completed, 1) if completed else None
    if completed and (row["mean_output_len"] or 0) <= 1:  # one token per request: no gap between tokens
        row["itl_p50_ms"] = row["itl_p95_ms"] = None
    row["peak_in_flight"] = peak_in_flight(result)
    return row


def peak_in_flight(result):
    """The most requests in flight at once, from each request's start, time to first token and gaps between
    tokens (vllm bench serve writes start_times; the 0.6.4 script does not: None). This shows whether the
    load generator really held the concurrency asked for (a client's connection pool can cap it)."""
    starts, ttfts, itls = result.get("start_times"), result.get("ttfts"), result.get("itls")
    if not starts or not ttfts or len(starts) != len(ttfts):
        return None
    events = []
    for start, ttft, gaps in zip(starts, ttfts, itls or [[]] * len(starts)):
        if start is None or not ttft:
            continue
        events += [(start, 1), (start + ttft + sum(gaps or []), -1)]
    peak = level = 0
    for _when, step in sorted(events, key=lambda e: (e[0], e[1])):
        level += step
        peak = max(peak, level)
    return peak


def summarize(phases, results, info):
    """A run's summary: info (host, when, client, target, plan, profile) and one row per phase. results maps
    a phase's name to its result JSON, or to None where the load generator left none."""
    rows = []
    for phase in phases:
        result = results.get(phase["name"])
        if result is None:
            row = {"phase": phase["name"], "requests": int(phase["requests"]), "concurrency": int(phase["concurrency"]),
                   "completed": 0, "errors": int(phase["requests"]), "first_error": "the load generator wrote no result",
                   "duration_s": None, "mean_input_len": None, "mean_output_len": None, "peak_in_flight": None}
            rows.append(dict(row, **{key: None for key, _h, _s in METRICS}))
            continue
        rows.append(summarize_phase(phase, result))
    return dict(info, phases=rows)


_PLUMBING = ("--host", "--port", "--served-model-name", "--shutdown-timeout", "--api-key")


def plan_label(plan):
    """The serving options a plan's first replica runs with, without where it listens and what it is called."""
    replicas = plan.get("replicas") or []
    if not replicas:
        return ""
    options, kept, skip = replicas[0].get("options") or [], [], False
    for arg in options:
        if skip and not arg.startswith("--"):
            skip = False
            continue
        skip = arg in _PLUMBING
        if not skip:
            kept.append(arg)
    return "%s, %d replica(s): %s" % (plan.get("mode", "?"), len(replicas), " ".join(kept) or "vLLM's defaults")


def _ratio(new, old, key):
    a, b = new.get(key), old.get(key)
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 2)


def compare(summary, earlier):
    """Ratios per phase (this run / the earlier one) for the phases both runs have; above 1 is better for
    throughput, below 1 for latencies."""
    before = {row["phase"]: row for row in earlier.get("phases", [])}
    rows = []
    for row in summary["phases"]:
        old = before.get(row["phase"])
        if old is None:
            continue
        ratios = {key: _ratio(row, old, key) for key, _h, _s in METRICS}
        rows.append(dict(ratios, phase=row["phase"]))
    return rows


def _cell(value):
    return "–" if value is None else ("%.2f" % value if isinstance(value, float) else str(value))


def table(headings, rows):
    lines = ["| " + " | ".join(headings) + " |", "|" + "---|" * len(headings)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def markdown(summary, earlier=None):
    """The run's report: what ran where, the table per phase, and the ratios against an earlier run."""
    lines = ["# Benchmark of %s, %s" % (summary.get("host", "?"), summary.get("when", "?")), ""]
    for label, key in (("label", "label"), ("target", "target"), ("load generator", "client_label"),
                       ("stack profile", "profile"), ("serving plan", "plan_label")):
        if summary.get(key):
            lines.append("- %s: %s" % (label, summary[key]))
    lines += ["", "## Results", ""]
    headings = ["phase", "conc.", "done/asked", "errors"] + [h for _k, h, _s in METRICS] + ["in/out len", "peak in flight"]
    rows = [[r["phase"], r["concurrency"], "%d/%d" % (r["completed"], r["requests"]), r["errors"]]
            + [r.get(k) for k, _h, _s in METRICS]
            + ["–" if r.get("mean_input_len") is None else "%s/%s" % (r["mean_input_len"], r["mean_output_len"]),
               r.get("peak_in_flight")] for r in summary["phases"]]
    lines += table(headings, rows)
    failing = [r for r in summary["phases"] if r.get("first_error")]
    if failing:
        lines += ["", "Errors: " + "; ".join("%s: %s" % (r["phase"], r["first_error"]) for r in failing)]
    if earlier is not None:
        lines += ["", "## Against %s (ratio: this run / that one)" % earlier.get("when", "the earlier run"), "",
                  "Above 1 is better for tok/s and req/s, below 1 for the latencies.", ""]
        lines += table(["phase"] + [h for _k, h, _s in METRICS],
                       [[r["phase"]] + [r[k] for k, _h, _s in METRICS] for r in compare(summary, earlier)])
    return "\n".join(lines) + "\n"


def _run_name(summary, fallback):
    """A run as its chart's legend names it: its label (-e label=...) or fallback, and when it ran."""
    name = summary.get("label") or fallback
    return "%s, %s" % (name, summary["when"]) if summary.get("when") else name


def _prefill(row):
    """A phase that asks for one output token measures the prompt: its throughput is prompt tok/s."""
    return row.get("mean_output_len") is not None and row["mean_output_len"] <= 1


CHARTS = (
    ("throughput.png", "Throughput per phase (higher is better)"),
    ("ttft.png", "Time to first token per phase (lower is better)"),
    ("itl.png", "Inter-token latency per phase (lower is better)"),
)


def _chart_keys(name, row):
    if name == "throughput.png":
        return ("input_tok_s",) if _prefill(row) else ("output_tok_s",)
    if name == "ttft.png":
        return ("ttft_p50_ms", "ttft_p95_ms", "ttft_p99_ms")
    return ("itl_p50_ms", "itl_p95_ms")


def chart_panels(summary, earlier=None):
    """What the charts show, without drawing: [(file, title, [(phase, [(series, value or None)])])]. One panel per
    phase, each on its own scale (a mixed phase's seconds would flatten a decode phase's milliseconds); the runs are
    named by label and time; a prefill phase's throughput is prompt tok/s."""
    runs = [(_run_name(earlier, "earlier run"), earlier)] if earlier is not None else []
    runs.append((_run_name(summary, "this run"), summary))
    by_run = [(name, {r["phase"]: r for r in s.get("phases", [])}) for name, s in runs]
    out = []
    for name, title in CHARTS:
        panels = []
        for row in summary["phases"]:
            series = [("%s: %s" % (run, HEADINGS[key]), rows.get(row["phase"], {}).get(key))
                      for key in _chart_keys(name, row) for run, rows in by_run]
            panels.append((row["phase"], series))
        out.append((name, title, panels))
    return out


UNITS = {"throughput.png": "tok/s", "ttft.png": "ms", "itl.png": "ms"}
HATCHES = ("", "//", "..")


def _styles(panels, colours):
    """{series label: (colour, hatch)}: one colour per run, one hatch per figure (p50, p95, p99), the same in every
    panel, in the order the labels first come."""
    labels, runs, keys = [], [], []
    for _phase, series in panels:
        for label, _v in series:
            run, key = label.rsplit(": ", 1)
            labels += [label] if label not in labels else []
            runs += [run] if run not in runs else []
            keys += [key] if key not in keys else []
    return {label: (colours[runs.index(label.rsplit(": ", 1)[0]) % len(colours)],
                    HATCHES[keys.index(label.rsplit(": ", 1)[1]) % len(HATCHES)]) for label in labels}


def _panel(axis, phase, series, styles):
    values = [value for _label, value in series]
    axis.set_title(phase, fontsize="small")
    axis.set_xticks([])
    if all(value is None for value in values):  # a prefill phase has no gap between tokens; a failed one no figures
        axis.set_yticks([])
        axis.text(0.5, 0.5, "no figures\n(one output token,\nor nothing completed)", ha="center", va="center",
                  fontsize="small", transform=axis.transAxes)
        return values
    for x, (label, value) in enumerate(series):
        colour, hatch = styles[label]
        axis.bar(x, value or 0, color=colour, hatch=hatch, edgecolor="white")
        axis.text(x, value or 0, "n/a" if value is None else "%g" % value, ha="center", va="bottom", fontsize="x-small")
    return values


def charts(summary, folder, earlier=None):
    """PNG charts of the run (beside the earlier one, if given) into folder: one panel per phase, each on its own
    scale, one colour per run (named by label and time), one hatch per percentile; the file names written."""
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use("Agg")
    from matplotlib import patches, pyplot  # pylint: disable=import-outside-toplevel
    colours = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    written = []
    for name, title, panels in chart_panels(summary, earlier):
        styles = _styles(panels, colours)
        figure, axes = pyplot.subplots(1, len(panels), figsize=(3.0 * len(panels) + 1, 4.2), squeeze=False)
        for axis, (phase, series) in zip(axes[0], panels):
            _panel(axis, phase, series, styles)
        axes[0][0].set_ylabel(UNITS[name])
        figure.legend([patches.Patch(facecolor=c, hatch=h, edgecolor="white") for c, h in styles.values()],
                      list(styles), loc="lower center", ncol=2, fontsize="small")
        figure.suptitle(title)
        figure.tight_layout(rect=(0, 0.06 * ((len(styles) + 1) // 2), 1, 0.95))
        figure.savefig("%s/%s" % (folder, name), dpi=100)
        pyplot.close(figure)
        written.append(name)
    return written
