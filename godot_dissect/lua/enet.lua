-- ENet 1.3 as Godot bundles it: a template appended to godot.lua by godot_dissect/lua/mp_generator.py.
-- Everything here walks MP_SPEC.enet (spec/enet.py): header bits, command table, body fields, the
-- acceptance checks; no command number, field width or limit is written here.
-- The Godot payloads the commands carry go to MP.payload (multiplayer.lua).
-- @MP_SPEC@
local ES = MP_SPEC.enet
-- what these templates use of engine.lua (its main-chunk locals): fail at load time, not per packet,
-- if the engine stops offering one of them
local ENGINE_NAMES = { "show", "PORT_TEXT", "F", "godot", "STATS_HOOK", "looks_like_text", "NULL_ITEM", "tree_of", "enter", "DIALECTS", "sfmt", "sbyte", "ssub", "srep", "sfind", "schar",
                       "tconcat", "tsort", "floor", "band", "bor", "rshift", "lshift" }
local ENGINE_VALUES = { show, PORT_TEXT, F, godot, STATS_HOOK, looks_like_text, NULL_ITEM, tree_of, enter, DIALECTS, sfmt, sbyte, ssub, srep, sfind, schar, tconcat, tsort, floor,
                        band, bor, rshift, lshift }
for i, name in ipairs(ENGINE_NAMES) do
  assert(ENGINE_VALUES[i] ~= nil, "godot.lua: engine.lua no longer defines " .. name)
end

local ENET_TITLE = "ENet"
local enet = Proto("enet", ENET_TITLE)
MP.enet = enet

local function titled(name) return (name:gsub("_", " "):gsub("^%l", string.upper)) end

-- ProtoFields from the spec -------------------------------------------------------------------------
local UINT = { [1] = ProtoField.uint8, [2] = ProtoField.uint16, [4] = ProtoField.uint32 }
local EF = {}        -- abbrev -> ProtoField
local efields = {}
local function field(abbrev, make)
  if EF[abbrev] == nil then EF[abbrev] = make(); efields[#efields + 1] = EF[abbrev] end
  return EF[abbrev]
end

local CMD_BY_NUMBER, CMD_NAMES = {}, {}
for _, c in ipairs(ES.commands) do CMD_BY_NUMBER[c.number] = c; CMD_NAMES[c.number] = c.name end

local function int_field(f, names)
  return field(f.abbrev, function()
    return UINT[f.size](f.abbrev, titled(f.name), base.DEC, names, nil, f.meaning)
  end)
end

local HW = ES.header_word
local HEADER_BITS = {}
for _, b in ipairs(ES.header_bits) do
  local abbrev = "enet." .. b.name
  HEADER_BITS[#HEADER_BITS + 1] = { spec = b, f = field(abbrev, function()
    if b.bits == 1 then return ProtoField.bool(abbrev, titled(b.name), HW.size * 8, nil, b.mask, b.meaning) end
    return UINT[HW.size](abbrev, titled(b.name), base.DEC, nil, b.mask, b.meaning)
  end) }
end
local F_SENT_TIME = int_field(ES.sent_time)

-- the command byte: its number (with the command names) and its flag bits
local CH = {}
for _, f in ipairs(ES.command_header) do CH[f.name] = f end
local CMD_BITS = {}
for _, b in ipairs(ES.command_bits) do
  local abbrev = b.name == "number" and "enet.command" or ("enet." .. b.name)
  CMD_BITS[#CMD_BITS + 1] = { spec = b, f = field(abbrev, function()
    if b.bits == 1 then return ProtoField.bool(abbrev, titled(b.name), CH.command.size * 8, nil, b.mask, b.meaning) end
    return UINT[CH.command.size](abbrev, "Command", base.DEC, CMD_NAMES, b.mask, b.meaning)
  end) }
end
local NUMBER_BITS
for _, b in ipairs(ES.command_bits) do if b.name == "number" then NUMBER_BITS = b end end
local F_CHANNEL = int_field(CH.channel)
local F_RELIABLE_SEQ = int_field(CH.reliable_seq)
for _, c in ipairs(ES.commands) do
  for _, f in ipairs(c.fields) do int_field(f) end
end

local F_DATA = field("enet.data", function() return ProtoField.bytes("enet.data", "Data") end)
local F_COMPRESSED_BODY = field("enet.compressed_body", function()
  return ProtoField.bytes("enet.compressed_body", "Compressed body") end)
local F_ERROR = field("enet.error", function() return ProtoField.string("enet.error", "Malformed") end)
local F_DELIVERY = field("enet.delivery", function() return ProtoField.string("enet.delivery", "Delivery") end)
local F_GODOT = field("enet.godot_major", function()
  return ProtoField.uint8("enet.godot_major", "Godot major version", base.DEC) end)
local F_DUP = field("enet.retransmission", function()
  return ProtoField.bool("enet.retransmission", "Already delivered (retransmission)") end)
local F_FRAGMENTS = field("enet.fragments", function()
  return ProtoField.string("enet.fragments", "Fragment group") end)
local F_REASSEMBLED_IN = field("enet.reassembled_in", function()
  return ProtoField.framenum("enet.reassembled_in", "Reassembled in frame") end)
enet.fields = efields

local EE = {
  malformed = ProtoExpert.new("enet.malformed", "Malformed ENet datagram", expert.group.MALFORMED, expert.severity.ERROR),
  compressed = ProtoExpert.new("enet.compressed.undecoded", "Compressed ENet datagram not decoded",
                               expert.group.UNDECODED, expert.severity.NOTE),
  reassembled = ProtoExpert.new("enet.reassembled", "Fragments reassembled", expert.group.REASSEMBLE, expert.severity.CHAT),
  dropped = ProtoExpert.new("enet.dropped", "Fragment group dropped", expert.group.REASSEMBLE, expert.severity.WARN),
}
enet.experts = { EE.malformed, EE.compressed, EE.reassembled, EE.dropped }

