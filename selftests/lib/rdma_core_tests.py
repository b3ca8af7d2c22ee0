#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Run rdma-core's pyverbs suite as its run_tests.py does, with the netdev
lookups of RDMATestCase.setUp() cached.

For a device with a netdev link (/sys/class/infiniband/DEV/device/net/,
which sroce has and rxe has not), setUp() runs `ls` on that directory and
`ip -j addr show NETDEV` once per non-zero GID, in every test. In a TCG
guest each process costs about 0.14 s, most of the suite's time. Their
answers do not change during a run, so each is computed once.

Also: a device on a virtual netdev gets its IP address through its
"parent" attribute (below), so that rdma_cm tests run on it.

And: with RDMA_CORE_RESULTS=FILE in the environment, each test's outcome
goes to FILE as a line "OUTCOME<TAB>TEST ID" (ok, skip, fail, error,
xfail, xpass), so that the caller can hold the run against a list of the
tests that must pass (a verb that regressed to EOPNOTSUPP makes its tests
skip, which the suite's own verdict counts as no failure).

usage: rdma_core_tests.py TESTS_DIR [run_tests.py arguments]
"""
import functools
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

tests_dir = os.path.abspath(sys.argv.pop(1))
sys.path.insert(0, tests_dir)
from args_parser import parser  # noqa: E402  (rdma-core's, in tests_dir)

tests = SourceFileLoader('tests',
                         os.path.join(tests_dir, '__init__.py')).load_module()
base = sys.modules.get('tests.base')
for name in ('get_net_name', 'get_ip_mac_address'):
    fn = getattr(getattr(base, 'RDMATestCase', None), name, None)
    if fn is not None:
        setattr(base.RDMATestCase, name,
                staticmethod(functools.lru_cache(maxsize=None)(fn)))

# setUp() finds a device's IP address only through its parent device's
# netdevs (/sys/class/infiniband/DEV/device/net/). A device on a virtual
# netdev (veth, macvlan: no parent device) then has no address and every
# rdma_cm test skips. rxe and sroce name their netdev in the "parent"
# attribute: use it when there is no device/net/.
if base is not None and hasattr(base.RDMATestCase, '_get_ip_mac'):
    _get_ip_mac = base.RDMATestCase._get_ip_mac

    def _get_ip_mac_parent(self, dev, port, idx):
        sysfs = '/sys/class/infiniband/{}/'.format(dev)
        if os.path.exists(sysfs + 'device/net/') or \
                not os.path.exists(sysfs + 'parent'):
            return _get_ip_mac(self, dev, port, idx)
        with open(sysfs + 'parent') as f:
            ifname = f.read().strip()
        try:
            ip_addr, mac_addr = self.get_ip_mac_address(ifname)
        except (KeyError, IndexError):
            ip_addr, mac_addr = None, None
        self.args.append([dev, port, idx, ip_addr, mac_addr])

    base.RDMATestCase._get_ip_mac = _get_ip_mac_parent


class RecordingResult(unittest.TextTestResult):
    """A TextTestResult that also writes each outcome to RDMA_CORE_RESULTS."""

    path = os.environ.get('RDMA_CORE_RESULTS')

    def _record(self, test, outcome):
        if self.path:
            with open(self.path, 'a') as f:
                f.write('{}\t{}\n'.format(outcome, test.id()))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, 'ok')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, 'skip')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, 'fail')

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, 'error')

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, 'xfail')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, 'xpass')

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._record(subtest, 'fail')


class RecordingRunner(unittest.TextTestRunner):
    resultclass = RecordingResult


parser.parse_args()
unittest.main(module=tests, testRunner=RecordingRunner)
