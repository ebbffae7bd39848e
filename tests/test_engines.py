"""The engine oracle against real engines: Godot 3.2.3 (godot3-server) and Godot 4.6 (web build).

Every expected value here is an observed engine fact (see shared reference variant-format.md §13).
Each engine runs a handful of times per session (module-scoped fixtures); an engine that cannot be
installed is skipped, except under CI (or GODOT_DISSECT_REQUIRE_ENGINES=1), where that is a failure.
"""

from __future__ import annotations

import os

import pytest

from godot_dissect import decode, to_text
from godot_dissect.codec import fast as _fast
from godot_dissect.engines import (
    DecodeCase,
    EncodeCase,
    Engine,
    EngineUnavailable,
    ProbeResult,
    ensure_installed,
    get_engine,
)
from godot_dissect.engines.protocol import case_function, error_code_from_messages

ERR_UNAVAILABLE, ERR_UNAUTHORIZED, ERR_OUT_OF_MEMORY, ERR_FILE_EOF, ERR_INVALID_DATA = 2, 4, 6, 18, 30
N_BULK = 1000  # small decode cases in the main probe, to exercise the protocol at some scale


def h(s: str) -> bytes:
    return bytes.fromhex(s.replace(" ", ""))


def _engine(name: str) -> Engine:
    try:
        ensure_installed(name)
        return get_engine(name)
    except EngineUnavailable as e:
        if os.environ.get("CI") or os.environ.get("GODOT_DISSECT_REQUIRE_ENGINES"):
            pytest.fail(f"{name} must be available here (run scripts/install-engines.sh): {e.reason}")
        pytest.skip(f"{name} unavailable: {e.reason}")


def _bulk(n: int) -> list[DecodeCase]:
    return [DecodeCase(h("02000000") + i.to_bytes(4, "little")) for i in range(n)]


# --- Godot 3.2.3 ---------------------------------------------------------------------------------

G3_ENCODE = [
    EncodeCase("str_abc", '"abc"'),
    EncodeCase("vector2", "Vector2(1, 2)"),
    EncodeCase("int_2p31", "2147483648"),
    EncodeCase("float_0_1", "0.1"),
    EncodeCase("array", '[1, "x"]'),
    EncodeCase("pool_bytes", "PoolByteArray([1, 2, 3])"),
    EncodeCase("dict", "d", setup='var d = {}\nfor k in ["a"]:\n\td[k] = 1'),
    EncodeCase("reference", "Reference.new()"),
]
G3_DECODE = [
    DecodeCase(h("ff000000")),
    DecodeCase(h("0400000008000000610000")),
    DecodeCase(h("1100000000000000")),
    DecodeCase(h("0200000001000000")),
    DecodeCase(h("1100000000000000"), allow_objects=True),
    DecodeCase(h("11000000 03000000 58595a00 00000000"), allow_objects=True),  # class "XYZ"
    DecodeCase(h("13000000 01000080 02000000 07000000")),  # bit 31 of the count is ignored
    DecodeCase(b""),
    DecodeCase(h("04000000 02000000 fffe0000")),  # invalid UTF-8
    DecodeCase(h("13000000 01000000 ff000000")),  # bad element inside an array
    *_bulk(N_BULK),
]


@pytest.fixture(scope="module")
def g3() -> Engine:
    return _engine("godot3")


@pytest.fixture(scope="module")
def g3_res(g3: Engine) -> ProbeResult:
    return g3.probe(encode=G3_ENCODE, decode=G3_DECODE)


def test_g3_version(g3: Engine, g3_res: ProbeResult) -> None:
    assert g3.version.startswith("3.2.3.stable")
    assert g3_res.version == g3.version
    assert g3_res.runs == 1


def test_g3_encode_bytes(g3_res: ProbeResult) -> None:
    enc = g3_res.encoded
    assert enc["str_abc"].data == h("04000000 03000000 61626300")
    assert enc["vector2"].data == h("05000000 0000803f 00000040")
    assert enc["int_2p31"].data == h("02000100 00000080 00000000")
    assert enc["float_0_1"].data == h("03000100 9a999999 9999b93f")
    assert enc["array"].data == h("13000000 02000000 02000000 01000000 04000000 01000000 78000000")
    assert enc["pool_bytes"].data == h("14000000 03000000 01020300")
    assert all(r.ok and r.messages == () for r in enc.values())


