"""Datasets (issue 12): the Arrow schema against the records, Parquet against the JSON lines,
DuckDB/pandas/Polars over an exported folder, bad input beside good captures."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import godot_dissect
from godot_dissect.dataset import COLUMNS, SCHEMA, row_to_json, to_arrow
from godot_dissect.dataset.layout import is_temp
from godot_dissect.dataset.schema import FILE_SCHEMA, json_key
from godot_dissect.pcap.reader import read_pcap

from .strategies import values

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted((ROOT / "captures").rglob("*.pcap*"))


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "godot_dissect", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dataset") / "out"
    r = cli("export", *map(str, CAPTURES), "-o", str(out), "--workers", "1")
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_column_against_to_json(capture: Path) -> None:
    records = [r.to_json() for r in read_pcap(str(capture))]
    batches = list(to_arrow(str(capture), batch_rows=7))  # small batches: the cut must not lose a row
    assert all(b.schema == SCHEMA for b in batches)
    rows = pa.Table.from_batches(batches).to_pylist()
    assert len(rows) == len(records)
    for row, rec in zip(rows, records, strict=True):
        assert row["capture"] == capture.name
        assert row_to_json(row) == rec  # every JSON key has its column, nothing else is filled
        for c in COLUMNS:  # a column the record's kind does not use stays null
            if c.name != "capture" and json_key(c, rec["kind"]) is None:
                assert row[c.name] is None, (c.name, rec)
        if rec["kind"] == "rset":  # the property lands in `name`, not `method`
            assert row["name"] == rec["method"] and row["method"] is None


def test_every_json_key_of_the_captures_has_a_column() -> None:
    keys = {k for p in CAPTURES for r in read_pcap(str(p)) for k in r.to_json()}
    assert keys <= {c.key for c in COLUMNS}


def test_parquet_rows_equal_the_jsonl_records(exported: Path) -> None:
    for capture in CAPTURES:
        r = cli("read", str(capture), "--format", "jsonl")
        assert r.returncode == 0, r.stderr
        lines = [json.loads(line) for line in r.stdout.splitlines()]
        part = exported / f"capture={capture.name}" / "part-0.parquet"
        table = pq.read_table(part)
        assert table.schema == FILE_SCHEMA
        rows = table.to_pylist()
        assert len(rows) == len(lines) > 0
        for row, line in zip(rows, lines, strict=True):
            assert row_to_json({**row, "capture": capture.name}) == line


def test_duckdb_aggregate_equals_a_python_count(exported: Path) -> None:
    counts: collections.Counter = collections.Counter()
    sizes: collections.Counter = collections.Counter()
    for p in CAPTURES:
        for rec in read_pcap(str(p)):
            counts[p.name, rec.kind, rec.type] += 1
            sizes[p.name, rec.kind, rec.type] += len(rec.raw)
    sql = "SELECT capture, kind, type, count(*) AS n, sum(length) AS bytes FROM messages GROUP BY ALL"
    r = cli("query", str(exported), sql, "--format", "json")
    assert r.returncode == 0, r.stderr
    got = {(d["capture"], d["kind"], d["type"]): (d["n"], d["bytes"]) for d in json.loads(r.stdout)}
    assert got == {k: (n, sizes[k]) for k, n in counts.items()}


def test_all_types_capture_matches_what_the_engine_printed(exported: Path) -> None:
    """Ground truth: Godot 3.2.3's own type names and var2str texts of every datagram it sent."""
    golden = [json.loads(line) for line in (ROOT / "captures" / "godot3-udp-all-types.golden.jsonl").open()]
    rel = godot_dissect.to_duckdb(str(exported))
    rows = rel.filter("capture = 'godot3-udp-all-types.pcapng'").select("type, text").fetchall()
    assert collections.Counter(rows) == collections.Counter((g["type_name"], g["text"]) for g in golden)


