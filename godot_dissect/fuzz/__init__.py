"""Generation and mutation of Godot packets from the spec (fuzzer and malformed corpora)."""
