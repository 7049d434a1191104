"""The Ray cluster's firewall table (roles/ray_cluster, module_utils/ray_cluster.firewall_ruleset), loaded by real nft
into a network namespace of this test's own: a member reaches the cluster's ports, an address outside the group does
not, a port that is not the cluster's stays open, and loading the file again replaces the table rather than adding
to it. Two namespaces joined by a veth pair; nothing outside them is touched. Needs root, nft and ip."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from ansible_collections.llmhost.vllm.plugins.module_utils import ray_cluster

ROOT = Path(__file__).resolve().parents[2]
DEFAULTS = yaml.safe_load((ROOT / "roles/ray_cluster/defaults/main.yml").read_text())
SERVER, MEMBER, OUTSIDER = "10.231.7.1", "10.231.7.2", "10.231.7.3"
TAG = "llmrayfw%d" % (os.getpid() % 100000)
NS_SERVER, NS_CLIENT = TAG + "s", TAG + "c"
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("nft") or not shutil.which("ip"),
                                reason="needs root, nft (nftables) and ip (iproute2)")

LISTEN = textwrap.dedent("""
    import selectors, socket, sys, time
    sel = selectors.DefaultSelector()
    for port in map(int, sys.argv[1:]):
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", port)); s.listen(8); sel.register(s, selectors.EVENT_READ)
    print("listening", flush=True)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            conn, _ = key.fileobj.accept(); conn.close()
""")
CONNECT = textwrap.dedent("""
    import socket, sys
    try:
        socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1.5, source_address=(sys.argv[3], 0)).close()
        print("open")
    except OSError as e:
        print("closed", type(e).__name__)
""")


def sh(*argv, ns=None):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout


@pytest.fixture(scope="module")
def namespaces(tmp_path_factory):
    try:
        sh("ip", "netns", "add", NS_SERVER)
        sh("ip", "netns", "add", NS_CLIENT)
        sh("ip", "link", "add", TAG + "a", "netns", NS_SERVER, "type", "veth", "peer", "name", TAG + "b",
           "netns", NS_CLIENT)
        sh("ip", "addr", "add", SERVER + "/24", "dev", TAG + "a", ns=NS_SERVER)
        for address in (MEMBER, OUTSIDER):
            sh("ip", "addr", "add", address + "/24", "dev", TAG + "b", ns=NS_CLIENT)
        for ns, dev in ((NS_SERVER, TAG + "a"), (NS_CLIENT, TAG + "b")):
            sh("ip", "link", "set", dev, "up", ns=ns)
            sh("ip", "link", "set", "lo", "up", ns=ns)
        table = tmp_path_factory.mktemp("rayfw") / "firewall.nft"
        table.write_text(ray_cluster.firewall_ruleset([SERVER, MEMBER], DEFAULTS["ray_cluster_ports"],
                                                      DEFAULTS["ray_cluster_worker_ports"]))
        yield table
    finally:
        for ns in (NS_SERVER, NS_CLIENT):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


def reach(source, ports):
    got = {}
    for port in ports:
        out = sh(sys.executable, "-c", CONNECT, SERVER, str(port), source, ns=NS_CLIENT)
        got[port] = out.split()[0]
    return got


def test_only_members_reach_the_cluster_s_ports_and_a_reload_replaces_the_table(namespaces):
    gcs, worker, other = DEFAULTS["ray_cluster_ports"]["gcs"], DEFAULTS["ray_cluster_worker_ports"][0] + 5, 8080
    listener = subprocess.Popen(["ip", "netns", "exec", NS_SERVER, sys.executable, "-c", LISTEN, str(gcs),
                                 str(worker), str(other)], stdout=subprocess.PIPE, text=True)
    try:
        assert listener.stdout.readline().strip() == "listening"
        before = reach(OUTSIDER, (gcs, worker, other))
        assert before == {gcs: "open", worker: "open", other: "open"}  # without the table, the outsider gets in
        for load in ("first", "again"):  # loaded again, it replaces the table: still one drop rule, one accept rule
            assert sh("nft", "-f", str(namespaces), ns=NS_SERVER) == "", load
        listed = sh("nft", "list", "table", "inet", "llmhost_ray", ns=NS_SERVER)
        assert listed.count(" drop") == 1 and listed.count("ip saddr") == 1, listed
        assert reach(MEMBER, (gcs, worker, other)) == {gcs: "open", worker: "open", other: "open"}
        assert reach(OUTSIDER, (gcs, worker, other)) == {gcs: "closed", worker: "closed", other: "open"}
        # the unit's stop deletes only the role's table
        sh("nft", "delete", "table", "inet", "llmhost_ray", ns=NS_SERVER)
        assert reach(OUTSIDER, (gcs,)) == {gcs: "open"}
    finally:
        listener.kill()
        listener.wait(timeout=10)