def test_pandas_polars_duckdb_read_the_folder_as_one_table(exported: Path) -> None:
    total = sum(1 for p in CAPTURES for _ in read_pcap(str(p)))
    df = pd.read_parquet(exported)
    assert len(df) == total and set(df["capture"].astype(str)) == {p.name for p in CAPTURES}
    assert len(godot_dissect.to_pandas(str(exported))) == total
    pl_df = godot_dissect.to_polars(str(exported))
    assert pl_df.height == total and set(pl_df["capture"].to_list()) == {p.name for p in CAPTURES}
    con = duckdb.connect()
    n = con.sql(f"SELECT count(*) FROM read_parquet('{exported}/*/*.parquet', hive_partitioning = true)").fetchall()
    assert n == [(total,)]
    one = CAPTURES[0]  # a capture read on the fly gives the rows the dataset holds for it
    live = godot_dissect.to_pandas(str(one))
    stored = df[df["capture"].astype(str) == one.name].reset_index(drop=True)
    for col in ("frame", "time", "kind", "type", "text", "value"):
        assert live[col].tolist() == stored[col].tolist(), col


def test_query_a_capture_on_the_fly_as_table_and_csv() -> None:
    cap = str(ROOT / "captures" / "godot3-enet-multiplayer.pcapng")
    sql = "SELECT kind, node, method, name, count(*) AS n FROM messages WHERE kind IN ('rpc', 'rset') GROUP BY ALL"
    r = cli("query", cap, sql, "--format", "csv")
    assert r.returncode == 0, r.stderr
    expected = collections.Counter((rec.kind, rec.node or "", rec.method if rec.kind == "rpc" else "",
                                    rec.method if rec.kind == "rset" else "")
                                   for rec in read_pcap(cap) if rec.kind in ("rpc", "rset"))
    lines = r.stdout.splitlines()
    assert lines[0] == "kind,node,method,name,n"
    got = {tuple(line.split(",")[:4]): int(line.split(",")[4]) for line in lines[1:]}
    assert got == dict(expected)
    table = cli("query", cap, sql)
    assert table.returncode == 0 and "Main/World/Players/Host" in table.stdout


def test_csv_and_jsonl_exports(tmp_path: Path) -> None:
    cap = ROOT / "captures" / "godot3-debugger.pcapng"
    for fmt in ("csv", "jsonl"):
        r = cli("export", str(cap), "-o", str(tmp_path / fmt), "--format", fmt)
        assert r.returncode == 0, r.stderr
    read = cli("read", str(cap), "--format", "jsonl").stdout
    assert (tmp_path / "jsonl" / f"capture={cap.name}" / "part-0.jsonl").read_text() == read
    csv = pd.read_csv(tmp_path / "csv" / f"capture={cap.name}" / "part-0.csv")
    assert list(csv.columns) == FILE_SCHEMA.names
    assert list(csv["message"]) == [json.loads(line)["message"] for line in read.splitlines()]


def test_parquet_compression_is_an_option(exported: Path, tmp_path: Path) -> None:
    """``--compression``: the file's column chunks use that codec (snappy by default), the rows are the same."""
    cap = ROOT / "captures" / "godot3-udp-all-types.pcapng"
    part = f"capture={cap.name}/part-0.parquet"
    r = cli("export", str(cap), "-o", str(tmp_path), "--compression", "zstd")
    assert r.returncode == 0, r.stderr
    for folder, codec in ((exported, "SNAPPY"), (tmp_path, "ZSTD")):
        meta = pq.ParquetFile(folder / part).metadata
        assert {meta.row_group(g).column(c).compression for g in range(meta.num_row_groups)
                for c in range(meta.num_columns)} == {codec}
    assert pq.read_table(tmp_path / part).equals(pq.read_table(exported / part))


