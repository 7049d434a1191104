# Copyright: llmhost.vllm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU exporter of llmhost.vllm's monitoring role: NVML readings and kernel-log Xid lines for Prometheus.

It only reads: no NVML setter is ever called. What it serves is made by the collection's
plugins/module_utils/gpu_metrics.py (installed beside this file under --lib); prometheus_client
writes the exposition format. It degrades, never stops: without NVML it serves llmhost_gpu_nvml_up 0,
without a readable kernel log llmhost_gpu_xid_source_up 0.

    usage: <venv>/bin/python llmhost_gpu_exporter.py --lib DIR [--listen 127.0.0.1] [--port 9835] [--kmsg /dev/kmsg]
"""

import argparse
import errno
import os
import sys
import threading


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", required=True, help="folder holding ansible_collections/llmhost/vllm/plugins/module_utils")
    p.add_argument("--listen", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9835)
    p.add_argument("--kmsg", default="/dev/kmsg", help="the kernel log to follow for Xid lines")
    return p.parse_args(argv)


class XidFollower:
    """Counts Xid lines of the kernel log: the records still in the ring buffer, then each new one."""

    def __init__(self, path, count_xids):
        self.path = path
        self.count_xids = count_xids
        self.counts = {}
        self.error = None
        self.lock = threading.Lock()

    def start(self):
        t = threading.Thread(target=self.run, name="xid-follower", daemon=True)
        t.start()
        return t

    def run(self):
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as e:
            self.error = "%s: %s" % (type(e).__name__, e)
            return
        while True:
            try:
                record = os.read(fd, 8192)
            except OSError as e:
                if e.errno == errno.EPIPE:  # records overwritten before we read them: go on with the next
                    continue
                self.error = "%s: %s" % (type(e).__name__, e)
                return
            if not record:
                return
            self.feed(record.decode("utf-8", "replace"))

    def feed(self, record):
        """One /dev/kmsg record: ``prio,seq,usec,flags;message`` then continuation lines."""
        message = record.split(";", 1)[1] if ";" in record.split("\n", 1)[0] else record
        with self.lock:
            self.count_xids(message.splitlines()[:1], self.counts)

    def snapshot(self):
        with self.lock:
            return dict(self.counts), self.error


class GpuCollector:
    """A prometheus_client collector: one NVML read per scrape."""

    def __init__(self, pynvml, gm, xids, why_no_nvml=None):
        self.pynvml = pynvml
        self.gm = gm
        self.xids = xids
        self.why_no_nvml = why_no_nvml
        self.initialised = False

    def _devices(self):
        if self.pynvml is None:
            return [], self.why_no_nvml
        if not self.initialised:
            try:
                self.pynvml.nvmlInit()
            except Exception as e:  # pylint: disable=broad-except  # no driver yet: retried next scrape
                return [], type(e).__name__
            self.initialised = True
        return self.gm.read_devices(self.pynvml), None

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily  # pylint: disable=import-outside-toplevel
        devices, nvml_error = self._devices()
        counts, xid_error = self.xids.snapshot()
        for name, (dummy, doc, samples) in sorted(self.gm.families(devices, counts, nvml_error, xid_error).items()):
            keys = sorted({k for labels, dummy in samples for k in labels})
            family = GaugeMetricFamily(name, doc, labels=keys)
            for labels, value in samples:
                family.add_metric([labels.get(k, "") for k in keys], value)
            yield family


def make_registry(pynvml, gm, xids, why_no_nvml=None):
    from prometheus_client import CollectorRegistry  # pylint: disable=import-outside-toplevel
    registry = CollectorRegistry()
    registry.register(GpuCollector(pynvml, gm, xids, why_no_nvml))
    return registry


def main(argv=None):
    args = parse_args(argv)
    sys.path.insert(0, args.lib)
    from ansible_collections.llmhost.vllm.plugins.module_utils import gpu_metrics as gm  # pylint: disable=import-outside-toplevel
    from ansible_collections.llmhost.vllm.plugins.module_utils import nvml  # pylint: disable=import-outside-toplevel
    from prometheus_client import start_http_server  # pylint: disable=import-outside-toplevel
    pynvml, why = nvml.import_pynvml()
    if pynvml is None:
        print("no NVML: %s; serving llmhost_gpu_nvml_up 0" % why, file=sys.stderr)
    xids = XidFollower(args.kmsg, gm.count_xids)
    xids.start()
    server, thread = start_http_server(args.port, addr=args.listen, registry=make_registry(pynvml, gm, xids, why))
    print("serving on %s:%d" % (args.listen, args.port), file=sys.stderr, flush=True)
    thread.join()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
