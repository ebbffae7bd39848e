-- Statistics: `tshark -z godot,rpc` and `-z godot,bandwidth`, and Statistics > Godot in Wireshark.
-- A template appended to godot.lua by godot_dissect/lua/mp_generator.py; the same tables as
-- `godot-dissect stats` (godot_dissect/stats: calls.py rpc, traffic.py bandwidth), counted the same way:
--   rpc: one row per (sender, receiver, node, kind, name, transfer, channel, relayed) with count
--        (calls delivered: a server-to-client hop, or a client's packet the server executes itself;
--        the first leg of a relayed call is not counted again), app_bytes of the counted calls and
--        wire_bytes of every leg: the share of the frames that carried it (per frame, the frame's length
--        split across the Godot messages in it by their bytes in it; over ENet the data bytes of the
--        commands, fragments included: enet.lua hands each packet its share; over WebSocket the bytes of
--        the WebSocket frame, header included, in each TCP segment: worked out here per frame);
--   bandwidth: one row per direction (transport, source, destination) of every conversation that
--        carried Godot messages: frames and wire bytes of every frame of the direction, Godot or
--        not, and the messages and their app_bytes.
-- The dissectors hand each message's record to MP.count while they dissect a frame; a Listener on
-- every frame adds them, with the frame's bytes, when the frame's taps run.
-- @MP_SPEC@
local ROWS_MAX = MP_SPEC.stats.max_rows -- distinct rows kept per table; later ones are folded into one
local OTHER = MP_SPEC.stats.other -- the row later rows are folded into

local pending = { number = -1, recs = {} } -- the records of the frame being dissected
-- tcp.len and tcp.segment (frame, bytes of each segment of a reassembled PDU) are read from the tree
-- the Listener sees (all_field_infos), which its filter makes Wireshark fill in, not with Field
-- extractors: while any Field extractor exists, tshark builds a protocol tree for every packet
-- (have_field_extractors() in epan/column-utils.c), and the plain packet list would cost several
-- times more; Field.new is refused after start-up, before tshark runs the `-z` callbacks.
local TAP_FILTER = "frame || tcp.len || tcp.segment"