def test_query_reads_csv_jsonl_and_mixed_datasets(exported: Path, tmp_path: Path) -> None:
    """`query` over a dataset exported as CSV or JSONL gives the Parquet dataset's rows, and sources of
    every kind mix: a dataset folder, a lone part file, a capture read on the fly."""
    for fmt in ("csv", "jsonl"):
        r = cli("export", *map(str, CAPTURES), "-o", str(tmp_path / fmt), "--format", fmt, "--workers", "1")
        assert r.returncode == 0, r.stderr
    order = ", ".join(f'"{c}"' for c in ("capture", *SCHEMA.names))  # every column: ties cannot come in any order
    stored = godot_dissect.to_duckdb(str(exported), duckdb.connect()).order(order).fetchall()
    assert len(stored) == sum(1 for p in CAPTURES for _ in read_pcap(str(p)))
    for fmt in ("csv", "jsonl"):
        rel = godot_dissect.to_duckdb(str(tmp_path / fmt), duckdb.connect())
        assert rel.columns == SCHEMA.names
        assert rel.order(order).fetchall() == stored, fmt  # every column, nulls and "" apart
        sql = "SELECT capture, kind, count(*) AS n, sum(length) AS bytes FROM messages GROUP BY ALL ORDER BY ALL"
        assert cli("query", str(tmp_path / fmt), sql, "--format", "json").stdout == \
            cli("query", str(exported), sql, "--format", "json").stdout
    one = CAPTURES[0]
    sources = [str(tmp_path / "jsonl"), str(tmp_path / "csv" / f"capture={one.name}" / "part-0.csv"), str(one)]
    r = cli("query", *sources, "SELECT capture, count(*) AS n FROM messages GROUP BY ALL", "--format", "json")
    assert r.returncode == 0, r.stderr
    per_capture = collections.Counter(row[-1] for row in stored)
    expected = {p.name: per_capture[p.name] for p in CAPTURES}
    expected[one.name] *= 3  # its JSONL part, its CSV part and the capture itself
    assert {d["capture"]: d["n"] for d in json.loads(r.stdout)} == expected
    assert len(godot_dissect.to_pandas(str(tmp_path / "jsonl"))) == len(stored)
    assert godot_dissect.to_polars(str(tmp_path / "csv")).height == len(stored)


@pytest.mark.parametrize(("line", "reason"), [
    ("not json", "Expecting value"),
    ('{"frame": 1}', "not a record"),
    ('{"kind": "variant", "frame": "x"}', "convert 'x'"),
    pytest.param("[" * 100_000 + "]" * 100_000, "nested deeper", id="deep"),  # once a RecursionError traceback
])
def test_query_a_bad_jsonl_part_is_one_clear_line(tmp_path: Path, line: str, reason: str) -> None:
    part = tmp_path / "capture=x.pcap" / "part-0.jsonl"
    part.parent.mkdir()
    part.write_text(line + "\n")
    r = cli("query", str(tmp_path), "SELECT count(*) FROM messages")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert str(part) in r.stderr and reason in r.stderr


def test_a_new_export_replaces_the_capture_part_in_another_format(tmp_path: Path) -> None:
    cap = ROOT / "captures" / "godot3-debugger.pcapng"
    for fmt in ("parquet", "csv"):
        assert cli("export", str(cap), "-o", str(tmp_path), "--format", fmt).returncode == 0
    assert [p.name for p in (tmp_path / f"capture={cap.name}").iterdir()] == ["part-0.csv"]
    r = cli("query", str(tmp_path), "SELECT count(*) AS n FROM messages", "--format", "csv")
    assert r.stdout.split() == ["n", str(sum(1 for _ in read_pcap(str(cap))))]


