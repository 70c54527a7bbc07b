"""What the code under test can reach from inside the worker's namespaces: no host daemon's
socket in /run, no network, no nested user namespace, no host name to change, no write outside
its folder, no capability."""

from __future__ import annotations

import errno
import os
import socket
import textwrap

import pytest

from harness.engine.target import TargetError

PROBES = '''
import ctypes, os, socket

def connect():
    path = RUN_SOCKET
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        return 0
    except OSError as exc:
        return exc.errno
    finally:
        s.close()

def tcp():
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect(("127.0.0.1", 22))
        return 0
    except OSError as exc:
        return exc.errno
    finally:
        s.close()

def nested_userns():
    return ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0

def hostname():
    return socket.sethostname("ol-probe") is None

def write():
    path = PLANT
    try:
        with open(path, "w") as f:
            f.write("x")
        return 0
    except OSError as exc:
        return exc.errno

def capabilities():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
'''
RUN_SOCKET = f"/run/ol-probe-{os.getpid()}.sock"
PLANT = f"/var/tmp/ol-probe-planted-{os.getpid()}"
FUNCTIONS = ("connect", "tcp", "nested_userns", "hostname", "write", "capabilities")


@pytest.fixture(scope="module")
def target(isolated_module):
    constants = f"RUN_SOCKET = {RUN_SOCKET!r}\nPLANT = {PLANT!r}\n"
    isolated = isolated_module(constants + textwrap.dedent(PROBES), FUNCTIONS)
    isolated.import_status()
    if not (isolated.sandboxed and isolated.contained):
        pytest.skip("no namespaces here (the kernel refuses user namespaces)")
    return isolated


@pytest.fixture
def run_socket():
    """A listening socket of the host in /run, as a daemon's would be."""
    if not os.access("/run", os.W_OK):
        pytest.skip("/run is not writable here")
    path = RUN_SOCKET
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(1)
    yield path
    server.close()
    os.unlink(path)


def test_no_host_socket_in_run(target, run_socket):
    probe = socket.socket(socket.AF_UNIX)
    probe.connect(run_socket)  # it is reachable from the host
    probe.close()
    assert target.call("connect") == errno.ENOENT


def test_no_network_no_nested_user_namespace_no_capability(target):
    assert target.call("tcp") in (errno.ENETUNREACH, errno.ECONNREFUSED)  # only lo, and down
    assert target.call("nested_userns") is False
    assert target.call("capabilities") == 0


def test_the_host_name_and_the_file_system_stay_the_hosts(target):
    before = socket.gethostname()
    target.begin_test()
    with pytest.raises(TargetError, match="PermissionError"):  # no capability for sethostname
        target.call("hostname")
    assert socket.gethostname() == before
    # Not in the worker's view at all (ENOENT); read-only where the view falls back (EROFS).
    assert target.call("write") in (errno.ENOENT, errno.EROFS)
    assert not os.path.exists(PLANT)
