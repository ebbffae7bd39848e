"""A layout kind's rule lives in its declared parts (``spec/layouts.py``): changing a part changes
the pure decoder, the fuzzer's field map and the scapy fields together, with no other edit."""

from __future__ import annotations

import struct

import pytest

from godot_dissect.codec.decoder import CompiledDecoder, decode
from godot_dissect.codec.kinds import TEXT
from godot_dissect.fuzz import fields as F
from godot_dissect.spec import get_dialect
from godot_dissect.spec import layouts as L
from godot_dissect.spec.kinds import kind_params


def _str(b: bytes) -> bytes:
    return struct.pack("<I", len(b)) + b + b"\0" * (-len(b) & 3)


def _legacy_path(dialect: str, n_strings: int) -> bytes:
    """A NodePath with one name, no subnames and the legacy-property flag, then ``n_strings`` parts."""
    np = L.NodePathLayout
    tid = get_dialect(dialect).by_key("NODE_PATH").id  # type: ignore[union-attr]
    head = struct.pack("<IIII", tid, np.new_format_bit | 1, 0, np.flag_legacy_property)
    return head + b"".join(_str(b"p%d" % i) for i in range(n_strings))


@pytest.mark.parametrize("dialect", ["godot3", "godot4"])
def test_nodepath_legacy_flag_reads_one_more_subname(dialect: str) -> None:
    """The engine's rule: the legacy property flag adds one subname (the malformed corpus's "legacy
    property flag" mutant is checked against the real engines in test_codec_engine.py)."""
    v = decode(_legacy_path(dialect, 2), dialect)
    assert v.names == ("p0",) and v.subnames == ("p1",)
    fm = F.field_map(_legacy_path(dialect, 2), dialect)
    assert fm.complete and len(fm.by_role(TEXT)) == 2


def test_nodepath_count_rule_is_the_spec_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """Change the rule in the spec only: the decoder and the field map follow it."""
    monkeypatch.setattr(L.NodePathLayout, "legacy_extra_subnames", 2)
    d = get_dialect("godot4")
    dec = CompiledDecoder(d)
    reader = dec.leaf[kind_params(d, "NODE_PATH").type_id]
    data = _legacy_path("godot4", 3)
    v, pos = reader(data, 4, len(data), 0)  # type: ignore[misc]
    assert v.names == ("p0",) and v.subnames == ("p1", "p2") and pos == len(data)
    fm = F.field_map(data, d)
    assert fm.complete and len(fm.by_role(TEXT)) == 3