def test_bad_files_beside_good_ones(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    good = [ROOT / "captures" / "godot3-tcp-stream.pcapng", ROOT / "captures" / "godot4-websocket-put-var.pcapng"]
    for g in good:
        (folder / g.name).write_bytes(g.read_bytes())
    cut = good[0].read_bytes()
    (folder / "cut.pcapng").write_bytes(cut[:len(cut) * 2 // 3])  # ends inside a packet block
    (folder / "notes.txt").write_text("not a capture\n")
    (folder / "empty.pcap").write_bytes(b"")
    out = tmp_path / "out"
    for workers in ("1", "2"):
        r = cli("export", *sorted(map(str, folder.iterdir())), "-o", str(out), "--workers", workers)
        assert r.returncode == 1
        err = r.stderr
        reason = {line.split(": ", 2)[1].rsplit("/", 1)[-1]: line.split(": ", 2)[2]
                  for line in err.splitlines() if line.startswith("godot-dissect: /")}
        assert "ends in the middle of a record" in reason["cut.pcapng"]  # each bad file by name, with why
        assert "pcap" in reason["notes.txt"] and "pcap" in reason["empty.pcap"]
        assert "2 of 5 captures exported" in err and "3 failed" in err
        assert sorted(p.name for p in out.iterdir()) == sorted(f"capture={g.name}" for g in good)
        leftovers = [p for p in out.rglob("*") if p.is_file() and (is_temp(p.name) or p.suffix != ".parquet")]
        assert leftovers == []
        for g in good:
            assert pq.read_table(out / f"capture={g.name}" / "part-0.parquet").num_rows == \
                sum(1 for _ in read_pcap(str(g)))


def test_pool_results_come_in_the_order_given(tmp_path: Path) -> None:
    """The pool starts the biggest captures first; the results still follow the paths given."""
    from godot_dissect.dataset.engines import export

    paths = sorted(map(str, CAPTURES), key=os.path.getsize)  # smallest first: the pool runs them the other way
    results = export(paths, str(tmp_path), workers=2)
    assert [r.path for r in results] == paths and all(r.ok for r in results)
    assert [r.rows for r in results] == [sum(1 for _ in read_pcap(p)) for p in paths]
    assert all(r.cpu_seconds > 0 and r.seconds >= r.cpu_seconds / 2 for r in results)


def test_pool_with_another_thread_alive_forks_from_a_fork_server(tmp_path: Path) -> None:
    """A process with a second thread (a progress bar, a server) must not fork itself: the pool then
    starts its workers from a fork server, and the parts are those of a serial run."""
    import threading

    from godot_dissect.dataset import engines
    from godot_dissect.dataset.engines import export

    paths = [str(p) for p in CAPTURES[:3]]
    export(paths, str(tmp_path / "serial"), workers=1)
    stop = threading.Event()
    alive = threading.Thread(target=stop.wait, daemon=True)
    alive.start()
    try:
        assert engines._pool_context().get_start_method() == "forkserver"
        results = export(paths, str(tmp_path / "pool"), workers=2)
    finally:
        stop.set()
        alive.join()
    assert all(r.ok for r in results)
    for p in paths:
        part = f"capture={os.path.basename(p)}/part-0.parquet"
        assert pq.read_table(tmp_path / "pool" / part).equals(pq.read_table(tmp_path / "serial" / part))


def test_same_file_name_twice_is_refused(tmp_path: Path) -> None:
    cap = ROOT / "captures" / "godot3-udp-all-types.pcapng"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / cap.name).write_bytes(cap.read_bytes())
    r = cli("export", str(cap), str(tmp_path / "b" / cap.name), "-o", str(tmp_path / "out"))
    assert r.returncode == 1 and "same file name" in r.stderr
    assert pq.read_table(tmp_path / "out" / f"capture={cap.name}" / "part-0.parquet").num_rows == 68


def test_capture_names_that_need_escaping(tmp_path: Path) -> None:
    name = "server 1=a%b.pcapng"
    (tmp_path / name).write_bytes((ROOT / "captures" / "godot3-udp-all-types.pcapng").read_bytes())
    r = cli("export", str(tmp_path / name), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert godot_dissect.to_duckdb(str(tmp_path / "out")).select("capture").distinct().fetchall() == [(name,)]
    assert set(pd.read_parquet(tmp_path / "out")["capture"].astype(str)) == {name}


def test_batches_are_bounded_and_streamed() -> None:
    cap = str(ROOT / "captures" / "godot3-tcp-stream.pcapng")
    sizes = [b.num_rows for b in to_arrow(cap, batch_rows=50)]
    assert sizes == [50, 50, 50, 26]
    with pytest.raises(ValueError):
        next(to_arrow(cap, batch_rows=0))


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text()
    return text[text.index("## Analysing many captures"):].split("\n## ", 1)[0]


def test_readme_schema_table_is_the_schema() -> None:
    from godot_dissect.dataset.schema import markdown_table

    assert markdown_table() in _readme_section()


def test_readme_queries_print_what_the_readme_shows(exported: Path) -> None:
    """Each `godot-dissect query godot-dataset "SQL"` example, run over the committed captures."""
    blocks = _readme_section().split("```")
    examples = 0
    for code, shown in zip(blocks[1::2], blocks[3::2], strict=False):
        if "godot-dissect query godot-dataset" not in code:
            continue
        sql = code.split('query godot-dataset "', 1)[1].rsplit('"', 1)[0].replace("\n", " ")
        r = cli("query", str(exported), sql, "--format", "csv")
        assert r.returncode == 0, r.stderr
        got = [line.split(",") for line in r.stdout.splitlines()]
        lines = [line.strip() for line in shown.splitlines() if line.strip()]
        assert [[c.strip() for c in line.split("  ") if c.strip()] for line in lines] == \
            [[c.strip() for c in row] for row in got], sql
        examples += 1
    assert examples == 3


def test_query_errors_are_one_clear_line(tmp_path: Path) -> None:
    r = cli("query", str(tmp_path / "missing.pcapng"), "SELECT count(*) FROM messages")
    assert r.returncode == 2 and r.stderr.strip().endswith("missing.pcapng: No such file or directory")
    assert len(r.stderr.strip().splitlines()) == 1
    r = cli("query", str(ROOT / "captures" / "godot3-debugger.pcapng"), "SELECT nope FROM messages")
    assert r.returncode == 2 and "nope" in r.stderr


def test_batches_are_cut_by_text_bytes_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A few huge values cannot make one batch hold the capture: text + value bytes cut it as well."""
    from godot_dissect.dataset import arrow

    cap = str(ROOT / "captures" / "godot4-websocket-put-var.pcapng")  # values up to tens of kB
    monkeypatch.setattr(arrow, "BATCH_TEXT_BYTES", 20_000)
    batches = list(to_arrow(cap, batch_rows=10_000))
    assert len(batches) > 1 and sum(b.num_rows for b in batches) == sum(1 for _ in read_pcap(cap))
    for b in batches[:-1]:  # each batch stops at the first row that passes the bound
        sizes = [len((t or "").encode()) + len((v or "").encode())  # UTF-8 bytes, as the columns hold them
                 for t, v in zip(b.column("text").to_pylist(), b.column("value").to_pylist(), strict=True)]
        assert sum(sizes) >= 20_000 > sum(sizes[:-1])


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_every_value_type_survives_the_value_column(dialect: str, data: st.DataObject) -> None:
    """Values of every type (the captures do not hold them all): the row gives back the record's JSON,
    and the value column's JSON form gives back the value itself."""
    from godot_dissect import jsonform
    from godot_dissect.dataset import record_batches
    from godot_dissect.records import Record

    vals = data.draw(st.lists(values(dialect), min_size=1, max_size=5))
    recs = [Record(frame=i + 1, time=1.5 + i / 7, src="127.0.0.1", sport=1, dst="127.0.0.1", dport=2,
                   transport="udp", direction="c2s", dialect=dialect, kind="variant", value=v)
            for i, v in enumerate(vals)]
    rows = pa.Table.from_batches(list(record_batches(recs, "x", batch_rows=2))).to_pylist()
    for row, rec, v in zip(rows, recs, vals, strict=True):
        assert row_to_json(row) == rec.to_json()
        back = jsonform.from_json(json.loads(row["value"]))
        assert jsonform.dumps(back) == jsonform.dumps(v)


@settings(max_examples=300, deadline=None)
@given(times=st.lists(st.one_of(
    st.floats(min_value=-3e9, max_value=3e9, allow_nan=False),  # past 2**51 microseconds both ways
    st.integers(0, 2**40).map(lambda k: 1.7e9 + k / 2**17),  # dyadic: exact halves of a microsecond
    st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 10**9 - 1)).map(lambda t: t[0] + t[1] / 1e9),  # pcapng ns
    st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 10**6 - 1)).map(lambda t: t[0] + t[1] / 1e6),  # pcap us
), min_size=1, max_size=20))
def test_time_column_is_the_json_time(times: list[float]) -> None:
    """The time column holds the microseconds of the JSON's round(time, 6), whatever the time."""
    from godot_dissect.dataset import record_batches
    from godot_dissect.records import Record

    recs = [Record(frame=1, time=t, src="127.0.0.1", sport=1, dst="127.0.0.1", dport=2, transport="udp",
                   direction="c2s", dialect="godot3", kind="variant", value=1) for t in times]
    batch = next(record_batches(recs))
    assert batch.column("time").cast(pa.int64()).to_pylist() == [round(round(t, 6) * 1e6) for t in times]
    assert [row_to_json(row)["time"] for row in batch.to_pylist()] == [r.to_json()["time"] for r in recs]