def test_g3_encode_text_and_type(g3_res: ProbeResult) -> None:
    enc = g3_res.encoded
    assert enc["vector2"].text == "Vector2( 1, 2 )"
    assert enc["vector2"].type_id == 5
    assert enc["dict"].text == '{\n"a": 1\n}'  # setup with a nested block; newlines survive
    assert enc["dict"].type_id == 18


def test_g3_encode_full_objects(g3_res: ProbeResult) -> None:
    ref = g3_res.encoded["reference"]
    assert ref.type_id == 17
    assert ref.data is not None and ref.data[:4] == h("11000100")  # as object id
    assert ref.data_full == h("11000000 09000000") + b"Reference\0\0\0" + h("01000000 06000000") + (
        b"script\0\0" + h("00000000")
    )


def test_g3_decode_errors(g3_res: ProbeResult) -> None:
    d = g3_res.decoded
    assert [(x.ok, x.error) for x in d[:3]] == [
        (False, ERR_INVALID_DATA),
        (False, ERR_FILE_EOF),
        (False, ERR_UNAUTHORIZED),
    ]
    assert (d[5].ok, d[5].error) == (False, ERR_UNAVAILABLE)  # from the message, not a code
    assert (d[7].ok, d[7].error) == (False, ERR_INVALID_DATA)
    assert (d[8].ok, d[8].error) == (False, ERR_INVALID_DATA)
    assert (d[9].ok, d[9].error) == (False, ERR_INVALID_DATA)
    assert all(x.text is None and x.reencoded is None for x in d if not x.ok)


def test_g3_decode_values(g3_res: ProbeResult) -> None:
    d = g3_res.decoded
    assert (d[3].ok, d[3].error, d[3].text, d[3].type_id) == (True, 0, "1", 2)
    assert d[3].reencoded == h("0200000001000000")
    assert d[3].used is None  # Godot 3 does not tell
    assert (d[4].ok, d[4].type_id, d[4].text) == (True, 17, "null")  # a null full object
    assert (d[6].text, d[6].reencoded) == ("[ 7 ]", h("13000000 01000000 02000000 07000000"))


def test_g3_bulk(g3_res: ProbeResult) -> None:
    bulk = g3_res.decoded[-N_BULK:]
    assert [x.text for x in bulk] == [str(i) for i in range(N_BULK)]
    assert [x.index for x in g3_res.decoded] == list(range(len(G3_DECODE)))


def test_g3_isolation_and_crash(g3: Engine) -> None:
    # 3.2.3 has no recursion limit: 200000 nested arrays overflow the stack and kill the engine.
    deep = h("13000000 01000000") * 200_000 + h("00000000")
    res = g3.probe(
        encode=[
            EncodeCase("before", "1"),
            EncodeCase("syntax", "Vector2(1,"),
            EncodeCase("runtime", "a[5]", setup="var a = [1]"),
            EncodeCase("after", "2"),
        ],
        decode=[DecodeCase(h("0200000001000000")), DecodeCase(deep), DecodeCase(h("0200000002000000"))],
    )
    enc = res.encoded
    assert [enc[n].error for n in ("before", "syntax", "runtime", "after")] == [None, "compile", "runtime", None]
    assert enc["after"].data == h("0200000002000000")
    assert any("Invalid get index" in m for m in enc["runtime"].messages)
    d = res.decoded
    assert (d[0].text, d[1].crashed, d[1].ok, d[2].text) == ("1", True, False, "2")
    assert res.runs == 2


# --- Godot 4.6 -----------------------------------------------------------------------------------

