-- The floor of a Lua dissector's tree: a post-dissector that makes, spread evenly over the frames, as many
-- items (uint32 fields with values), generated and hidden marks, TvbRanges and other item calls
-- (set_text) as $GODOT_API_FLOOR ("frames items generated hidden ranges other", api_count.lua's totals)
-- says, and computes nothing else. What Wireshark's Lua charges for that tree, measured against tshark
-- without it. benchmarks/bench_lua.py --floor.
local counts = {}
for n in assert(os.getenv("GODOT_API_FLOOR"), "GODOT_API_FLOOR not set"):gmatch("%d+") do counts[#counts + 1] = tonumber(n) end
local frames = math.max(counts[1], 1)
local per = {} -- calls a frame: items, generated, hidden, ranges, other
for i = 2, 6 do per[i - 1] = counts[i] / frames end
local floor_proto = Proto("godot_api_floor", "API floor")
local value = ProtoField.uint32("godot_api_floor.value", "Value", base.DEC)
floor_proto.fields = { value }
local add, generated, hidden, set_text = TreeItem.add, TreeItem.set_generated, TreeItem.set_hidden, TreeItem.set_text
local carry = { 0, 0, 0, 0, 0 } -- the fractions of calls owed, so that the totals come out as counted
local function due(k)
  local c = carry[k] + per[k]
  local n = math.floor(c)
  carry[k] = c - n
  return n
end
function floor_proto.dissector(tvb, pinfo, tree)
  local len = tvb:len()
  if len < 8 then return end
  local items, gens, hides, ranges, others = due(1), due(2), due(3), due(4), due(5)
  if items == 0 then return end
  local shared = tvb(0, 4)
  local root = add(tree, floor_proto, shared)
  for i = 2, items do
    local r = shared
    if i <= ranges then r = tvb(i % (len - 4), 4) end
    local item = add(root, value, r, i)
    if i <= gens + 1 then generated(item) elseif i <= gens + hides + 1 then hidden(item) end
  end
  for _ = 1, others do set_text(root, "API floor") end
end
register_postdissector(floor_proto)