@pytest.mark.parametrize("capture", ["godot3-udp-all-types.pcapng", "godot4-websocket-put-var.pcapng"])
def test_a_body_row_is_the_row_of_its_record(capture: str) -> None:
    """``JsonWriter.variant_row`` (a Variant message's row from its bytes, no record) puts into its sink what
    makes the record's row, text and value bytes included; a body it does not write (cut inside its header)
    leaves the sink as it was and gets None (the reader then makes the record)."""
    from godot_dissect.dataset import arrow
    from godot_dissect.spec.transports import MAX_DEPTH

    recs = [r for r in read_pcap(str(ROOT / "captures" / capture)) if r.kind == "variant"]
    assert recs
    written = 0
    for rec in recs:
        by_body, by_record = arrow.new_sink(), arrow.new_sink()
        write = arrow.variant_row_writer(by_body, rec.dialect, MAX_DEPTH)
        assert write is not None
        arrow.record_rows(by_record)(rec)
        head = (rec.frame, rec.time, rec.src, rec.sport, rec.dst, rec.dport, rec.transport, rec.direction,
                rec.dialect, rec.offset, rec.wire_bytes)
        line = write(rec.raw, *head)
        if line is None:  # left to the record (a class not yet named, a value for the pure writers)
            assert by_body == arrow.new_sink()
            continue
        written += 1
        assert line == "" and by_body[:2] == by_record[:2] and len(by_body[2]) == 1
        assert write(rec.raw[:3], *head) is None and len(by_body[2]) == 1  # cut inside its header: nothing added
        assert by_body[:2] == by_record[:2]
        batches = [next(arrow.row_batches([""], sink, "x")) for sink in (by_body, by_record)]
        assert batches[0].equals(batches[1])
    assert written > len(recs) // 2