G4_ENCODE = [
    EncodeCase("vector2i", "Vector2i(1, -2)"),
    EncodeCase("vector2", "Vector2(1, 2)"),
    EncodeCase("str_abc", '"abc"'),
    EncodeCase("string_name", '&"abc"'),
    EncodeCase("pi64", "PackedInt64Array([1])"),
    EncodeCase("typed_array", "a", setup='var a: Array[String] = ["a"]'),
    EncodeCase("typed_dict", "d", setup='var d: Dictionary[String, int] = {}\nfor k in ["a"]:\n\td[k] = 1'),
]
DEEP_4 = h("1c000000 01000000") * 2000 + h("00000000")  # beyond MAX_RECURSION_DEPTH (1024)
_F32 = {"inf": "0000807f", "-inf": "000080ff", "nan": "0000c07f", "3e9": "5ed0324f", "-3e9": "5ed032cf",
        "2.7": "cdcc2c40", "-2.7": "cdcc2cc0", "0": "00000000", "1": "0000803f"}
_F64 = {"inf": "000000000000f07f", "-inf": "000000000000f0ff", "nan": "000000000000f87f"}
# typed Arrays whose elements the engine converts from floats out of the integer range (was a crash of
# every reader: float infinity to int); header typed-builtin, element type, count 1, then the element
TYPED_FROM_FLOATS = {
    "1c000100 08000000 01000000 07000000" + _F32["inf"] + _F32["0"] + _F32["1"] + _F32["1"]:
        "Array[Rect2i]([Rect2i(2147483647, 0, 1, 1)])",
    "1c000100 08000000 01000000 07000000" + _F32["nan"] + _F32["-inf"] + _F32["3e9"] + _F32["-3e9"]:
        "Array[Rect2i]([Rect2i(0, -2147483648, 2147483647, -2147483648)])",
    "1c000100 0a000000 01000000 09000000" + _F32["inf"] + _F32["-inf"] + _F32["nan"]:
        "Array[Vector3i]([Vector3i(2147483647, -2147483648, 0)])",
    "1c000100 0d000000 01000000 0c000000" + _F32["3e9"] + _F32["-3e9"] + _F32["2.7"] + _F32["-2.7"]:
        "Array[Vector4i]([Vector4i(2147483647, -2147483648, 2, -2)])",
    "1c000100 02000000 01000000 03000100" + _F64["inf"]: "Array[int]([9223372036854775807])",
    "1c000100 02000000 01000000 03000100" + _F64["-inf"]: "Array[int]([-9223372036854775808])",
    "1c000100 02000000 01000000 03000100" + _F64["nan"]: "Array[int]([0])",
}
G4_DECODE = [
    DecodeCase(h("ff000000")),
    DecodeCase(h("0400000008000000610000")),
    DecodeCase(h("1800000000000000")),  # full Object (id 24 in 4.x) without allow_objects
    DecodeCase(h("0200000001000000")),
    DecodeCase(h("0200000001000000 09090909")),  # trailing bytes are ignored
    DecodeCase(b""),
    DecodeCase(h("1c000000 01000000 ff000000")),
    DecodeCase(DEEP_4),
    DecodeCase(h("1800000000000000"), allow_objects=True),
    *(DecodeCase(h(x)) for x in TYPED_FROM_FLOATS),
    *_bulk(N_BULK),
]


@pytest.fixture(scope="module")
def g4() -> Engine:
    return _engine("godot4")


@pytest.fixture(scope="module")
def g4_res(g4: Engine) -> ProbeResult:
    return g4.probe(encode=G4_ENCODE, decode=G4_DECODE)


def test_g4_version(g4: Engine, g4_res: ProbeResult) -> None:
    assert g4.version.startswith("4.")
    assert g4_res.version == g4.version
    assert g4_res.runs == 1


def test_g4_encode_bytes(g4_res: ProbeResult) -> None:
    enc = g4_res.encoded
    assert enc["vector2i"].data == h("06000000 01000000 feffffff")
    assert enc["vector2"].data == h("05000000 0000803f 00000040")
    assert enc["str_abc"].data == h("04000000 03000000 61626300")
    assert enc["string_name"].data == h("15000000 03000000 61626300")
    assert enc["pi64"].data == h("1f000000 01000000 01000000 00000000")
    assert enc["typed_array"].data == h("1c000100 04000000 01000000 04000000 01000000 61000000")
    assert enc["typed_dict"].data == h(
        "1b000500 04000000 02000000 01000000 04000000 01000000 61000000 02000000 01000000"
    )
    assert enc["vector2i"].data_full == enc["vector2i"].data


