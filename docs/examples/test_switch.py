import pytest


@pytest.mark.parametrize("procs", [2, 4])
def test_switch(ctxbench, procs):
    r = ctxbench.ring([procs], size_kb=64, placement="single", max_time=0.05)
    assert r.work_verified.all()
