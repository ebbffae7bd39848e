"""From capture files to Godot messages: packets -> flows -> reassembly -> framing -> dialect ->
codec -> records. Each stage is one module; everything streams."""
