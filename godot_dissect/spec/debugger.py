"""Remote debugger message names (the first element of a debugger message), per engine family.

Source: ScriptDebuggerRemote (3.x) and RemoteDebugger/SceneDebugger (4.x); see the reference notes
on transports. The vocabulary is open: ``send_message()`` (3.x ``message:NAME``) and 4.x captures
(``PREFIX:NAME``) let a game add its own, so a name with a colon is always a valid filter value.
"""

from __future__ import annotations

#: 3.x game -> editor (what a game sends; the fuzzer's debugger framing wraps its cases in these)
GODOT3_TO_EDITOR = (
    "debug_enter", "debug_exit", "stack_dump", "stack_frame_vars", "output", "error", "performance",
    "profile_sig", "profile_frame", "profile_total", "network_profile", "network_bandwidth", "kill_me",
    "message:scene_tree", "message:inspect_object", "message:video_mem", "message:click_ctrl",
)

#: 3.x editor -> game
GODOT3_TO_GAME = (
    "get_stack_dump", "get_stack_frame_vars", "step", "next", "continue", "break", "request_scene_tree",
    "request_video_mem", "inspect_object", "set_object_property", "override_camera_2D:set",
    "override_camera_2D:transform", "override_camera_3D:set", "override_camera_3D:transform", "reload_scripts",
    "breakpoint", "save_node", "set_skip_breakpoints", "start_profiling", "stop_profiling",
    "start_network_profiling", "stop_network_profiling", "live_set_root", "live_node_path", "live_res_path",
    "live_node_prop", "live_node_prop_res", "live_res_prop", "live_res_prop_res", "live_node_call",
    "live_res_call", "live_create_node", "live_instance_node", "live_remove_node", "live_remove_and_keep_node",
    "live_restore_node", "live_duplicate_node", "live_reparent_node",
)

GODOT3_MESSAGES = GODOT3_TO_EDITOR + GODOT3_TO_GAME

#: 4.x game -> editor
GODOT4_TO_EDITOR = (
    "set_pid", "debug_enter", "debug_exit", "stack_dump", "stack_frame_vars", "stack_frame_var",
    "evaluation_return", "output", "error", "performance:profile_frame", "performance:profile_names",
    "visual:profile_frame", "servers:profile_frame", "servers:profile_total", "servers:function_signature",
    "servers:memory_usage", "servers:drawn", "scene:scene_tree", "scene:inspect_object", "scene:inspect_objects",
    "scene:click_ctrl", "filesystem:update_file", "request_quit", "multiplayer:rpc", "multiplayer:syncs",
    "multiplayer:bandwidth", "multiplayer:cache",
)

#: 4.x editor -> game
GODOT4_TO_GAME = (
    "step", "next", "continue", "break", "get_stack_dump", "get_stack_frame_vars", "reload_scripts",
    "reload_all_scripts", "breakpoint", "set_skip_breakpoints", "evaluate", "profiler:servers", "profiler:visual",
    "servers:memory", "servers:draw", "scene:request_scene_tree", "scene:set_object_property", "scene:save_node",
    "scene:setup_scene", "scene:suspend_changed", "scene:next_frame",
)

GODOT4_MESSAGES = GODOT4_TO_EDITOR + GODOT4_TO_GAME

#: every known name, in first-seen order
MESSAGES = tuple(dict.fromkeys(GODOT3_MESSAGES + GODOT4_MESSAGES))

#: the prefix of a Godot 3 game's own messages (``ScriptDebugger.send_message`` sends ``message:NAME``)
GODOT3_CUSTOM_PREFIX = "message:"


def is_godot3_message_name(name: str) -> bool:
    """A String that can start a Godot 3 game -> editor message: a 3.x name or a game's own. Any other
    String is an argument PDU (of a message whose start a capture joined part-way missed)."""
    return name in _GODOT3_SET or name.startswith(GODOT3_CUSTOM_PREFIX)


_GODOT3_SET = frozenset(GODOT3_MESSAGES)
