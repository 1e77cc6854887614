"""attend.set_threads / attend.threads and the library's idle workers seen from
Python (tests/test_threads.c checks the same from C). No timing is asserted:
the CPU the workers use while Python computes is measured as process CPU time
minus this thread's CPU time (time.process_time - time.thread_time)."""
import time

import pytest

import attend


def test_setting():
    attend.set_threads(3)
    assert attend.threads() == 3
    attend.set_threads(1)
    assert attend.threads() == 1
    attend.set_threads(0)
    assert attend.threads() >= 1


@pytest.mark.parametrize("bad", [-1, 1025, 2**40])
def test_bad_count(bad):
    with pytest.raises(attend.AttendError) as e:
        attend.set_threads(bad)
    assert "1..1024" in e.value.message


@pytest.mark.parametrize("bad", ["2", 2.0, None, True])
def test_bad_type(bad):
    with pytest.raises(attend.AttendError):
        attend.set_threads(bad)


def test_idle_workers_use_no_cpu():
    attend.set_threads(2)
    try:
        m = attend.train(task="reverse", symbols=10, min_len=10, max_len=20, count=512, dev_count=8, emb=32,
                         hidden=64, attn=64, dec_hidden=64, batch=64, steps=3, seed=2)
        worst = 0.0
        for _ in range(10):
            m.greedy(["abcdefghij" * 2] * 64)  # a batch large enough for two threads
            p0, t0, w0 = time.process_time(), time.thread_time(), time.monotonic()
            x = 0
            while time.monotonic() - w0 < 0.02:  # Python's own work: 20 ms
                x += 1
            others = (time.process_time() - p0) - (time.thread_time() - t0)
            worst = max(worst, others)
        print("worst 20 ms window: other threads used %.3f ms of CPU" % (worst * 1e3))
        assert worst < 1e-3, "idle library threads used %.3f ms of CPU while Python computed" % (worst * 1e3)
    finally:
        attend.set_threads(0)
