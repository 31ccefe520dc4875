"""Local workers: each gets the threads it is given, torch's and BLAS's alike (K workers each
running OpenBLAS on every core made one 400 x 70 QR of the rank sweep 75x slower under load)."""

from threadpoolctl import threadpool_info

from attnsvm.interfaces import executors


def test_a_local_worker_runs_blas_on_the_threads_it_is_given():
    ex = executors.local(2, 1)
    try:
        pools = ex.submit(threadpool_info).result(timeout=120)
    finally:
        ex.shutdown()
    assert pools and all(p["num_threads"] == 1 for p in pools), pools