-- the frame's first tcp.len and its tcp.segment FieldInfos
local function tcp_fields()
  local payload, segs = nil, {}
  for _, fi in ipairs({ all_field_infos() }) do
    local name = fi.name
    if name == "tcp.len" then
      if payload == nil then payload = fi.value end
    elseif name == "tcp.segment" then
      segs[#segs + 1] = fi
    end
  end
  return payload, segs
end
-- the TCP segments whose bytes are not all in the messages that completed with them, kept (over the
-- whole capture, so however many flows there are) for a message that completes later (a WebSocket
-- frame over several segments); the oldest go first beyond this many
local OPEN_SEGMENTS_MAX = MP_SPEC.stats.open_segments

local function count(pinfo, rec)
  local n = pinfo.number
  if pending.number ~= n then pending.number, pending.recs = n, {} end
  pending.recs[#pending.recs + 1] = rec
end

local function endpoint(addr, port)
  local a = tostring(addr)
  if sfind(a, ":", 1, true) then a = "[" .. a .. "]" end
  return a .. ":" .. tostring(port)
end

local function new_tables()
  return { rpc = {}, rpc_order = {}, nrpc = 0, dirs = {}, dir_order = {}, ndirs = 0,
           open = {}, open_ring = { head = 1, tail = 0 } } -- open: frame number -> wire bytes per TCP byte
end

local T = new_tables()

local NKEY = 8 -- the key columns of the rpc table (some may be nil: iterate by index, not ipairs)

local function key_of(parts)
  local out = {}
  for i = 1, NKEY do local p = parts[i]; out[i] = tostring(p == nil and "" or p) end
  return tconcat(out, "\1")
end

local function rpc_row(r)
  local parts = { r.sender, r.receiver, r.node, r.kind, r.name, r.transfer, r.channel, r.relayed }
  local key = key_of(parts)
  local row = T.rpc[key]
  if row == nil then
    if T.nrpc >= ROWS_MAX then
      parts = { OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER, OTHER }
      key = key_of(parts)
      row = T.rpc[key]
    end
    if row == nil then
      row = { parts = parts, count = 0, app_bytes = 0, wire_bytes = 0 }
      T.rpc[key] = row
      T.nrpc = T.nrpc + 1
      T.rpc_order[T.nrpc] = row
    end
  end
  return row
end

local function new_dir(transport, src, dst)
  return { transport = transport, src = src, dst = dst, frames = 0, wire = 0, messages = 0, app = 0, godot = false }
end

-- the row of a direction's frames and messages; beyond ROWS_MAX directions (a flood of flows) the
-- transport's one "(other)" row, frames and messages of every later direction, as traffic.py folds them
local FOLDED = OTHER .. ":0" -- (its ends, as traffic.py writes the endpoint (OTHER, 0))
local function dir_row(transport, src, dst)
  local key = transport .. " " .. src .. " " .. dst
  local d = T.dirs[key]
  if d == nil then
    if T.ndirs >= ROWS_MAX then
      key = transport .. " " .. FOLDED .. " " .. FOLDED
      d = T.dirs[key]
      if d == nil then
        d = new_dir(transport, FOLDED, FOLDED)
        d.folded = true
        T.dirs[key] = d
        T.dir_order[#T.dir_order + 1] = d -- (listed, not counted among the ROWS_MAX)
      end
      return d
    end
    d = new_dir(transport, src, dst)
    T.dirs[key] = d
    T.ndirs = T.ndirs + 1
    T.dir_order[#T.dir_order + 1] = d
  end
  return d
end

local PORT_TYPES = { [2] = "tcp", [3] = "udp" } -- pinfo.port_type: PT_TCP, PT_UDP

-- the wire bytes of the WebSocket messages of a TCP frame (records with ws_bytes: the WebSocket frame's
-- size, header included), as godot_dissect.pcap.framing's WireLedger gives them: the frame's length
-- over its TCP payload, per byte. A message that began in earlier segments (the frame then completes
-- a reassembled PDU, and it is the frame's first) adds their shares, kept in `T.open`.
local function tcp_wire(pinfo, recs)
  local payload, segs = tcp_fields()
  payload = payload or 0
  if payload <= 0 then return end
  local per_byte = pinfo.len / payload
  local used, first = 0, true
  for _, r in ipairs(recs) do
    local n = r.ws_bytes
    if n then
      if first then
        if #segs > 1 and segs[#segs].value == pinfo.number then
          local total = 0
          for _, fi in ipairs(segs) do total = total + fi.len end
          if total == n then -- this message is the reassembled PDU
            local wire = 0
            for i = 1, #segs - 1 do
              local w = T.open[segs[i].value]
              if w then wire = wire + w * segs[i].len end
            end
            n = segs[#segs].len
            r.wire_bytes = wire + per_byte * n
          end
        end
        first = false
      end
      if r.wire_bytes == nil then r.wire_bytes = per_byte * n end
      used = used + n
    end
  end
  if used >= payload then return end
  -- its last bytes may begin a message that completes later: keep its per-byte share (beyond
  -- OPEN_SEGMENTS_MAX the oldest is forgotten: a message whose first segment is that old loses its share)
  local ring = T.open_ring
  ring.tail = ring.tail + 1
  ring[ring.tail] = pinfo.number
  T.open[pinfo.number] = per_byte
  if ring.tail - ring.head + 1 > OPEN_SEGMENTS_MAX then
    T.open[ring[ring.head]] = nil
    ring[ring.head] = nil
    ring.head = ring.head + 1
  end
end

local function on_frame(pinfo)
  local transport = PORT_TYPES[pinfo.port_type]
  local recs = pending.number == pinfo.number and pending.recs or nil
  pending.number, pending.recs = -1, {}
  if transport == nil then return end
  local src, dst = endpoint(pinfo.src, pinfo.src_port), endpoint(pinfo.dst, pinfo.dst_port)
  local d = dir_row(transport, src, dst)
  d.frames = d.frames + 1
  d.wire = d.wire + pinfo.len
  if transport == "tcp" then tcp_wire(pinfo, recs or {}) end
  if recs == nil then return end
  local own = not d.folded -- (the folded row's ends are many: no peer ids)
  for _, r in ipairs(recs) do
    d.godot = true
    d.messages = d.messages + 1
    d.app = d.app + (r.app_bytes or 0)
    if own and r.sender ~= nil and d.src_peer == nil and r.relayed == false then d.src_peer = r.sender end
    if own and r.receiver ~= nil and d.dst_peer == nil and r.relayed == false then d.dst_peer = r.receiver end
    if (r.kind == "rpc" or r.kind == "rset") and r.delivered then
      local row = rpc_row(r)
      row.count = row.count + 1
      row.app_bytes = row.app_bytes + (r.app_bytes or 0)
    end
    if r.kind == "rpc" or r.kind == "rset" then
      local row = rpc_row(r)
      row.wire_bytes = row.wire_bytes + (r.wire_bytes or 0)
    end
  end
end

-- the tables as text, sorted by bytes (then by their key columns, so the order is stable)
local RPC_HEAD = MP_SPEC.stats.rpc_head
local BW_HEAD = { "transport", "src", "src_peer", "dst", "dst_peer", "frames", "wire_bytes", "messages", "app_bytes" }

local function cell(v)
  if v == nil then return "" end
  return tostring(v)
end

local function render(title, head, rows)
  local widths = {}
  for i, h in ipairs(head) do widths[i] = #h end
  for _, r in ipairs(rows) do
    for i, v in ipairs(r) do if #v > widths[i] then widths[i] = #v end end
  end
  local lines = { "", "===================================================================", title }
  local function line(r)
    local out = {}
    for i, v in ipairs(r) do out[i] = v .. srep(" ", widths[i] - #v) end
    return (tconcat(out, "  "):gsub("%s+$", ""))
  end
  lines[#lines + 1] = line(head)
  for _, r in ipairs(rows) do lines[#lines + 1] = line(r) end
  lines[#lines + 1] = "==================================================================="
  return tconcat(lines, "\n") .. "\n"
end

-- rows { r = cells, bytes = n } -> cells, most bytes first, ties by the cells' text (a stable order)
local function by_bytes(rows)
  tsort(rows, function(a, b)
    if a.bytes ~= b.bytes then return a.bytes > b.bytes end
    return tconcat(a.r, "\1") < tconcat(b.r, "\1")
  end)
  local out = {}
  for i, x in ipairs(rows) do out[i] = x.r end
  return out
end

-- one key for both directions of a conversation
local function conversation_key(d)
  return d.transport .. " " .. (d.src < d.dst and d.src .. " " .. d.dst or d.dst .. " " .. d.src)
end

local function rpc_text()
  local rows = {}
  for _, row in ipairs(T.rpc_order) do
    if row.count > 0 then
      local r = {}
      for i = 1, NKEY do r[i] = cell(row.parts[i]) end
      r[#r + 1] = tostring(row.count)
      r[#r + 1] = tostring(row.app_bytes)
      r[#r + 1] = sfmt("%.3f", row.wire_bytes)
      rows[#rows + 1] = { r = r, bytes = row.app_bytes }
    end
  end
  local out = by_bytes(rows)
  return render("Godot RPCs and remote sets (godot-dissect stats --table rpc)", RPC_HEAD, out)
end

local function bandwidth_text()
  local rows = {}
  for _, d in ipairs(T.dir_order) do
    if d.godot or T.godot_convs[conversation_key(d)] then
      rows[#rows + 1] = { r = { d.transport, d.src, cell(d.src_peer), d.dst, cell(d.dst_peer), tostring(d.frames),
                                tostring(d.wire), tostring(d.messages), tostring(d.app) }, bytes = d.wire }
    end
  end
  local out = by_bytes(rows)
  return render("Godot bandwidth per direction (godot-dissect stats --table bandwidth)", BW_HEAD, out)
end

-- a direction belongs to the table when either direction of its conversation carried Godot messages
local function mark_conversations()
  T.godot_convs = {}
  for _, d in ipairs(T.dir_order) do
    if d.godot then
      T.godot_convs[conversation_key(d)] = true
    end
  end
  -- the peer ids seen in one direction name the other direction's endpoints too
  for _, d in ipairs(T.dir_order) do
    local back = T.dirs[d.transport .. " " .. d.dst .. " " .. d.src]
    if back then
      if d.src_peer == nil then d.src_peer = back.dst_peer end
      if d.dst_peer == nil then d.dst_peer = back.src_peer end
    end
  end
end

local TABLES = {
  rpc = rpc_text,
  bandwidth = function() mark_conversations(); return bandwidth_text() end,
}

-- one Listener per statistic asked for; the tables are shared (one count per frame, however many
-- statistics print them)
local listener = nil
local function ensure_listener()
  if listener then return end
  MP.count, STATS_HOOK.count = count, count -- the dissectors hand their records over from now on
  listener = Listener.new("frame", TAP_FILTER, false)
  function listener.packet(pinfo) on_frame(pinfo) end
  function listener.reset() T = new_tables() end
end

local printers = {}
for name, fn in pairs(TABLES) do
  register_stat_cmd_arg("godot," .. name, function()
    ensure_listener()
    printers[#printers + 1] = fn
    if #printers == 1 then
      function listener.draw()
        for _, p in ipairs(printers) do io.stdout:write(p()) end
      end
    end
  end)
end

if gui_enabled() then
  local TITLES = { rpc = "Godot/RPC calls", bandwidth = "Godot/Bandwidth" }
  for name, fn in pairs(TABLES) do
    register_menu(TITLES[name], function()
      MP.count, STATS_HOOK.count = count, count
      local win = TextWindow.new("Godot: " .. name)
      local tap = Listener.new("frame", TAP_FILTER, false)
      local saved = T
      T = new_tables()
      local mine = T
      function tap.packet(pinfo) local keep = T; T = mine; on_frame(pinfo); T = keep end
      function tap.reset() mine = new_tables() end
      function tap.draw() local keep = T; T = mine; win:set(fn()); T = keep end
      win:set_atclose(function() tap:remove() end)
      T = saved
      retap_packets()
    end, MENU_STAT_GENERIC)
  end
end