def test_error_records_have_null_text_and_value_beside_rows_that_have_them() -> None:
    """Error records (no text, no value) between Variant records, non-ASCII text too: each row's text and
    value are its own, the error rows' are null."""
    from godot_dissect.dataset import record_batches
    from godot_dissect.records import Record

    def rec(i: int, **kw: object) -> Record:
        return Record(frame=i, time=1.0 + i, src="127.0.0.1", sport=1, dst="127.0.0.1", dport=2, transport="udp",
                      direction="c2s", dialect="godot3", **kw)

    recs = [rec(1, kind="error", raw=b"\x05", error="offset 0: truncated"),
            rec(2, kind="variant", value="grüße ☃"), rec(3, kind="error", raw=b"\xff\xff", error="offset 1: bad type"),
            rec(4, kind="variant", value=[1, "x"]), rec(5, kind="error", raw=b"", error="offset 0: empty")]
    for batch_rows in (1, 2, 5):
        rows = pa.Table.from_batches(list(record_batches(recs, "x", batch_rows=batch_rows))).to_pylist()
        assert [row_to_json(row) for row in rows] == [r.to_json() for r in recs]
        assert [row["text"] is None for row in rows] == [True, False, True, False, True]


@pytest.mark.parametrize("fields", [
    {"peer_id": 7, "header": "3.2+", "ratio": 0.5, "ok": True, "none": None},  # plain: written as it is
    {"name": "lone \udc80 surrogate", "n": 1},
    {"ids": (1, 2, 3), "nested": {"a": [1, "x"]}},  # not plain: through the record's JSON head
    {"md5": b"\x00\xff", "n": 2},
])
def test_fields_column_is_the_json_fields(fields: dict) -> None:
    from godot_dissect.dataset import record_batches
    from godot_dissect.records import Record

    rec = Record(frame=1, time=1.0, src="127.0.0.1", sport=1, dst="127.0.0.1", dport=2, transport="udp",
                 direction="c2s", dialect="godot3", kind="variant", value=1, fields=fields)
    row = next(record_batches([rec])).to_pylist()[0]
    assert row_to_json(row) == rec.to_json()
    assert "\udc80" not in row["fields"]


def _dataset_copy(exported: Path, tmp_path: Path) -> Path:
    import shutil

    out = tmp_path / "ds"
    shutil.copytree(exported, out)
    return out


