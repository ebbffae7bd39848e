"""The same dataset whatever the engine: in process, a pool of processes, and a real Dask cluster
(``dask scheduler`` + two ``dask worker`` processes on 127.0.0.1, started and stopped here), even
when a worker is killed in the middle of the run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchmarks.bench_export import repeat_capture
from godot_dissect.dataset.layout import is_temp

distributed = pytest.importorskip("distributed", reason="the `test` extra installs dask[distributed]")

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").rglob("*.pcap*"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "godot_dissect", *args], capture_output=True, text=True,
                          cwd=ROOT, env=ENV, timeout=600)


class Cluster:
    """A scheduler and two single-threaded workers without nannies (a killed worker stays dead)."""

    def __init__(self, tmp: Path) -> None:
        self.file = tmp / "scheduler.json"
        common = ["--dashboard-address", "127.0.0.1:0"]
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
             "--scheduler-file", str(self.file), *common], env=ENV, cwd=tmp,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.workers = [subprocess.Popen(
            [sys.executable, "-m", "dask", "worker", "--scheduler-file", str(self.file), "--host", "127.0.0.1",
             "--nthreads", "1", "--no-nanny", "--name", f"w{i}", "--memory-limit", "0", *common],
            env=ENV, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(2)]
        self.client = distributed.Client(scheduler_file=str(self.file), timeout=60)
        self.client.wait_for_workers(2, timeout=60)
        self.address = self.client.scheduler.address

    def stop(self) -> None:
        self.client.close()
        for p in (*self.workers, self.scheduler):
            if p.poll() is None:
                p.terminate()
        for p in (*self.workers, self.scheduler):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.stop()


def _parts(out: Path) -> dict[str, object]:
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert not [p for p in files if is_temp(p.name)]
    return {str(p.relative_to(out)): pq.read_table(p) for p in files}


def _same(a: dict[str, object], b: dict[str, object]) -> None:
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k].equals(b[k]), k  # type: ignore[attr-defined]


def test_serial_pool_and_dask_give_identical_rows(tmp_path: Path, cluster: Cluster) -> None:
    """Every committed capture, plus a cut capture and a text file: each engine converts the good ones
    to the same rows and reports each bad one by name with its reason."""
    cut = CAPTURES[0].read_bytes()
    (tmp_path / "cut.pcapng").write_bytes(cut[:len(cut) // 2])
    (tmp_path / "notes.txt").write_text("not a capture\n")
    args = [str(p) for p in CAPTURES] + [str(tmp_path / "cut.pcapng"), str(tmp_path / "notes.txt")]
    reports = {}
    for name, extra in (("serial", ["--workers", "1"]), ("pool", ["--workers", "2"]),
                        ("dask", ["--scheduler", cluster.address])):
        r = cli("export", *args, "-o", str(tmp_path / name), *extra)
        assert r.returncode == 1, (name, r.stderr)
        assert f"{len(CAPTURES)} of {len(args)} captures exported" in r.stderr and "2 failed" in r.stderr
        reports[name] = sorted(line for line in r.stderr.splitlines() if line.startswith("godot-dissect: /"))
    assert len(reports["serial"]) == 2
    assert "cut.pcapng" in reports["serial"][0] and "notes.txt" in reports["serial"][1]
    assert reports["pool"] == reports["serial"] and reports["dask"] == reports["serial"]
    serial = _parts(tmp_path / "serial")
    assert len(serial) == len(CAPTURES)
    _same(serial, _parts(tmp_path / "pool"))
    _same(serial, _parts(tmp_path / "dask"))


def test_killing_a_worker_mid_run_still_converts_every_file_once(tmp_path: Path, cluster: Cluster) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    repeat_capture(ROOT / "captures" / "godot3-udp-all-types.pcapng", inputs / "big-0.pcap", 150)
    for i in range(1, 8):
        (inputs / f"big-{i}.pcap").write_bytes((inputs / "big-0.pcap").read_bytes())
    captures = sorted(map(str, inputs.iterdir()))
    r = cli("export", captures[0], "-o", str(tmp_path / "serial"), "--workers", "1")
    assert r.returncode == 0, r.stderr
    expected = next(iter(_parts(tmp_path / "serial").values()))
    assert expected.num_rows == 150 * 68  # 68 datagrams the engine sent, each copy read once

    out = tmp_path / "dask"
    export = subprocess.Popen([sys.executable, "-m", "godot_dissect", "export", *captures, "-o", str(out),
                               "--scheduler", cluster.address], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    victim = None
    deadline = time.monotonic() + 120
    while victim is None and time.monotonic() < deadline and export.poll() is None:
        info = cluster.client.scheduler_info()["workers"]
        for address, keys in cluster.client.processing().items():
            if any(str(k).startswith("convert-") for k in keys):
                victim = cluster.workers[int(info[address]["name"][1:])]  # our process named w0 or w1
                break
        time.sleep(0.02)
    assert victim is not None, "no worker was ever seen converting a capture"
    victim.send_signal(signal.SIGKILL)  # a worker this test started, while it holds a conversion task
    stdout, stderr = export.communicate(timeout=600)
    assert export.returncode == 0, stderr
    assert "8 of 8 captures exported" in stderr
    parts = _parts(out)
    assert sorted(parts) == [f"capture=big-{i}.pcap/part-0.parquet" for i in range(8)]
    for table in parts.values():  # every file whole, none twice
        assert table.equals(expected)  # type: ignore[attr-defined]
    assert len(cluster.client.scheduler_info()["workers"]) == 1