-- Preferences ---------------------------------------------------------------------------------------
local CODEC_ENUM, CODEC_BY_ENUM = {}, {}
for i, c in ipairs(ES.compressions) do
  CODEC_ENUM[#CODEC_ENUM + 1] = { i, c.name, i }
  CODEC_BY_ENUM[i] = c.name
end
local MAJOR_ENUM = { { 1, "auto", 0 }, { 2, "Godot 3", 3 }, { 3, "Godot 4", 4 } }
enet.prefs.udp_ports = Pref.range("UDP ports", "", "UDP ports that carry ENet for sure", 65535)
enet.prefs.heuristic = Pref.bool("Heuristic", true, "Find ENet on any UDP port (the Python reader's looks_like_enet)")
enet.prefs.compression = Pref.enum("Compression", 1, "The hosts' compressor (not on the wire). Decoded here: "
  .. "range_coder and fastlz; zlib and zstd need C libraries Wireshark's Lua does not have",
  CODEC_ENUM, false)
enet.prefs.godot_major = Pref.enum("Godot version", 1, "auto: from the CONNECT channel count", MAJOR_ENUM, false)
enet.prefs.max_reassembly = Pref.uint("Reassembly limit (bytes)", ES.max_waiting_data,
  "Fragment data held per direction of a conversation; groups beyond it are dropped")

local EP = { compression = "none", major = 0, heuristic = true, max_reassembly = ES.max_waiting_data }
local function read_enet_prefs()
  EP.compression = CODEC_BY_ENUM[enet.prefs.compression] or "none"
  EP.major = ({ 0, 3, 4 })[enet.prefs.godot_major] or 0
  EP.heuristic = enet.prefs.heuristic
  EP.max_reassembly = enet.prefs.max_reassembly
end

-- Reading ---------------------------------------------------------------------------------------------
local OPS = {
  ["<"] = function(a, b) return a < b end, ["<="] = function(a, b) return a <= b end,
  [">"] = function(a, b) return a > b end, [">="] = function(a, b) return a >= b end,
  ["=="] = function(a, b) return a == b end, ["~="] = function(a, b) return a ~= b end,
  ["!="] = function(a, b) return a ~= b end,
}
local function operand(r, v)
  if type(r) == "number" then return r end
  if type(r) == "string" then return v[r] end
  if r[2] == "-" then return v[r[1]] - v[r[3]] end
  return v[r[1]] + v[r[3]]
end
-- the first broken check, described as the Python parser does (enet/checks.py)
local function first_failure(checks, v)
  for _, k in ipairs(checks) do
    local rhs = operand(k.right, v)
    if not OPS[k.op](v[k.left], rhs) then
      local r = k.right
      local rtext
      if type(r) == "number" then rtext = tostring(r)
      elseif type(r) == "string" then rtext = r .. "=" .. rhs
      else rtext = sfmt("%s %s %s=%d", r[1], r[2], r[3], rhs) end
      return sfmt("%s (%s=%d, must be %s %s)", k.reason, k.left, v[k.left], k.op, rtext)
    end
  end
  return nil
end

-- One datagram as ENet's receiver reads it: { word, peer_id, session_id, compressed, has_sent_time,
-- sent_time, header_size, commands = { cmd, ... }, n (commands read), buf, base, err_off, err,
-- opaque, padding }. A command is one table: its values by field name (channel, reliable_seq, the
-- command's fields) and def, off, size, flags, data_off, data_len (datagram offsets; the data is
-- buf's bytes data_off - base + 1 .. data_off - base + data_len). `body`: the decompressed bytes
-- after the header, when the header says compressed.
local HEADER = {}
for _, b in ipairs(ES.header_bits) do HEADER[#HEADER + 1] = b end
-- a bit range as Lua arithmetic (bit32's functions are C calls): the word over 2^shift, modulo 2^bits
for _, list in ipairs({ ES.header_bits, ES.command_bits }) do
  for _, b in ipairs(list) do b.div, b.mod = 2 ^ b.shift, 2 ^ b.bits end
end
local function bits_of(b, w) return floor(w / b.div) % b.mod end

-- the ack-requested bit of a command byte (checked for every command)
local ACK_BIT
for _, b in ipairs(ES.command_bits) do if b.name == "ack_requested" then ACK_BIT = b end end

-- Readers built once at load from the spec (Lua source made from ES, then load()): a datagram costs
-- one string.byte call for its header and one per command and straight-line arithmetic, not a walk of
-- the field tables
local function compiled(name, src, ...)
  return assert(load(src, "=enet " .. name))(...)
end
local function be_sum(first, n) -- Lua arithmetic of n big-endian bytes in locals b<first>..
  local e = "b" .. first
  for i = first + 1, first + n - 1 do e = "(" .. e .. ") * 256 + b" .. i end
  return e
end
-- read_header(dg, raw): sets the word and its bits in dg; returns the sent time the bytes after the
-- word would give (nil: the datagram ends before it). Called with at least the word's bytes.
local read_header = (function()
  local n = HW.size + ES.sent_time.size
  local locals = {}
  for i = 1, n do locals[i] = "b" .. i end
  local lines = { "local sbyte = ...\nreturn function(dg, raw)",
                  sfmt("local %s = sbyte(raw, 1, %d)", tconcat(locals, ", "), n),
                  sfmt("local w = %s", be_sum(1, HW.size)), "dg.word = w" }
  -- (w - w % div) / div is floor(w / div) for the word's whole numbers, without a call of floor
  for _, b in ipairs(HEADER) do
    lines[#lines + 1] = sfmt("dg[%q] = (w - w %% %.17g) / %.17g %% %.17g", b.name, b.div, b.div, b.mod)
  end
  lines[#lines + 1] = sfmt("if b%d == nil then return nil end", n)
  lines[#lines + 1] = sfmt("return %s\nend", be_sum(HW.size + 1, ES.sent_time.size))
  return compiled("header", tconcat(lines, "\n"), sbyte)
end)()
local CHECK_OP = { ["!="] = "~=" }
-- sizes and ids parse() reads per datagram, as upvalues
local WORD_SIZE, SENT_TIME_SIZE, CMD_BYTE_SIZE = HW.size, ES.sent_time.size, CH.command.size
local CMD_HEADER_SIZE, UNASSIGNED_PEER = ES.command_header_size, ES.unassigned_peer_id
-- what parse() says about a command besides its values (field names are checked not to clash)
local CMD_KEYS = { "off", "flags" } -- (and def, size: set when the table is made)
local DATA_KEYS = { "data_off", "data_len" } -- (data commands only)
local CMD_KEY_SET = {}
for _, k in ipairs(CMD_KEYS) do CMD_KEY_SET[k] = true end
for _, k in ipairs(DATA_KEYS) do CMD_KEY_SET[k] = true end
for _, d in ipairs(ES.commands) do
  -- the values after the command byte: channel, reliable_seq, then the command's fields
  local fields = { CH.channel, CH.reliable_seq }
  for _, f in ipairs(d.fields) do fields[#fields + 1] = f end
  local n = d.size - CH.command.size
  local locals, names, sums, at = {}, {}, {}, 1
  for i = 1, n do locals[i] = "b" .. i end
  for _, f in ipairs(fields) do
    assert(not CMD_KEY_SET[f.name], "enet.lua: field " .. f.name .. " clashes with a command key")
    names[#names + 1] = sfmt("t[%q]", f.name)
    sums[#sums + 1] = be_sum(at, f.size); at = at + f.size
  end
  assert(at - 1 == n, "enet.lua: the fields of " .. d.name .. " do not fill its size")
  -- a new table names every key it will get in its constructor (nil: set later) so that Lua sizes it
  -- once; a table given (parse's pool) has those keys already and is filled in place. Its def, and its
  -- size but for a data command's, never change: set once, here
  local keys = { "def = d", "size = " .. d.size }
  for i, f in ipairs(fields) do keys[#keys + 1] = sfmt("[%q] = %s", f.name, sums[i]) end
  for _, k in ipairs(CMD_KEYS) do keys[#keys + 1] = k .. " = nil" end
  if d.data_length then for _, k in ipairs(DATA_KEYS) do keys[#keys + 1] = k .. " = nil" end end
  d.read_values = compiled(d.name, sfmt("local sbyte, d = ...\nreturn function(buf, q, t)\nlocal %s = sbyte(buf, q, q + %d)\n"
    .. "if t == nil then return { %s } end\n%s = %s\nreturn t\nend", tconcat(locals, ", "), n - 1, tconcat(keys, ", "),
    tconcat(names, ", "), tconcat(sums, ", ")), sbyte, d)
  local conds = {}
  for _, k in ipairs(d.checks) do
    local r = k.right
    local rhs = type(r) == "number" and sfmt("%.17g", r) or type(r) == "string" and sfmt("v[%q]", r)
                or sfmt("(v[%q] %s v[%q])", r[1], r[2], r[3])
    conds[#conds + 1] = sfmt("v[%q] %s %s", k.left, CHECK_OP[k.op] or k.op, rhs)
  end
  -- (nil: the command has no checks, nothing to call)
  d.checks_pass = #conds > 0 and compiled(d.name .. " checks", "return function(v) return "
    .. tconcat(conds, " and ") .. " end") or nil
end

-- what a command byte says, by its value (the bit ranges worked out once, not per command)
local NUMBER_OF, ACK_OF = {}, {}
for byte = 0, 255 do
  NUMBER_OF[byte] = bits_of(NUMBER_BITS, byte)
  ACK_OF[byte] = ACK_BIT ~= nil and bits_of(ACK_BIT, byte) == 1
end

-- The tables of the datagram being read, reused from frame to frame: a table made per datagram and per
-- command (and collected later) cost more than all the reading. A dissector's datagram (and
-- looks_like_enet's) lives until the next one is parsed; nothing of it is kept (the decisions kept per
-- frame and the packets handed on are tables of their own). POOL[i][def]: the table of the i-th command
-- when it is a `def`; commands past POOL_SLOTS get new tables (a hostile datagram of many small
-- commands then costs what it did, and the pool stays bounded: POOL_SLOTS tables per command kind).
local POOL_SLOTS = ES.max_packet_commands
local POOL = {}
for i = 1, POOL_SLOTS do POOL[i] = {} end
local function new_datagram()
  return { commands = {}, n = 0, word = nil, peer_id = nil, session_id = nil, compressed = nil,
           has_sent_time = nil, header_size = nil, sent_time = nil, buf = nil, base = nil, err = nil,
           err_off = nil, opaque = nil, padding = nil, dirty = nil }
end

-- the datagram a dissector reads, and its decompressed form
local DG_RAW, DG_BODY = new_datagram(), new_datagram()
-- how many entries each reused datagram's command list holds: the next datagram's parse drops those past
-- its own, so a hostile datagram of thousands of commands is not kept (its command tables, ~0.7 kB each)
-- once a smaller one has been read
local HELD = { [DG_RAW] = 0, [DG_BODY] = 0 }
local function drop_commands(dg, from)
  local held = HELD[dg]
  if held == nil then return end -- (a datagram of its own: garbage with its tables)
  local cmds = dg.commands
  for k = from, held do cmds[k] = nil end
  if held >= from then HELD[dg] = from - 1 end -- (a C call per datagram less than math.min)
end

-- a datagram whose commands are not read (malformed before them, or compressed): its err (if any)
local function no_commands(dg, err_off, err)
  drop_commands(dg, 1)
  dg.n, dg.buf, dg.base = 0, nil, nil
  if err then dg.err_off, dg.err, dg.dirty = err_off, err, true end
  return dg
end

-- parse(raw, body, dg): into dg (its previous datagram forgotten) and POOL's command tables; with no dg,
-- into new tables of its own
local function parse(raw, body, dg)
  local pooled = dg ~= nil
  if not pooled then
    dg = new_datagram()
  elseif dg.dirty then -- (the keys only a malformed, compressed or padded datagram sets; the rest are set below on every path)
    dg.err, dg.err_off, dg.opaque, dg.padding, dg.dirty = nil, nil, nil, nil, nil
  end
  local n = #raw
  if n < WORD_SIZE then
    dg.word, dg.header_size, dg.sent_time = nil, nil, nil
    for i = 1, #HEADER do dg[HEADER[i].name] = nil end
    return no_commands(dg, 0, sfmt("%d bytes: shorter than the %d-byte ENet header", n, WORD_SIZE))
  end
  local sent_time = read_header(dg, raw)
  local pos = WORD_SIZE
  local has_sent_time = dg.has_sent_time == 1
  if has_sent_time then
    if sent_time == nil then
      dg.header_size, dg.sent_time = pos, nil
      return no_commands(dg, pos, "header has the sent-time flag but the datagram ends before the sent time")
    end
    dg.sent_time = sent_time
    pos = pos + SENT_TIME_SIZE
  else
    dg.sent_time = nil
  end
  dg.header_size = pos
  -- the commands are read where they are: raw's bytes (datagram offset = index - 1), or the
  -- decompressed body's (datagram offset = header size + index - 1)
  local buf, base, p, stop = raw, 0, pos, n
  if dg.compressed == 1 then
    if n == pos then return no_commands(dg, pos, "compressed flag set but nothing follows the header") end
    if body == nil then
      no_commands(dg, nil, nil)
      dg.opaque, dg.dirty = true, true
      return dg
    end
    buf, base, p, stop = body, pos, 0, #body -- offsets stay datagram offsets (header + decompressed body), as in the Python parser
  end
  if p >= stop then return no_commands(dg, pos, "no commands after the header (ENet never sends that)") end
  local have_peer = dg.peer_id ~= UNASSIGNED_PEER
  local chs = CMD_HEADER_SIZE
  local cmds, count = dg.commands, 0
  local err_off, err, padding = nil, nil, nil
  while p < stop do
    local at, left = base + p, stop - p
    -- (zero bytes to the end of a decompressed body are the codec's padding, not a command)
    if left < chs then
      if body ~= nil and not sfind(buf, "[^%z]", p + 1) then padding = left; break end
      err_off, err = at, sfmt("%d bytes left: too short for a command header (%d bytes)", left, chs)
      break
    end
    local byte = sbyte(buf, p + 1)
    local number = NUMBER_OF[byte]
    local d = CMD_BY_NUMBER[number]
    if d == nil then
      if body ~= nil and not sfind(buf, "[^%z]", p + 1) then padding = left; break end
      err_off, err = at, sfmt("unknown command number %d (command byte 0x%02x)", number, byte)
      break
    end
    local size = d.size
    if left < size then
      err_off, err = at, sfmt("%s needs %d bytes, only %d left", d.name, size, left)
      break
    end
    local v
    local slot = pooled and POOL[count + 1]
    if slot then
      local t = slot[d]
      v = d.read_values(buf, p + 1 + CMD_BYTE_SIZE, t)
      if t == nil then slot[d] = v end
    else
      v = d.read_values(buf, p + 1 + CMD_BYTE_SIZE, nil)
    end
    if d.needs_peer then
      if not have_peer then
        err_off, err = at, sfmt("%s in a datagram from the unassigned peer id 0x%x: ENet accepts only CONNECT from it",
                                d.name, UNASSIGNED_PEER)
        break
      end
    elseif have_peer then
      err_off, err = at, sfmt("%s from a peer that already has an id: ENet rejects it", d.name)
      break
    end
    if d.data_length then
      local dn = v[d.data_length]
      if left < size + dn then
        err_off, err = at, sfmt("%s claims %d data bytes, only %d left in the datagram", d.name, dn, left - size)
        break
      end
      size = size + dn
      v.data_off, v.data_len, v.size = at + d.size, dn, size
    end
    local pass = d.checks_pass
    if pass and not pass(v) then err_off, err = at, d.name .. ": " .. first_failure(d.checks, v); break end
    v.off, v.flags = at, byte - number
    count = count + 1
    cmds[count] = v
    p = p + size
    have_peer = true
    if ACK_OF[byte] and not has_sent_time then
      err_off = at
      err = d.name .. " asks for an acknowledgement but the header has no sent time: ENet ignores the rest of the datagram"
      break
    end
  end
  if pooled then drop_commands(dg, count + 1); HELD[dg] = count end
  dg.n, dg.buf, dg.base = count, buf, base
  if err then
    if body then err = err .. " (offset in the decompressed datagram)" end
    dg.err_off, dg.err, dg.dirty = err_off, err, true
  elseif padding then
    dg.padding, dg.dirty = padding, true
  end
  return dg
end
-- (for other code: a datagram of its own, not the dissector's reused tables)
MP.enet_parse = function(raw, body) return parse(raw, body, nil) end

-- the detection rule of enet/detect.py looks_like_enet
local function in_list(list, x) for i = 1, #list do if list[i] == x then return true end end return false end
local function looks_like_enet(raw)
  if #raw < HW.size + ES.command_header_size then return false end
  local dg = parse(raw, nil, DG_RAW)
  if dg.opaque and EP.compression ~= "none" then -- checked after decompressing with the hosts' codec
    local body = MP.decompress(EP.compression, ssub(raw, dg.header_size + 1), ES.max_mtu - dg.header_size)
    if body == nil then return false end
    dg = parse(raw, body, DG_BODY)
  end
  if dg.opaque or dg.err or dg.n == 0 or dg.n > ES.max_packet_commands then return false end
  local cmds = dg.commands
  for i = 1, dg.n do
    local c = cmds[i]
    local d, v = c.def, c
    if not in_list(d.sent_flags, c.flags) then return false end
    if d.delivery == nil and d.name ~= "ACKNOWLEDGE" and v.channel ~= ES.control_channel then return false end
    if v.mtu and not (ES.min_mtu <= v.mtu and v.mtu <= ES.max_mtu and ES.min_window_size <= v.window_size
                      and v.window_size <= ES.max_window_size) then return false end
  end
  return true
end
MP.looks_like_enet = looks_like_enet

-- Conversations, delivery, reassembly ----------------------------------------------------------------
local econvs, plans = {}, {}
local MAX_GROUPS = ES.max_groups
local SEEN_WINDOW = ES.seen_window

local SEEN_TOTAL = ES.seen_total

-- the last SEEN_WINDOW keys, in a ring: a key is in the set while its slot holds it (a list with its
-- head cleared as it goes would have nils before its border, where # may answer any border: the window
-- then stopped forgetting, and after 65536 sequence numbers every new packet read as a repeat). n keys,
-- the newest in slot pos, the oldest in slot (pos - n) % SEEN_WINDOW + 1.
-- The windows of a capture together hold at most SEEN_TOTAL keys (the reader's SeenBudget): they are
-- kept in a list, least recently added to first, and past the total the first forgets its oldest key
-- (a window left empty is taken off the list, its tables let go), so a flood of peers stays bounded.
local seen_total, seen_first, seen_last = 0, nil, nil
local function recent() return { set = {}, ring = {}, pos = 0, n = 0 } end

local function seen_unlink(r)
  if r.prev then r.prev.next = r.next else seen_first = r.next end
  if r.next then r.next.prev = r.prev else seen_last = r.prev end
  r.prev, r.next, r.listed = nil, nil, false
end

local function recent_forget_oldest(r)
  local slot = (r.pos - r.n) % SEEN_WINDOW + 1
  r.set[r.ring[slot]], r.ring[slot] = nil, nil
  r.n, seen_total = r.n - 1, seen_total - 1
  if r.n == 0 then
    seen_unlink(r)
    r.set, r.ring = {}, {} -- (a table keeps the size it grew to)
  end
end

local function recent_add(r, key)
  local set = r.set
  if set[key] then return false end
  local pos = r.pos % SEEN_WINDOW + 1
  local old = r.ring[pos]
  -- the new key goes in before the oldest goes out: a full window then holds SEEN_WINDOW + 1 keys for a
  -- moment, so Lua's rehash sizes the set's hash part for that (twice SEEN_WINDOW, a power of two) and
  -- later keys find free slots. Out first, a full window kept exactly SEEN_WINDOW keys in a hash part of
  -- exactly that size: every new key that collided found no free slot and rehashed all SEEN_WINDOW keys
  -- (~60 us a command once the window had filled, measured)
  set[key], r.ring[pos], r.pos = true, key, pos
  if old ~= nil then
    set[old] = nil -- the window is full: its oldest key makes room
  else
    r.n, seen_total = r.n + 1, seen_total + 1
  end
  if seen_last ~= r then -- (most recently added to: last in the list)
    if r.listed then seen_unlink(r) end
    r.prev, r.listed = seen_last, true
    if seen_last then seen_last.next = r else seen_first = r end
    seen_last = r
  end
  while seen_total > SEEN_TOTAL do recent_forget_oldest(seen_first) end
  return true
end

-- a window nobody reads any more (its direction began a new session): its keys no longer count
local function recent_release(r)
  if r.listed then
    seen_total = seen_total - r.n
    seen_unlink(r)
  end
  r.set, r.ring, r.n = {}, {}, 0
end

local function new_direction()
  return { reliable = recent(), unreliable = recent(), unsequenced = recent(), groups = {}, ngroups = 0, pending = 0,
           dropped = recent(), channel_fragments = {} }
end

-- a frame's conversation and sender by its address texts and ports, looked up nested: the key texts
-- are made once per direction of a conversation, not per frame (each text joined is a new string)
local econv_at = {}
-- (peek: only a conversation already kept, else nil and nothing kept: the heuristic looks at every UDP
-- flow of a capture, and a flow that is not ENet must cost no memory)
local function econv_of(pinfo, peek)
  local src, dst = tostring(pinfo.src), tostring(pinfo.dst)
  local sport, dport = pinfo.src_port, pinfo.dst_port
  local by_dst = econv_at[src]
  local by_ports = by_dst and by_dst[dst]
  local hit = by_ports and by_ports[sport * 65536 + dport]
  if hit then return hit[1], hit[2] end
  local a = src .. ":" .. PORT_TEXT[sport]
  local b = dst .. ":" .. PORT_TEXT[dport]
  local key = a < b and (a .. " " .. b) or (b .. " " .. a)
  local c = econvs[key]
  if c == nil then
    if peek then return nil end
    c = { key = key, mp_key = "e " .. key, dirs = {} }
    econvs[key] = c
  end
  if by_dst == nil then by_dst = {}; econv_at[src] = by_dst end
  if by_ports == nil then by_ports = {}; by_dst[dst] = by_ports end
  by_ports[sport * 65536 + dport] = { c, a }
  return c, a
end

local function dir_of(c, sender)
  local d = c.dirs[sender]
  if d == nil then d = new_direction(); c.dirs[sender] = d end
  return d
end

-- Fragment reassembly, bounded as godot_dissect.enet.reassembly bounds it (the spec's limits): what a
-- peer holds is charged per fragment at least the data an ENet sender puts in a fragment at the smallest
-- MTU (a fragment of 0 bytes still costs an entry); at most REASSEMBLY_CHANNEL_FRAGMENTS fragments per
-- channel, MAX_GROUPS groups and the host's maximumWaitingData bytes (preference enet.max_reassembly) per
-- direction, and MAX_HELD_BYTES across every peer of the capture; a group fed nothing for
-- REASSEMBLY_STALE_SECONDS is given up. Past a bound the least recently fed group goes first (of the
-- channel, the direction, or the whole capture), as in the Python reader; expert info on the frame that went past it says which group
-- was given up and what it held, and later fragments of that group are marked dropped.
-- Per frame only the decision is kept (for re-dissection): a shared constant for most, a two-entry
-- table for a fragment held, the packet's bytes only in the frame that completes a group.
local FRAGMENT_CMD_SIZE
for _, c in ipairs(ES.commands) do if c.fragment_key and FRAGMENT_CMD_SIZE == nil then FRAGMENT_CMD_SIZE = c.size end end
local MIN_FRAGMENT_DATA = ES.min_mtu - HW.size - ES.sent_time.size - FRAGMENT_CMD_SIZE
local MAX_HELD = ES.max_held_bytes
local DUPLICATE, DELIVER, LATE = { what = "duplicate" }, { what = "deliver" }, { what = "dropped", why = "a fragment of a group given up earlier" }
local DISAGREES = { what = "dropped", why = "fragment disagrees with its group's count or length" }
local held_total = 0 -- charged bytes of every open group of the capture
-- every open group in least-recently-fed order, across peers: a queue with lazy deletion (an entry is
-- current while its stamp is the group's); compacted when stale entries outnumber open groups
-- (explicit head and tail: `#` is unreliable on a table whose first entries were removed)
local lru_g, lru_s, lru_head, lru_tail, stamp, open_groups = {}, {}, 1, 0, 0, 0

local function touch(g)
  stamp = stamp + 1
  g.stamp = stamp
  lru_tail = lru_tail + 1
  lru_g[lru_tail], lru_s[lru_tail] = g, stamp
  if lru_tail - lru_head > 4 * open_groups + 4096 then
    local ng, ns, n = {}, {}, 0
    for i = lru_head, lru_tail do
      local x = lru_g[i]
      if x.open and x.stamp == lru_s[i] then n = n + 1; ng[n], ns[n] = x, lru_s[i] end
    end
    lru_g, lru_s, lru_head, lru_tail = ng, ns, 1, n
  end
end

local function release(g)
  if not g.open then return end
  local dir = g.dir
  g.open = false
  dir.groups[g.key] = nil
  dir.ngroups = dir.ngroups - 1
  dir.pending = dir.pending - g.held
  dir.channel_fragments[g.channel] = dir.channel_fragments[g.channel] - g.got
  held_total = held_total - g.held
  open_groups = open_groups - 1
  g.have, g.offs, g.datas = nil, nil, nil
end

-- give a group up to bound memory: the text for the expert info of the frame that went past the bound
-- (the bound first: Wireshark cuts an expert message at 240 characters)
local function give_up(g, why)
  release(g)
  recent_add(g.dir.dropped, g.key)
  return sfmt("group dropped: %s; %s group from frame %d held %d of %d fragments, %d of %d bytes",
              why, g.name, g.first, g.got, g.count, g.size, g.total)
end

-- the bounds, narrowest first (as EnetReassembler._enforce): this direction's groups and bytes, then the
-- capture's; each gives up the least recently fed group
local function enforce(dir, channel, now, out)
  while (dir.channel_fragments[channel] or 0) > ES.reassembly_channel_fragments do
    local oldest
    for _, x in pairs(dir.groups) do
      if x.channel == channel and (oldest == nil or x.stamp < oldest.stamp) then oldest = x end
    end
    out[#out + 1] = give_up(oldest, sfmt("channel %d holds more than %d fragments (REASSEMBLY_CHANNEL_FRAGMENTS)",
                                         channel, ES.reassembly_channel_fragments))
  end
  while dir.ngroups > MAX_GROUPS or dir.pending > EP.max_reassembly do
    local oldest
    for _, x in pairs(dir.groups) do if oldest == nil or x.stamp < oldest.stamp then oldest = x end end
    local why = dir.ngroups > MAX_GROUPS
      and sfmt("this direction holds %d groups > %d (REASSEMBLY_PEER_GROUPS)", dir.ngroups, MAX_GROUPS)
      or sfmt("this direction holds %d bytes > %d (preference enet.max_reassembly; a fragment counts at least %d)",
              dir.pending, EP.max_reassembly, MIN_FRAGMENT_DATA)
    out[#out + 1] = give_up(oldest, why)
  end
  -- the least recently fed group of the capture: given up while too much is held, or when stale
  while lru_head <= lru_tail do
    local g, s = lru_g[lru_head], lru_s[lru_head]
    local current = g.open and g.stamp == s
    if current and held_total <= MAX_HELD and now - g.time <= ES.reassembly_stale_seconds then break end
    lru_g[lru_head], lru_s[lru_head], lru_head = nil, nil, lru_head + 1
    if current then
      out[#out + 1] = give_up(g, held_total > MAX_HELD
        and sfmt("all peers hold %d bytes > %d (MAX_HELD_BYTES)", held_total, MAX_HELD)
        or sfmt("no fragment for %g s (REASSEMBLY_STALE_SECONDS)", ES.reassembly_stale_seconds))
    end
  end
end

-- one delivery decision per data command, made once (first pass) and kept by frame number:
-- { what = "deliver" | "duplicate" | "fragment" | "reassembled" | "dropped", data, got, count, first, wire,
--   evicted = { texts of groups given up to make room } }
-- `share`: the wire bytes of the frame that carried this command's data (stats.lua's wire_bytes); a
-- reassembled packet's wire is the sum of its fragments' shares
local function fragment(dir, cmd, frame, now, raw_data, share)
  local d, v = cmd.def, cmd
  local parts = {}
  for _, k in ipairs(d.fragment_key) do parts[#parts + 1] = tostring(v[k]) end
  local key = d.number .. ":" .. tconcat(parts, ":")
  if dir.dropped.set[key] then return LATE end
  local g = dir.groups[key]
  if g == nil then
    g = { count = v.fragment_count, total = v.total_length, got = 0, have = {}, offs = {}, datas = {}, first = frame,
          held = 0, wire = 0, size = 0, dir = dir, key = key, open = true, name = d.name, channel = v.channel }
    g.info = { __index = { what = "fragment", count = g.count, first = frame } }
    dir.groups[key] = g
    dir.ngroups = dir.ngroups + 1
    open_groups = open_groups + 1
  elseif g.count ~= v.fragment_count or g.total ~= v.total_length then
    return DISAGREES
  end
  if g.have[v.fragment_number] then return DUPLICATE end
  local cost = #raw_data > MIN_FRAGMENT_DATA and #raw_data or MIN_FRAGMENT_DATA
  g.have[v.fragment_number] = true
  g.got = g.got + 1
  g.offs[g.got], g.datas[g.got] = v.fragment_offset, raw_data
  g.held, g.size, g.wire = g.held + cost, g.size + #raw_data, g.wire + share
  dir.pending = dir.pending + cost
  dir.channel_fragments[g.channel] = (dir.channel_fragments[g.channel] or 0) + 1
  held_total = held_total + cost
  g.time = now
  touch(g)
  if g.got < g.count then
    local evicted = {}
    enforce(dir, g.channel, now, evicted)
    if not g.open then return { what = "dropped", why = evicted[#evicted], evicted = evicted } end
    if evicted[1] then
      return { what = "fragment", got = g.got, count = g.count, first = g.first, evicted = evicted }
    end
    return setmetatable({ got = g.got }, g.info) -- kept per frame: the count of fragments so far, the rest shared
  end
  local order = {}
  for i = 1, g.got do order[i] = i end
  local offs, datas = g.offs, g.datas
  tsort(order, function(x, y) return offs[x] < offs[y] end)
  local out, at, covered = {}, 0, 0
  for _, i in ipairs(order) do
    local off, data = offs[i], datas[i]
    if off > at then out[#out + 1] = srep("\0", off - at); at = off end
    if off + #data > at then
      local reach = off + #data < g.total and off + #data or g.total
      if reach > at then covered = covered + reach - at end
      out[#out + 1] = ssub(data, at - off + 1); at = off + #data
    end
  end
  release(g)
  if covered ~= g.total then
    -- the bytes no fragment covers would be uninitialised memory in ENet's packet: no packet (as the reader)
    return { what = "dropped", why = sfmt("incomplete %s group from frame %d: %d of %d fragments, %d of %d bytes "
                                          .. "(fragments cover %d of %d bytes)", g.name, g.first, g.got, g.count,
                                          g.size, g.total, covered, g.total) }
  end
  local data = ssub(tconcat(out), 1, g.total)
  return { what = "reassembled", data = data, count = g.count, first = g.first, wire = g.wire }
end

local function decide(conv, dir, cmd, frame, now, raw_data, share)
  local d, v = cmd.def, cmd
  if d.delivery == "reliable" then
    -- one window for all channels of a direction (SEEN_WINDOW, as the reader's)
    if not recent_add(dir.reliable, v.channel * 65536 + v.reliable_seq) then return DUPLICATE end
  end
  if d.fragment_key then return fragment(dir, cmd, frame, now, raw_data, share) end
  if d.delivery == "unsequenced" then
    if not recent_add(dir.unsequenced, v.unsequenced_group) then return DUPLICATE end
  elseif d.delivery == "unreliable" then
    if not recent_add(dir.unreliable, v.channel .. ":" .. v.reliable_seq .. ":" .. (v.unreliable_seq or "")) then
      return DUPLICATE
    end
  end
  return DELIVER
end

-- Showing --------------------------------------------------------------------------------------------
-- Wireshark's TreeItem methods, called as functions where the tree is Wireshark's (not NULL_ITEM):
-- item:add(...) looks the method up through the userdata's metatable on every call
local ti_add, ti_generated, ti_append = TreeItem.add, TreeItem.set_generated, TreeItem.append_text

-- each command kind's items after the command byte: field, offset in the command, length
for _, d in ipairs(ES.commands) do
  local fs, offs, lens = { F_CHANNEL, F_RELIABLE_SEQ }, { CH.command.size, CH.command.size + CH.channel.size },
                         { CH.channel.size, CH.reliable_seq.size }
  local q = ES.command_header_size
  for _, f in ipairs(d.fields) do
    fs[#fs + 1], offs[#offs + 1], lens[#lens + 1] = EF[f.abbrev], q, f.size
    q = q + f.size
  end
  d.item_fields, d.item_offs, d.item_lens = fs, offs, lens
end

-- the command's item, its range, and its data's range (nil when it has no data bytes). Each item has
-- a range of its own bytes, made from the datagram's Tvb (a TvbRange is a Wireshark object: one per
-- item, and none made twice; the data's is the packet's range for the multiplayer layer too)
local function show_command(ctree, ctvb, cmd)
  local d, off = cmd.def, cmd.off
  local whole = ctvb(off, cmd.size) -- the command's item and its generated fields share it
  -- (the label given to add() is the item's text: the whole of it, one call less than add and append_text)
  local label
  if d.data_length then label = sfmt("%s ch %d seq %d, %d bytes", d.name, cmd.channel, cmd.reliable_seq, cmd.data_len)
  else label = sfmt("%s ch %d seq %d", d.name, cmd.channel, cmd.reliable_seq) end
  local item = ti_add(ctree, enet, whole, label)
  local byte_range = ctvb(off, CH.command.size)
  for i = 1, #CMD_BITS do ti_add(item, CMD_BITS[i].f, byte_range) end -- (numeric loops: ipairs calls C per step)
  local fs, offs, lens = d.item_fields, d.item_offs, d.item_lens
  for i = 1, #fs do ti_add(item, fs[i], ctvb(off + offs[i], lens[i])) end
  local drange = nil
  if d.data_length and cmd.data_len > 0 then
    drange = ctvb(cmd.data_off, cmd.data_len)
    ti_add(item, F_DATA, drange)
  end
  if cmd.channel_count then
    local major = ES.godot_major_by_channel_count[cmd.channel_count]
    if major then ti_generated(ti_add(item, F_GODOT, cmd.size == d.size and whole or ctvb(off, d.size), major)) end
  end
  return item, whole, drange
end

-- the ENet item's ", peer 0x..." by peer id (at most 4096 of them, made once each)
local PEER_TEXT = setmetatable({ ["?"] = ", peer ?" }, { __index = function(t, id)
  local text = sfmt(", peer 0x%03x", id)
  t[id] = text
  return text
end })

-- the commands that say which side is the client or which Godot it is (CONNECT, VERIFY_CONNECT)
for _, d in ipairs(ES.commands) do
  d.greets = d.name == "CONNECT"
  for _, f in ipairs(d.fields) do if f.name == "channel_count" then d.greets = true end end
end

-- the parts of the frame's Info column (one list reused: ENet's dissector is not called inside itself,
-- and the text is made before the next frame)
local INFO = {}

-- What a frame hands the multiplayer layer: its packets (a list of tables, one per data command) and what
-- they share (env). The layer reads them during MP.deliver and keeps none of them (its memos and caches
-- copy what they keep), so one list, one table per position and one env serve every frame: each was
-- garbage per frame (a 9-key table is a 16-slot hash, ~0.7 kB), and the collector's work grows with it.
-- Only the first POOL_SLOTS positions are pooled, as the command tables are: a hostile datagram of thousands
-- of small data commands gets tables of its own (garbage after its frame), not a pool that keeps them all,
-- with its frame's ranges and data, for the rest of the session
local DELIVERIES, DELIVERY_AT, ENV = {}, {}, {}
local function delivery_at(i) -- (every key set afresh by the caller: a reused table keeps its old ones)
  local p = DELIVERY_AT[i]
  if p == nil then
    p = { tvb = nil, range = nil, off = nil, data = nil, channel = nil, delivery = nil, wire = nil, frame = nil,
          index = nil }
    if i <= POOL_SLOTS then DELIVERY_AT[i] = p end
  end
  return p
end

local function dissect(tvb, pinfo, given, conv, sender) -- (conv, sender: the heuristic's, when it ran)
  local tree = tree_of(given)
  local null = tree == NULL_ITEM -- no tree: no items, no TvbRanges
  local raw = tvb:raw()
  if conv == nil then conv, sender = econv_of(pinfo) end
  local body
  local dg0 = parse(raw, nil, DG_RAW)
  -- the item's text given whole (its title and the peer id of the header), one call less than append_text
  local root = null and NULL_ITEM or ti_add(tree, enet, tvb(), ENET_TITLE .. PEER_TEXT[dg0.peer_id or "?"])
  local ctvb = tvb
  local info, ninfo = INFO, 0
  if dg0.opaque and EP.compression ~= "none" and MP.decompress then
    local ok, out, err_off, err = pcall(MP.decompress, EP.compression, ssub(raw, dg0.header_size + 1), ES.max_mtu - dg0.header_size)
    if ok and out then
      body = out
    else
      dg0.err_off, dg0.err, dg0.dirty = dg0.header_size + (err_off or 0),
        sfmt("compressed body could not be decoded as %s: %s", EP.compression, tostring(err or out)), true
    end
  end
  local dg = body and parse(raw, body, DG_BODY) or dg0
  if dg.word and not null then
    local hrange = tvb(0, HW.size)
    for i = 1, #HEADER_BITS do ti_add(root, HEADER_BITS[i].f, hrange) end
    if dg.sent_time then ti_add(root, F_SENT_TIME, tvb(HW.size, ES.sent_time.size)) end
  end
  if body then
    ctvb = ByteArray.new(ssub(raw, 1, dg.header_size) .. body, true):tvb("Decompressed ENet datagram")
  end
  if dg.opaque then
    local it = root:add(F_COMPRESSED_BODY, tvb(dg.header_size))
    it:add_proto_expert_info(EE.compressed, "compressed ENet datagram; the codec is not on the wire (choose one in "
      .. "the preference enet.compression)")
    ninfo = ninfo + 1
    info[ninfo] = sfmt("compressed (%d bytes)", tvb:len() - dg.header_size)
  end
  -- each Pinfo attribute read is a call into Wireshark: `visited` is read when something needs it (a
  -- CONNECT or VERIFY_CONNECT, a conversation without a client yet, data to deliver), not per frame
  local visited = nil
  local cmds, ncmds = dg.commands, dg.n
  -- the frame's length is shared by the data bytes of its data commands (duplicates too: their share is
  -- nobody's), as godot_dissect.enet.reassembly gives Record.wire_bytes
  local ndata, data_bytes = 0, 0
  local info0 = ninfo -- (command i's part of the Info column is info[info0 + i])
  for i = 1, ncmds do
    local c = cmds[i]
    local d = c.def
    info[info0 + i] = d.name
    if d.delivery then
      ndata, data_bytes = ndata + 1, data_bytes + c.data_len
    elseif d.greets then
      -- the conversation's client and Godot version, from CONNECT / VERIFY_CONNECT
      if visited == nil then visited = pinfo.visited end
      if d.name == "CONNECT" then
        if conv.client ~= sender or conv.connect_id ~= c.connect_id then
          conv.client, conv.connect_id, conv.client_id = sender, c.connect_id, c.data
          conv.connect_seen = true -- the client's side is known for sure
          for _, dir in pairs(conv.dirs) do
            local open = {}
            for _, g in pairs(dir.groups) do open[#open + 1] = g end
            for _, g in ipairs(open) do release(g) end -- a new connection: the old one's groups are gone
            for _, w in ipairs({ dir.reliable, dir.unreliable, dir.unsequenced, dir.dropped }) do recent_release(w) end
            for k, x in pairs(new_direction()) do dir[k] = x end
          end
        end
      end
      local major = c.channel_count and ES.godot_major_by_channel_count[c.channel_count]
      if major and not visited then
        conv.major = major
        conv.major_evidence = sfmt("ENet multiplayer: %s channel count %d = Godot %d", d.name, c.channel_count, major)
      end
    end
  end
  if conv.client == nil then
    if visited == nil then visited = pinfo.visited end
    if not visited then conv.client = sender end
  end
  -- what delivering needs, read only for a frame with data commands (44% of them in a game's traffic)
  local number, plan, fresh, uniform, dir, weight, deliveries = nil, nil, false, nil, nil, 0, nil
  local ndelivered, dbuf, dbase = 0, dg.buf, dg.base
  if ndata > 0 then
    if visited == nil then visited = pinfo.visited end
    number = pinfo.number
    dir = dir_of(conv, sender)
    plan = plans[number]
    fresh = plan == nil
    -- a frame whose data commands all got one decision keeps it bare (a shared constant for most frames:
    -- no table per frame), for every data command of the frame (a second datagram read in the same frame,
    -- e.g. inside an ICMP error, then shares it; with a list, its commands past the first's are decided)
    if not fresh and plan.what then uniform = plan end
    weight = data_bytes > 0 and pinfo.len / data_bytes or 0
    if ndata <= POOL_SLOTS then
      deliveries = DELIVERIES
      for k = #deliveries, 1, -1 do deliveries[k] = nil end -- (the last frame's)
    else
      deliveries = {} -- (a list of its own: the pooled one stays POOL_SLOTS long)
    end
  end
  -- first pass: the decisions so far, `one` while they are all the same, else `list` by command index
  local one, list = nil, nil
  local now = nil -- capture time, for REASSEMBLY_STALE_SECONDS (first pass only; read when a fragment needs it)
  if null and ndata == 0 then ncmds = 0 end -- (nothing to show or deliver: the Info parts are in place)
  for i = 1, ncmds do
    local c = cmds[i]
    local d = c.def
    local item, whole, drange = NULL_ITEM, nil, nil
    if not null then item, whole, drange = show_command(root, ctvb, c) end
    if d.delivery then
      local at = c.data_off - dbase
      local data = ssub(dbuf, at + 1, at + c.data_len)
      local p = uniform
      if p == nil then
        -- (a second datagram in the same frame, e.g. inside an ICMP error, gets decided then too)
        p = not fresh and plan[i] or nil
        if p == nil then
          if d.fragment_key and now == nil then now = fresh and pinfo.abs_ts or 0 end
          p = decide(conv, dir, c, number, now, data, weight * c.data_len)
          if not fresh then plan[i] = p
          elseif list then list[i] = p
          elseif one == nil then one = p
          elseif p ~= one then -- the first decision that differs: the earlier ones by index
            list = {}
            for j = 1, i - 1 do if cmds[j].def.delivery then list[j] = one end end
            list[i] = p
          end
        end
      end
      if not null then ti_generated(ti_add(item, F_DELIVERY, whole, d.delivery)) end
      if p.evicted then -- groups given up to bound memory when this fragment came
        for _, why in ipairs(p.evicted) do
          if why ~= p.why then item:add_proto_expert_info(EE.dropped, why) end
        end
      end
      if p.what == "duplicate" then
        if not null then ti_generated(ti_add(item, F_DUP, whole, true)) end
      elseif p.what == "fragment" then
        if not null then
          item:add(F_FRAGMENTS, whole, sfmt("%d of %d (first in frame %d)", p.got, p.count, p.first))
            :set_generated()
        end
        info[info0 + i] = sfmt("%s %d/%d", d.name, p.got, p.count)
      elseif p.what == "dropped" then
        item:add_proto_expert_info(EE.dropped, p.why)
      elseif p.what == "reassembled" then
        local rtvb = ByteArray.new(p.data, true):tvb("Reassembled ENet packet")
        local it = item:add(F_FRAGMENTS, ctvb(c.off, c.size), sfmt("%d fragments, %d bytes (first in frame %d)",
                                                                    p.count, #p.data, p.first))
        it:set_generated()
        it:add_proto_expert_info(EE.reassembled, sfmt("%d fragments reassembled: %d bytes", p.count, #p.data))
        ndelivered = ndelivered + 1
        local dv = delivery_at(ndelivered)
        dv.tvb, dv.range, dv.off, dv.data, dv.channel = rtvb, rtvb(), nil, p.data, c.channel
        dv.delivery, dv.wire, dv.frame, dv.index = d.delivery, p.wire, number, ndelivered
        deliveries[ndelivered] = dv
      else
        ndelivered = ndelivered + 1
        local dv = delivery_at(ndelivered)
        dv.tvb, dv.range = ctvb, null and NULL_ITEM or drange or ctvb(c.data_off, c.data_len)
        dv.off, dv.data, dv.channel, dv.delivery = c.data_off, data, c.channel, d.delivery
        dv.wire, dv.frame, dv.index = weight * c.data_len, number, ndelivered
        deliveries[ndelivered] = dv
      end
    end
  end
  ninfo = info0 + dg.n
  -- (a frame without data commands keeps nothing: it has nothing to decide again)
  if fresh then
    if ndata > 0 then plans[number] = list or one end
  elseif ndata > 0 and not uniform then
    local first, same = nil, true
    for i = 1, dg.n do
      local x = plan[i]
      if x == nil then elseif first == nil then first = x elseif x ~= first then same = false; break end
    end
    plans[number] = same and first or plan
  end
  if dg.err then
    local at = dg.err_off
    local len = (body and (#body + dg.header_size) or tvb:len()) - at
    local etvb = body and ctvb or tvb
    local it
    if len > 0 then it = root:add(F_ERROR, etvb(at, len), sfmt("offset %d: %s", at, dg.err))
    else it = root:add(F_ERROR, etvb(0, 0), sfmt("offset %d: %s", at, dg.err)) end
    it:add_proto_expert_info(EE.malformed, sfmt("offset %d: %s", at, dg.err))
    ninfo = ninfo + 1
    info[ninfo] = "malformed"
  end
  local major, evidence = conv.major, conv.major_evidence
  if EP.major ~= 0 then major, evidence = EP.major, "chosen by the user (preference enet.godot_major)" end
  -- (no range: Wireshark's Lua then gives the item offset 0, length 0 of this dissector's Tvb, as
  -- tvb(0, 0) did, without making a TvbRange)
  if major and not null then ti_generated(ti_add(root, F_GODOT, major)) end
  -- the Protocol and Info columns: the multiplayer layer's when it reads the frame's packets (it
  -- replaces the columns), else ENet's (each column write is a few calls into Wireshark)
  local written = false
  if ndelivered > 0 and MP.deliver then
    -- what the frame's packets share; each packet is message `index` of `frame`
    local env = ENV
    env.key, env.major, env.evidence = conv.mp_key, major, evidence
    env.direction, env.client_id, env.transport = conv.client == sender and "c2s" or "s2c", conv.client_id, "enet"
    env.conv, env.direction_known = conv, conv.connect_seen or false
    -- (the pooled tables hold this frame's Tvb, ranges and data until the next frame's: read by nobody)
    written = MP.deliver(deliveries, env, tvb, pinfo, tree, root ~= NULL_ITEM and root or given, number, visited)
  end
  if not written then
    local cols = pinfo.cols
    cols.protocol = "ENet"
    cols.info = ninfo == 1 and "ENet " .. info[1] or "ENet " .. tconcat(info, ", ", 1, ninfo)
  end
  return #raw -- (tvb:len() is a call into Wireshark)
end

-- Registration ---------------------------------------------------------------------------------------
function enet.dissector(tvb, pinfo, tree)
  enter(tree)
  local c, sender = econv_of(pinfo)
  -- the heuristic found the conversation at frame c.from and made ENet the UDP conversation's dissector,
  -- which Wireshark's Lua sets from the conversation's first frame on: a second pass (tshark -2, a redraw)
  -- brings the datagrams before c.from here too, which the first pass (and read_pcap) left alone
  if c.from and pinfo.number < c.from then return 0 end
  return dissect(tvb, pinfo, tree, c, sender)
end

local function heur_enet(tvb, pinfo, tree)
  enter(tree)
  if not EP.heuristic then return false end
  local c, sender = econv_of(pinfo, true)
  if c == nil or not c.confirmed then
    if not looks_like_enet(tvb:raw()) then return false end
    c, sender = econv_of(pinfo)
    c.confirmed, c.from = true, pinfo.number
  elseif pinfo.number < c.from then return false -- (a second pass: see enet.dissector)
  end
  pinfo.conversation = enet
  dissect(tvb, pinfo, tree, c, sender)
  return true
end

local enet_registered = ""
local function register_enet_ports()
  local t = DissectorTable.get("udp.port")
  if enet_registered ~= "" then t:remove(enet_registered, enet) end
  local want = tostring(enet.prefs.udp_ports or "")
  if want ~= "" then t:add(want, enet) end
  enet_registered = want
end

function enet.prefs_changed() read_enet_prefs(); register_enet_ports() end
function enet.init()
  read_enet_prefs()
  econvs, econv_at, plans, held_total = {}, {}, {}, 0
  seen_total, seen_first, seen_last = 0, nil, nil
  lru_g, lru_s, lru_head, lru_tail, stamp, open_groups = {}, {}, 1, 0, 0, 0
  if MP.reset then MP.reset() end
end

read_enet_prefs()
register_enet_ports()
DissectorTable.get("udp.port"):add_for_decode_as(enet)
enet:register_heuristic("udp", heur_enet)