@pytest.mark.parametrize("part", ["garbage", "other_schema", "fifo"])
def test_query_a_foreign_part_is_one_clear_line_or_left_out(exported: Path, tmp_path: Path, part: str) -> None:
    """A dataset folder with something else named like a Parquet part: a file that is no Parquet, or a
    Parquet file of other columns (DuckDB reads it by position into ours) is one error line naming it; a
    FIFO (opening it would block forever) is not a part."""
    ds = _dataset_copy(exported, tmp_path)
    path = ds / "capture=foreign.pcapng" / "part-0.parquet"
    path.parent.mkdir()
    if part == "garbage":
        path.write_bytes(b"PAR1 and then not Parquet at all")
    elif part == "other_schema":
        pq.write_table(pa.table({"frame": [1, 2, 3], "time": [1.0, 2.0, 3.0]}), path)
    else:
        os.mkfifo(path)
    r = cli("query", str(ds), "SELECT count(*) AS n FROM messages", "--format", "csv")
    if part == "fifo":
        assert r.returncode == 0 and r.stdout.split() == cli("query", str(exported), "SELECT count(*) AS n FROM "
                                                             "messages", "--format", "csv").stdout.split()
    else:
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert str(path) in r.stderr and "not a" in r.stderr


def test_query_errors_while_fetching_are_one_line_and_results_stream(exported: Path) -> None:
    r = cli("query", str(exported), "SELECT 'a'::INTEGER AS x FROM messages")  # fails as rows are fetched
    assert r.returncode == 2 and r.stderr.startswith("godot-dissect: Conversion Error"), r.stderr
    assert "Traceback" not in r.stderr
    # json is written a row at a time, exactly as json.dump(rows, indent=1) writes the whole list
    sql = "SELECT frame, kind, text FROM messages ORDER BY capture, frame, \"offset\", kind, text LIMIT 25000"
    out = cli("query", str(exported), sql, "--format", "json").stdout
    with duckdb.connect() as con:
        from godot_dissect.dataset.frames import to_duckdb

        to_duckdb(str(exported), con).create_view("messages")
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        rows = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    assert len(rows) > 100 and out == json.dumps(rows, ensure_ascii=False, default=str, indent=1) + "\n"
    assert cli("query", str(exported), "SELECT 1 AS x WHERE false", "--format", "json").stdout == "[]\n"
    # the table draws MAX_DISPLAY_ROWS rows and says how many more there are
    from godot_dissect.spec.stats import MAX_DISPLAY_ROWS

    table = cli("query", str(exported), f"SELECT * FROM range({MAX_DISPLAY_ROWS + 7})").stdout
    assert f"│ {MAX_DISPLAY_ROWS - 1} " in table and f"│ {MAX_DISPLAY_ROWS} " not in table
    assert table.rstrip().endswith("7 more rows not drawn (MAX_DISPLAY_ROWS): --format csv or json prints every row")


def test_a_folder_is_the_captures_in_it(tmp_path: Path) -> None:
    """A studio's folder as one argument: captures in it and its subfolders are converted (each with the
    messages `read_pcap` gives it), hidden ones, other files and a link back up the tree are not taken;
    a folder with no capture is reported by name and the exit status says so."""
    studio = tmp_path / "studio"
    (studio / "server-2" / "day-1").mkdir(parents=True)
    (studio / ".trash").mkdir()
    picked = {studio / "a.pcapng": CAPTURES[0], studio / "server-2" / "day-1" / "b.pcap.gz": None,
              studio / "server-2" / "c.pcapng": CAPTURES[1]}
    import gzip
    enet = ROOT / "captures" / "godot3-enet-multiplayer.pcapng"
    for path, src in picked.items():
        path.write_bytes(src.read_bytes() if src is not None else gzip.compress(enet.read_bytes()))
    (studio / ".trash" / "old.pcapng").write_bytes(CAPTURES[0].read_bytes())
    (studio / "server-2" / "notes.txt").write_text("not a capture\n")
    os.symlink(studio, studio / "server-2" / "loop")  # os.walk does not follow it
    os.mkfifo(studio / "live.pcapng")  # opening it would wait for a writer
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("export", str(studio), str(empty), "-o", str(tmp_path / "out"), "--workers", "2")
    assert r.returncode == 1 and f"{empty}: no capture files in the folder" in r.stderr
    assert "3 of 4 captures exported" in r.stderr
    counts = dict(duckdb.sql(f"SELECT capture, count(*) FROM read_parquet('{tmp_path}/out/*/*.parquet', "
                             "hive_partitioning=true) GROUP BY capture").fetchall())
    expected = {p.name: sum(1 for _ in read_pcap(str(p))) for p in picked}
    assert counts == expected and all(expected.values())
