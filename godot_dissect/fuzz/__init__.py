"""Generation and mutation of Godot packets from the spec (fuzzer and malformed corpora).

- ``malformed.py`` / ``samples.py``: the deterministic malformed corpus the codec tests run on the engines;
- ``fields.py``: where the headers, counts, lengths and strings of encoded bytes are;
- ``generate.py``: random valid values of every type, deep nesting; ``mutate.py``: field-aware mutations;
- ``cases.py``: the seeded case generator (strategies, seeds from captures and text scenes);
- ``framing.py``, ``target.py``, ``process.py``, ``pcapout.py``: the wire, the target, its process, pcaps;
- ``campaign.py``: the fuzz loop, findings, ``replay``; ``minimise.py``; ``reproducer.py``;
- ``differential.py``: our decoder against Godot 3.2.3 / 4.6 on the same inputs.

See ``docs/fuzzing.md``.
"""
