-- What one call into Wireshark's tree API costs: a post-dissector that makes ten calls of one kind a frame
-- ($GODOT_API_OP, below), to be run under `valgrind --tool=callgrind` against GODOT_API_OP=none on the
-- same capture (the difference over ten times the frames is one call's instructions):
--   GODOT_API_OP=add valgrind --tool=callgrind tshark -V -r CAPTURE -X lua_script:benchmarks/lua/api_micro.lua
local OP = os.getenv("GODOT_API_OP") or "none"
local micro = Proto("godot_api_micro", "API micro")
local u32 = ProtoField.uint32("godot_api_micro.u32", "U32", base.DEC)
local str = ProtoField.string("godot_api_micro.string", "String")
local i64 = ProtoField.int64("godot_api_micro.int64", "Int64", base.DEC)
local bytes = ProtoField.bytes("godot_api_micro.bytes", "Bytes")
micro.fields = { u32, str, i64, bytes }
local add, generated, hidden = TreeItem.add, TreeItem.set_generated, TreeItem.set_hidden
local INT64 = Int64.new(5)
local OPS = {
  none = function() end,
  range = function(tvb) for i = 1, 10 do local _ = tvb(i, 4) end end, -- a TvbRange
  add = function(_, root, r) for i = 1, 10 do add(root, u32, r, i) end end, -- an item with a value
  add_no_value = function(_, root, r) for _ = 1, 10 do add(root, u32, r) end end, -- Wireshark reads the bytes
  add_no_range = function(_, root) for i = 1, 10 do add(root, u32, i) end end,
  add_label = function(_, root, r) for i = 1, 10 do add(root, u32, r, i, "label text here") end end,
  add_generated = function(_, root, r) for i = 1, 10 do generated(add(root, u32, r, i)) end end,
  add_hidden = function(_, root, r) for i = 1, 10 do hidden(add(root, u32, r, i)) end end,
  add_string = function(_, root, r) for _ = 1, 10 do add(root, str, r, "some string") end end,
  add_int64 = function(_, root, r) for _ = 1, 10 do add(root, i64, r, INT64) end end,
  add_bytes = function(tvb, root) local r = tvb(0, 32); for _ = 1, 10 do add(root, bytes, r) end end,
  add_method = function(_, root, r) for i = 1, 10 do root:add(u32, r, i) end end,
}
local op = assert(OPS[OP], "unknown GODOT_API_OP")
function micro.dissector(tvb, pinfo, tree)
  if tvb:len() < 40 then return end
  local r = tvb(0, 4)
  op(tvb, add(tree, micro, r), r)
end
register_postdissector(micro)