def test_g4_encode_text_and_type(g4_res: ProbeResult) -> None:
    enc = g4_res.encoded
    assert enc["vector2"].text == "Vector2(1, 2)"
    assert enc["vector2i"].type_id == 6
    assert enc["string_name"].text == '&"abc"'
    assert enc["typed_dict"].text == 'Dictionary[String, int]({\n"a": 1\n})'
    assert enc["typed_dict"].type_id == 27


def test_g4_decode_errors(g4_res: ProbeResult) -> None:
    d = g4_res.decoded
    assert [(x.ok, x.error) for x in d[:3]] == [
        (False, ERR_INVALID_DATA),
        (False, ERR_FILE_EOF),
        (False, ERR_UNAUTHORIZED),
    ]
    assert (d[5].ok, d[5].error) == (False, ERR_INVALID_DATA)
    assert (d[6].ok, d[6].error) == (False, ERR_INVALID_DATA)
    assert (d[7].ok, d[7].error) == (False, ERR_OUT_OF_MEMORY)  # "Variant is too deep"
    assert all(x.used is None and x.reencoded is None for x in d if not x.ok)


def test_g4_decode_values(g4_res: ProbeResult) -> None:
    d = g4_res.decoded
    assert (d[3].ok, d[3].error, d[3].text, d[3].type_id, d[3].used) == (True, 0, "1", 2, 8)
    assert d[3].reencoded == h("0200000001000000")
    assert (d[4].ok, d[4].used) == (True, 8)
    assert (d[8].ok, d[8].type_id, d[8].text, d[8].used) == (True, 24, "null", 8)


def test_g4_typed_arrays_convert_floats_as_the_engine(g4_res: ProbeResult) -> None:
    start = len(G4_DECODE) - N_BULK - len(TYPED_FROM_FLOATS)
    engine = g4_res.decoded[start:start + len(TYPED_FROM_FLOATS)]
    assert [x.text for x in engine] == list(TYPED_FROM_FLOATS.values())  # what Godot 4.6 printed
    for pure in (False, True):
        with pytest.MonkeyPatch.context() as m:
            if pure:
                m.setattr(_fast, "fast_decode_prefix", None)
            for data, x in zip(TYPED_FROM_FLOATS, engine, strict=True):
                assert to_text(decode(h(data), "godot4"), "godot4") == x.text


def test_g4_bulk(g4_res: ProbeResult) -> None:
    bulk = g4_res.decoded[-N_BULK:]
    assert [x.text for x in bulk] == [str(i) for i in range(N_BULK)]
    assert all(x.used == 8 for x in bulk)


def test_g4_compile_isolation(g4: Engine) -> None:
    res = g4.probe(encode=[EncodeCase("before", "1"), EncodeCase("syntax", "Vector2(1,"), EncodeCase("after", "2")])
    enc = res.encoded
    assert [enc[n].error for n in ("before", "syntax", "after")] == [None, "compile", None]
    assert enc["after"].data == h("0200000002000000")
    assert res.runs == 1


# --- engine-free parts ---------------------------------------------------------------------------


def test_case_function_layout() -> None:
    src = case_function(3, EncodeCase("x", "a", setup="var a = []\nfor i in 2:\n\ta.append(i)"))
    assert src == "func c3():\n\tvar a = []\n\tfor i in 2:\n\t\ta.append(i)\n\treturn [a]\n"
    with pytest.raises(ValueError):
        case_function(0, EncodeCase("x", "1 +\n2"))


def test_error_code_from_messages() -> None:
    assert error_code_from_messages(['ERROR: Condition "len < 4" is true. Returning: ERR_INVALID_DATA']) == 30
    assert error_code_from_messages(["ERROR: decode_variant: Condition x. Returned: ERR_FILE_EOF"]) == 18
    assert error_code_from_messages(["ERROR: Variant is too deep. Bailing."]) == 6
    assert error_code_from_messages(["ERROR: Error when trying to decode Variant."]) is None
