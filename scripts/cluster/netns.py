"""Machines as Linux network namespaces on one bridge, and everything needed to take them away.

Each machine is a network namespace ``<prefix>-<role>`` with one interface ``eth0`` (a veth
pair) and addresses in 198.18.0.0/15 (RFC 2544's benchmarking range). The bridge lives in a
namespace of its own, ``<prefix>-net``, so the machine's own network (its root namespace) gets
no interface, route or address: nothing the test sends can leave the namespaces. Unplugging a
machine (:meth:`Network.cut`) takes its bridge port down, as pulling its cable would.

Processes run in a machine through ``ip netns exec`` and ``unshare --uts`` with the role as
host name, so each machine reports its own name (the fetchers' heartbeats name their host).
:meth:`Network.destroy` kills, by pid, only processes inside the namespaces this object
created, then deletes those namespaces (their veth pairs and the bridge go with them).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

PREFIX_LENGTH = 15  # 198.18.0.0/15: every machine is on-link for every other
CLONE_NEWNET = 0x40000000


def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=60)


@dataclass
class Network:
    prefix: str
    machines: dict[str, list[str]] = field(default_factory=dict)  # role -> addresses
    created: list[str] = field(default_factory=list)  # namespaces, in creation order

    @property
    def bridge_ns(self) -> str:
        return f"{self.prefix}-net"

    def ns(self, role: str) -> str:
        return f"{self.prefix}-{role}"

    def create(self) -> None:
        """The bridge's namespace and its bridge ``br0``."""
        self._add_ns(self.bridge_ns)
        run("ip", "-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.bridge_ns, "link", "set", "br0", "up")
        run("ip", "-n", self.bridge_ns, "link", "set", "lo", "up")

    def _add_ns(self, name: str) -> None:
        if name in run("ip", "netns", "list").stdout.split():
            raise RuntimeError(f"network namespace {name} exists already: another run? "
                               f"(delete it with: ip netns del {name})")
        run("ip", "netns", "add", name)
        self.created.append(name)

    def add_machine(self, role: str, addresses: list[str]) -> None:
        """Namespace ``<prefix>-<role>`` plugged into the bridge, with ``addresses``."""
        ns = self.ns(role)
        self._add_ns(ns)
        port = f"p-{role}"[:15]
        run("ip", "-n", self.bridge_ns, "link", "add", port, "type", "veth",
            "peer", "name", "eth0", "netns", ns)
        run("ip", "-n", self.bridge_ns, "link", "set", port, "master", "br0", "up")
        for address in addresses:
            run("ip", "-n", ns, "addr", "add", f"{address}/{PREFIX_LENGTH}", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "eth0", "up")
        run("ip", "-n", ns, "link", "set", "lo", "up")
        self.machines[role] = list(addresses)

    def address(self, role: str) -> str:
        return self.machines[role][0]

    def argv(self, role: str, argv: list[str]) -> list[str]:
        """``argv`` run on machine ``role`` (its network, its host name)."""
        return ["ip", "netns", "exec", self.ns(role), "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', role, *argv]

    def cut(self, role: str) -> None:
        run("ip", "-n", self.bridge_ns, "link", "set", f"p-{role}"[:15], "down")

    def plug(self, role: str) -> None:
        run("ip", "-n", self.bridge_ns, "link", "set", f"p-{role}"[:15], "up")

    def pids(self, role: str) -> list[int]:
        """Every process inside machine ``role``'s namespace."""
        out = run("ip", "netns", "pids", self.ns(role), check=False).stdout
        return [int(p) for p in out.split() if p.isdigit()]

    def kill_all(self, role: str, sig: int = signal.SIGKILL) -> list[int]:
        """Send ``sig`` to every process of machine ``role`` (all started by this run: the
        namespace is its own). Returns their pids."""
        pids = [p for p in self.pids(role) if p != os.getpid()]
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        return pids

    def enter(self, role: str) -> None:
        """Move the calling thread into machine ``role``'s network (the driver's HTTP client)."""
        enter_netns(f"/var/run/netns/{self.ns(role)}")

    def destroy(self) -> list[str]:
        """Kill what is left in the namespaces created here, then delete them. Returns the
        problems met (reported, never raised: cleanup goes on)."""
        problems = []
        for name in reversed(self.created):
            role = name[len(self.prefix) + 1:]
            for _ in range(3):
                if not self.kill_all(role):
                    break
                time.sleep(0.5)
            done = run("ip", "netns", "del", name, check=False)
            if done.returncode != 0:
                problems.append(f"ip netns del {name}: {done.stderr.strip()}")
        self.created.clear()
        return problems


def enter_netns(path: str) -> None:
    """setns(2) into the network namespace at ``path`` (Python 3.11 has no os.setns)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def original_netns() -> int:
    """A descriptor of the calling thread's network namespace, to come back to."""
    return os.open("/proc/self/ns/net", os.O_RDONLY)


def return_to(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns back: {os.strerror(err)}")
