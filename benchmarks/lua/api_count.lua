-- Counts the calls a Lua dissector loaded after this script makes into Wireshark's tree API (items
-- added, set generated or hidden, TvbRanges made, other item calls) and writes the totals, with the
-- frame count, to the file named by $GODOT_API_COUNT when tshark ends. benchmarks/bench_lua.py --floor.
local N = { items = 0, generated = 0, hidden = 0, ranges = 0, other = 0, frames = 0 }
local COUNTED = {} -- the counting methods, by name
local function counting(method, what)
  local f = TreeItem[method]
  local g = function(...) N[what] = N[what] + 1; return f(...) end
  TreeItem[method], COUNTED[method] = g, g
end
for _, m in ipairs({ "add", "add_le" }) do counting(m, "items") end
counting("set_generated", "generated")
counting("set_hidden", "hidden")
for _, m in ipairs({ "set_text", "append_text", "prepend_text", "set_len", "add_proto_expert_info",
                     "add_tvb_expert_info" }) do counting(m, "other") end
-- item:add(...) finds its method through the TreeItem metatable's __index, not the TreeItem table
local registry = debug.getregistry()
local item_meta = registry.TreeItem
local item_index = rawget(item_meta, "__index")
rawset(item_meta, "__index", function(item, k) return COUNTED[k] or item_index(item, k) end)
-- a TvbRange is made by calling a Tvb or a TvbRange (tvb(off, len)) or by their range method
for _, class in ipairs({ "Tvb", "TvbRange" }) do
  local meta = registry[class]
  local call = rawget(meta, "__call")
  rawset(meta, "__call", function(...) N.ranges = N.ranges + 1; return call(...) end)
  local range = _G[class].range
  _G[class].range = function(...) N.ranges = N.ranges + 1; return range(...) end
end
local tap = Listener.new("frame")
function tap.packet() N.frames = N.frames + 1 end
function tap.draw()
  local out = assert(io.open(assert(os.getenv("GODOT_API_COUNT"), "GODOT_API_COUNT not set"), "w"))
  out:write(string.format("%d %d %d %d %d %d\n", N.frames, N.items, N.generated, N.hidden, N.ranges, N.other))
  out:close()
end
