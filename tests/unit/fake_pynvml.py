"""A stand-in for the ``pynvml`` module that answers from a real NVML capture (nvml.json).

It exists because unit tests run without a GPU. It follows the real API's rules where the
collection depends on them: calls a capture recorded as failed raise the same NVMLError_*
class; setters check root, the GPU's supported clock ranges and power constraints, and
GeForce boards refuse application clocks (NotSupported), as NVML does.
"""
import copy
import json


class NVMLError(Exception):
    """Base of the stand-in's NVML errors (pynvml.NVMLError)."""


_ERRORS = {}


def error_class(name):
    if name not in _ERRORS:
        _ERRORS[name] = type(name, (NVMLError,), {})
    return _ERRORS[name]


CLOCK_KEYS = {0: "graphics", 1: "sm", 2: "mem", 3: "video"}


class Handle:
    """Like pynvml's handle (a ctypes pointer): iterating it would never end, so it refuses."""

    def __init__(self, index):
        self.index = index

    def __iter__(self):
        raise AssertionError("an NVML device handle is a pointer; iterating it never ends")


class FakePynvml:
    """Module-like object: attribute access gives NVML functions."""

    NVML_AFFINITY_SCOPE_NODE = 0

    def __init__(self, dump, is_root=True, init_error=None, constraints=None):
        self.dump = copy.deepcopy(dump)
        self.is_root = is_root
        self.init_error = init_error
        self.constraints = constraints  # (min_mW, max_mW) to answer PowerManagementLimitConstraints
        self.locked = {}
        self.calls = []

    @classmethod
    def from_file(cls, path, **kw):
        with open(path) as f:
            return cls(json.load(f), **kw)

    # -- helpers
    def _dev(self, handle):
        return self.dump["devices"][handle.index]

    @staticmethod
    def _answer(entry):
        if entry is None:
            raise error_class("NVMLError_NotSupported")("Not Supported")
        if "err" in entry:
            raise error_class(entry["err"])(entry.get("msg", ""))
        return entry["ok"]

    def _need_root(self):
        if not self.is_root:
            raise error_class("NVMLError_NoPermission")("Insufficient Permissions")

    # -- system
    def nvmlInit(self):
        if self.init_error:
            raise error_class(self.init_error)("init failed")

    def nvmlShutdown(self):
        return None

    def nvmlSystemGetDriverVersion(self):
        return self._answer(self.dump.get("driver"))

    def nvmlSystemGetNVMLVersion(self):
        return self._answer(self.dump.get("nvml"))

    def nvmlSystemGetCudaDriverVersion(self):
        return self._answer(self.dump.get("cuda_driver"))

    def nvmlDeviceGetCount(self):
        return self._answer(self.dump.get("count"))

    def nvmlDeviceGetHandleByIndex(self, i):
        if i >= len(self.dump["devices"]):
            raise error_class("NVMLError_InvalidArgument")("Invalid Argument")
        return Handle(i)

    def nvmlDeviceGetHandleByUUID(self, uuid):
        for i, d in enumerate(self.dump["devices"]):
            if d["nvmlDeviceGetUUID"].get("ok") == uuid:
                return Handle(i)
        raise error_class("NVMLError_NotFound")("Not Found")

    # -- per device getters named as in the capture
    def __getattr__(self, name):
        if name.startswith("nvmlDeviceGet"):
            def getter(handle, *args):
                if args:
                    raise TypeError("%s takes only a handle here" % name)
                if name == "nvmlDeviceGetPowerManagementLimitConstraints" and self.constraints:
                    return list(self.constraints)
                if name == "nvmlDeviceGetPowerManagementLimit" and handle.index in self.locked.get("power", {}):
                    return self.locked["power"][handle.index]
                return self._answer(self._dev(handle).get(name))
            return getter
        raise AttributeError(name)

    def nvmlDeviceGetCpuAffinity(self, handle, size):
        return self._answer(self._dev(handle).get("cpu_affinity_64"))[:size]

    def nvmlDeviceGetMemoryAffinity(self, handle, size, scope):
        return self._answer(self._dev(handle).get("mem_affinity_node"))[:size]

    def nvmlDeviceGetTopologyCommonAncestor(self, h1, h2):
        return self._answer(self._dev(h1).get("topology", {}).get(str(h2.index)))

    def nvmlDeviceGetP2PStatus(self, h1, h2, index):
        if not isinstance(index, int):
            raise TypeError("p2p caps index must be an int (nvidia-ml-py 13.6x exports a tuple)")
        return self._answer(self._dev(h1).get("p2p_read", {}).get(str(h2.index)))

    def _link(self, handle, link, key, old_key):
        dev = self._dev(handle)
        if "nvlinks" in dev:  # our collector's format: one entry per active link
            for entry in dev["nvlinks"]:
                if entry["link"] == link:
                    return self._answer(entry.get(key))
            return 0 if key == "state" else self._answer(None)
        return self._answer(dev.get(old_key % link))

    def nvmlDeviceGetNvLinkState(self, handle, link):
        return self._link(handle, link, "state", "nvlink_state_%d")

    def nvmlDeviceGetNvLinkRemotePciInfo(self, handle, link):
        return self._link(handle, link, "remote_pci", "nvlink_remote_pci_%d")

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, handle, link):
        return self._link(handle, link, "remote_type", "nvlink_remote_type_%d")

    def nvmlDeviceGetClockInfo(self, handle, ctype):
        return self._answer(self._dev(handle).get("clock_" + CLOCK_KEYS[ctype]))

    def nvmlDeviceGetMaxClockInfo(self, handle, ctype):
        return self._answer(self._dev(handle).get("maxclock_" + CLOCK_KEYS[ctype]))

    def nvmlDeviceGetApplicationsClock(self, handle, ctype):
        return self._answer(self._dev(handle).get("appclock_" + CLOCK_KEYS[ctype]))

    def nvmlDeviceGetDefaultApplicationsClock(self, handle, ctype):
        return self._answer(self._dev(handle).get("defappclock_" + CLOCK_KEYS[ctype]))

    def nvmlDeviceGetSupportedGraphicsClocks(self, handle, mem):
        return self._answer(self._dev(handle).get("supported_graphics_clocks_at_max_mem"))

    def nvmlDeviceGetTemperature(self, handle, sensor):
        return self._answer(self._dev(handle).get("temperature"))

    # -- setters, with the real API's rules
    def _graphics_range(self, handle):
        gr = self._answer(self._dev(handle).get("supported_graphics_clocks_at_max_mem"))
        return min(gr), max(gr)

    def nvmlDeviceSetGpuLockedClocks(self, handle, lo, hi):
        self._need_root()
        glo, ghi = self._graphics_range(handle)
        if lo > hi or lo < glo or hi > ghi:
            raise error_class("NVMLError_InvalidArgument")("Invalid Argument")
        self.locked.setdefault("graphics", {})[handle.index] = (lo, hi)
        self.calls.append(("lock_graphics", handle.index, lo, hi))

    def nvmlDeviceResetGpuLockedClocks(self, handle):
        self._need_root()
        self.locked.get("graphics", {}).pop(handle.index, None)
        self.calls.append(("reset_graphics", handle.index))

    def nvmlDeviceSetMemoryLockedClocks(self, handle, lo, hi):
        self._need_root()
        mems = self._answer(self._dev(handle).get("nvmlDeviceGetSupportedMemoryClocks"))
        if lo > hi or lo < min(mems) or hi > max(mems):
            raise error_class("NVMLError_InvalidArgument")("Invalid Argument")
        self.locked.setdefault("memory", {})[handle.index] = (lo, hi)
        self.calls.append(("lock_memory", handle.index, lo, hi))

    def nvmlDeviceResetMemoryLockedClocks(self, handle):
        self._need_root()
        self.locked.get("memory", {}).pop(handle.index, None)
        self.calls.append(("reset_memory", handle.index))

    def nvmlDeviceSetPowerManagementLimit(self, handle, mw):
        self._need_root()
        lo, hi = self.constraints or (None, None)
        if lo is None or not lo <= mw <= hi:
            raise error_class("NVMLError_InvalidArgument")("Invalid Argument")
        self.locked.setdefault("power", {})[handle.index] = mw
        self.calls.append(("power", handle.index, mw))

    def nvmlDeviceSetApplicationsClocks(self, handle, mem, gr):
        self._need_root()
        if "GeForce" in (self._dev(handle)["nvmlDeviceGetName"].get("ok") or ""):
            raise error_class("NVMLError_NotSupported")("Not Supported")
        self.calls.append(("app_clocks", handle.index, mem, gr))
