"""`EntityLookup`: the planner's entity read on a network graph, bounded by the graph arm's timeout.
The store here is a stand-in whose read blocks until released: what is tested is the lookup's own
bookkeeping (the real hung Bolt server is in tests/integration/test_graph_bolt_down.py)."""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from types import SimpleNamespace

from fused_memory.ensemble.lookup import EntityLookup, wait_s


class SlowGraphStore:
    def __init__(self) -> None:
        self.graph = SimpleNamespace(remote=True)
        self.release = threading.Event()
        self.calls = 0

    def entity_matcher(self, namespace: str) -> str:
        self.calls += 1
        self.release.wait(10)
        return f"matcher of {namespace}"


def test_a_late_lookup_is_waited_on_once_then_skipped_until_it_answers() -> None:
    store, lookup = SlowGraphStore(), EntityLookup()
    with cf.ThreadPoolExecutor(2) as pool:
        assert lookup(store, "a", pool.submit, 0.2)[1].kind == "timeout"  # waited 0.2 s
        # not waited on again: with no timeout at all, a wait would have returned the matcher
        assert lookup(store, "a", pool.submit, float("inf"))[1].kind == "timeout"
        assert store.calls == 1
        store.release.set()
        for _ in range(200):  # back once the late read has answered
            if lookup(store, "a", pool.submit, 1.0) == ("matcher of a", None):
                break
            time.sleep(0.01)
        assert lookup(store, "a", pool.submit, 1.0) == ("matcher of a", None)


def test_a_lookup_pending_past_its_expiry_is_asked_again_and_clear_forgets_all() -> None:
    store, lookup = SlowGraphStore(), EntityLookup(expire_s=0.0)
    with cf.ThreadPoolExecutor(4) as pool:
        lookup(store, "a", pool.submit, 0.05)
        lookup(store, "a", pool.submit, 0.05)  # expired at once: a second read is submitted
        for _ in range(100):
            if store.calls == 2:
                break
            time.sleep(0.01)
        assert store.calls == 2
        lookup.clear()
        store.release.set()


def test_an_infinite_timeout_is_no_timeout() -> None:
    assert wait_s(float("inf")) is None and wait_s(-1.0) == 0.0 and wait_s(0.5) == 0.5
