-- Godot high-level multiplayer: a template appended to godot.lua by godot_dissect/lua/mp_generator.py.
-- The layouts of MP_SPEC.mp (spec/multiplayer.py: Int, Choice, Text, Blob, When, Repeat, Switch) are
-- compiled, each item list once, to a Lua function that reads it into a tree (compile_items: one
-- place per kind, no layout written here); Variants are shown by engine.lua's `show`. Transports:
-- ENet channels (from enet.lua, MP.payload) and WebSocket messages (heuristic on "ws").
-- Path caches are kept per conversation and sending peer; what a message resolved on the first
-- pass is kept by frame, so a second pass shows the same tree.
-- @MP_SPEC@
local MS = MP_SPEC.mp

-- A protocol of its own (filter name godot_mp, Protocol column "GodotMP"): ENet hands each frame's
-- delivered packets to it through a Dissector handle, so frame.protocols and io,phs list it after enet;
-- the Variants of its arguments are godot.* fields inside its items.
local godot_mp = Proto("godot_mp", "Godot high-level multiplayer")
MP.proto = godot_mp
local MP_COLUMN = "GodotMP"

-- ProtoFields: one per item name of every layout, plus the filterable summary fields -----------------
local IF, BF = {}, {}  -- item name -> ProtoField; bits name -> ProtoField
local BF_MASKED = {}   -- bits names whose field has its mask: added from the bytes, shown as bits
local HEX = {}         -- item names that are flag words (they have bit fields): shown in hex
local WIDE = {}        -- item names whose field is 64-bit: values are passed as Int64/UInt64
local int_kinds = {}   -- name -> { size, signed, mixed }
local text_names, blob_names, bits_names = {}, {}, {}
local SKIP = { command = true } -- the command byte has its own fields (godot_mp.command is its name)

local function note_int(name, code)
  local k = int_kinds[name]
  if k == nil then int_kinds[name] = { size = code.size, signed = code.signed }; return end
  if k.signed ~= code.signed then k.mixed = true end
  if code.size > k.size then k.size = code.size end
end

-- bits of a `size`-byte word: one masked field per name, unless a name sits in words of two shapes
local function collect_bits(list, size, owner)
  for _, b in ipairs(list or {}) do
    local seen = bits_names[b.name]
    if seen == nil then
      bits_names[b.name] = { b = b, size = size, shift = b.shift, width = b.width }
    elseif seen.size ~= size or seen.shift ~= b.shift or seen.width ~= b.width then
      seen.conflict = true
    end
    if owner and not SKIP[b.name] then HEX[owner] = true end
  end
end
local collect
collect = function(items)
  for _, it in ipairs(items) do
    local k = it.kind
    if k == "when" then collect({ it.item })
    elseif k == "int" then
      if not SKIP[it.name] then note_int(it.name, it.code) end
      collect_bits(it.bits, it.code.size, it.name)
    elseif k == "choice" then
      for _, code in pairs(it.codes) do note_int(it.name, code) end
      for _, bb in ipairs(it.bits) do collect_bits(bb.bits, bb.size, it.name) end
    elseif k == "text" then text_names[it.name] = true
    elseif k == "blob" then blob_names[it.name] = it
    elseif k == "repeat" then collect(it.items)
    elseif k == "switch" then for _, form in pairs(it.cases) do collect(form.items) end
    end
  end
end
for _, proto in pairs(MS.protocols) do
  for _, c in ipairs(proto.commands) do
    collect_bits(c.flags, proto.command_byte.code.size, nil)
    for _, form in ipairs(c.forms) do collect(form.items) end
  end
end
for _, form in ipairs(MS.enet3_peer_header) do collect(form.items) end
for _, form in ipairs({ MS.enet3_sysmsg, MS.ws3_header, MS.ws3_sys, MS.ws4_peer_id }) do collect(form.items) end

local function label(name) return (name:gsub("_", " "):gsub("^%l", string.upper)) end
local mfields = {}
local function add_field(f) mfields[#mfields + 1] = f; return f end

-- the summary fields: what a message means, the same names in Godot 3 and 4 (filter on these)
local COMMAND_LABEL = "Command" -- (also the start of a command item's label: see command_of)
local MF = {
  kind = add_field(ProtoField.string("godot_mp.kind", "Multiplayer kind")),
  command = add_field(ProtoField.string("godot_mp.command", COMMAND_LABEL)),
  command_id = add_field(ProtoField.uint8("godot_mp.command_id", "Command number", base.DEC)),
  protocol = add_field(ProtoField.string("godot_mp.protocol", "Protocol")),
  sender = add_field(ProtoField.int32("godot_mp.sender", "Sending peer", base.DEC)),
  receiver = add_field(ProtoField.int32("godot_mp.receiver", "Receiving peer", base.DEC)),
  relayed = add_field(ProtoField.bool("godot_mp.relayed", "Relayed by the server")),
  app_bytes = add_field(ProtoField.uint32("godot_mp.app_bytes", "Packet size (as the engine sees it)", base.DEC)),
  transfer = add_field(ProtoField.string("godot_mp.transfer", "Transfer mode")),
  channel_name = add_field(ProtoField.string("godot_mp.channel_name", "Channel")),
  relay = add_field(ProtoField.string("godot_mp.relay", "Relay")),
  error = add_field(ProtoField.string("godot_mp.error", "Malformed")),
  unresolved = add_field(ProtoField.string("godot_mp.unresolved", "Unresolved")),
  node = add_field(ProtoField.string("godot_mp.rpc.node", "Node")),
  node_id = add_field(ProtoField.uint32("godot_mp.rpc.node_id", "Node cache id", base.DEC)),
  method = add_field(ProtoField.string("godot_mp.rpc.method", "Method")),
  method_id = add_field(ProtoField.uint16("godot_mp.rpc.method_id", "Method id", base.DEC)),
  property = add_field(ProtoField.string("godot_mp.rset.property", "Property")),
  argc = add_field(ProtoField.uint8("godot_mp.rpc.argc", "Arguments", base.DEC)),
  arg = add_field(ProtoField.string("godot_mp.rpc.arg", "Argument")),
  peer = add_field(ProtoField.int32("godot_mp.peer", "Peer", base.DEC)),
  evidence = add_field(ProtoField.string("godot_mp.evidence", "Protocol evidence")),
  peer_header = add_field(ProtoField.none("godot_mp.peer_header", "Godot 3 ENet peer header")),
}
-- layout items that ARE a summary field: read into it directly, so the tree has the value once
local ALIAS = { method = "method", property = "property", node_path = "node", method_id = "method_id" }
for item_name, mf in pairs(ALIAS) do IF[item_name] = MF[mf] end

local UINTS = { [1] = ProtoField.uint8, [2] = ProtoField.uint16, [4] = ProtoField.uint32 }
for name, k in pairs(int_kinds) do
  local abbrev = "godot_mp." .. name
  if IF[name] then -- an alias
  elseif k.mixed or k.size > 4 then
    WIDE[name] = (k.signed or k.mixed) and Int64 or UInt64
    IF[name] = add_field((k.signed or k.mixed) and ProtoField.int64(abbrev, label(name), base.DEC)
                         or ProtoField.uint64(abbrev, label(name), base.DEC))
  elseif k.signed then
    IF[name] = add_field(ProtoField.int32(abbrev, label(name), base.DEC))
  else
    IF[name] = add_field(ProtoField.uint32(abbrev, label(name), HEX[name] and base.HEX or base.DEC))
  end
end
for name in pairs(text_names) do
  if IF[name] == nil then IF[name] = add_field(ProtoField.string("godot_mp." .. name, label(name))) end
end
local TEXT_BLOB = {} -- blob names whose bytes are text (shown as a string field)
for name, it in pairs(blob_names) do
  if IF[name] == nil then
    if it.content == "utf8" then
      TEXT_BLOB[name] = true
      IF[name] = add_field(ProtoField.string("godot_mp." .. name, label(name)))
    else
      IF[name] = add_field(ProtoField.bytes("godot_mp." .. name, label(name)))
    end
  end
end
for name, bn in pairs(bits_names) do
  local b = bn.b
  if IF[name] == nil and not SKIP[name] then
    if bn.conflict or UINTS[bn.size] == nil then
      BF[name] = add_field(ProtoField.uint32("godot_mp." .. name, label(name), base.DEC, b.values, nil, b.meaning))
    else
      -- a bit field of its word: Wireshark shows the bits (..1. ....) and reads the value itself
      local mask = (2 ^ b.width - 1) * 2 ^ b.shift
      BF[name] = add_field(UINTS[bn.size]("godot_mp." .. name, label(name), base.DEC, b.values, mask, b.meaning))
      BF_MASKED[name] = true
    end
  elseif not SKIP[name] then
    BF[name] = IF[name]
  end
end
godot_mp.fields = mfields

local ME = {
  malformed = ProtoExpert.new("godot_mp.malformed", "Malformed Godot multiplayer packet", expert.group.MALFORMED,
                              expert.severity.ERROR),
  unresolved = ProtoExpert.new("godot_mp.unresolved.expert", "Path cache id not announced in the capture",
                               expert.group.SEQUENCE, expert.severity.NOTE),
}
godot_mp.experts = { ME.malformed, ME.unresolved }

-- Wireshark's TreeItem methods, called as functions where the tree is Wireshark's (not NULL_ITEM):
-- item:add(...) looks the method up through the userdata's metatable on every call
local ti_add, ti_add_le, ti_generated, ti_hidden = TreeItem.add, TreeItem.add_le, TreeItem.set_generated, TreeItem.set_hidden
local ti_append, ti_set_text, ti_set_len = TreeItem.append_text, TreeItem.set_text, TreeItem.set_len

-- Reading ---------------------------------------------------------------------------------------------
local MPFAIL = {}
-- (inside an argument or value of a list, ctx.arg_label names it as the reader's decode_values does:
-- "argument 1: ...", "value 0: ...")
local function mfail(ctx, off, reason)
  local label = ctx.arg_label
  if label then reason = sfmt("%s %d: %s", label, ctx.arg_i, reason) end
  ctx.err_off, ctx.err = off, reason
  error(MPFAIL, 0)
end

local SIGN_AT, SPAN = {}, {} -- by size in bytes: the first negative value of a signed Int, and 2^bits
for n = 1, 8 do SIGN_AT[n], SPAN[n] = 2 ^ (8 * n - 1), 2 ^ (8 * n) end
local function read_code(raw, pos, code) -- pos 0-based; code {size, signed, le}
  local n, v = code.size, 0
  if n == 4 and code.le then
    local a, b, c, d = sbyte(raw, pos + 1, pos + 4)
    v = ((d * 256 + c) * 256 + b) * 256 + a
  elseif n == 1 then
    v = sbyte(raw, pos + 1)
  elseif code.le then
    for i = n, 1, -1 do v = v * 256 + sbyte(raw, pos + i) end
  else
    for i = 1, n do v = v * 256 + sbyte(raw, pos + i) end
  end
  if code.signed and v >= SIGN_AT[n] then v = v - SPAN[n] end
  return v
end

local function scope_new(parent) return { v = {}, at = {}, parent = parent } end
-- a packet's own scope, made with room for what an RPC's holds (a table constructor's fields size its
-- hash, whatever their names and nil values): filled from empty, `v` grew 1, 2, 4, 8 slots and `at` 1,
-- 2, 4, a reallocation and a rehash a step, per packet (a Godot 3 RPC's scope holds 6 values at 4 offsets)
local function packet_scope()
  return { v = { a = nil, b = nil, c = nil, d = nil, e = nil, f = nil, g = nil, h = nil },
           at = { a = nil, b = nil, c = nil, d = nil }, parent = nil }
end
local function get(s, name)
  while s do
    local x = s.v[name]
    if x ~= nil then return x end
    s = s.parent
  end
  return nil
end
-- where item `name` starts (scope.at holds start offsets: a number, not a span table, per item read)
local function start_of(s, name)
  while s do
    if s.at[name] then return s.at[name] end
    s = s.parent
  end
  return nil
end
local NONE = {} -- an empty list (read only): `x or NONE` makes no table
local function holds(conds, s)
  conds = conds or NONE
  for i = 1, #conds do -- (numeric loops: ipairs calls C per step)
    local c = conds[i]
    local v = get(s, c.name)
    if type(v) ~= "number" then return false end
    if c.op == "==" and v ~= c.operand then return false end
    if c.op == "!=" and v == c.operand then return false end
    if c.op == "&" and band(v, c.operand) == 0 then return false end
  end
  return true
end

local function check_size(ctx, form, size, at, what)
  if form.exact_size and size ~= form.exact_size then
    mfail(ctx, at, sfmt("%s: %d bytes, the engine takes exactly %d", what, size, form.exact_size))
  end
  if size < (form.min_size or 0) then
    mfail(ctx, at, sfmt("%s: %d bytes, the engine needs at least %d", what, size, form.min_size))
  end
end

-- ctx: { tvb, off (tvb offset of raw byte 0), raw, d (dialect), tree items, args = {} }. One table, set
-- afresh for each message (ctx_for): nothing keeps it past its message, and a table per message was an
-- allocation (and garbage) per packet. A relayed packet is read with its carrier's ctx, after it.
-- `range`: a TvbRange of all of raw the caller has made already (or nil), handed out for it by rng
local CTX = { tvb = nil, off = 0, raw = nil, d = nil, null = false, range = nil, len = 0, base = nil, root = nil,
              whole = nil, hint = nil, args = nil, inner = nil, err = nil, err_off = nil, arg_label = nil,
              arg_i = 0 }
local function ctx_for(tvb, off, raw, d, null, range)
  local ctx = CTX
  ctx.tvb, ctx.off, ctx.raw, ctx.d, ctx.null, ctx.range, ctx.len = tvb, off, raw, d, null, range, #raw
  ctx.base, ctx.root, ctx.hint, ctx.args, ctx.inner, ctx.err, ctx.err_off = nil, nil, nil, nil, nil, nil, nil
  ctx.whole, ctx.arg_label = nil, nil -- (arg_label: left set when an argument failed)
  return ctx
end
local function rng(ctx, s, e)
  if ctx.null then return NULL_ITEM end -- no tree: no TvbRange either
  if s == 0 and e == ctx.len and ctx.range then return ctx.range end -- (each TvbRange is a userdata to make)
  return ctx.tvb(ctx.off + s, e - s)
end

local BLOB = {}    -- content -> function(ctx, blob item, s, e, scope, tree)
local read_items

local function read_text(ctx, it, pos, stop, scope, tree)
  local start = pos
  if it.at then
    start = ctx.base + get(scope, it.at) -- offsets in the packet are from its first byte
    if start >= stop then mfail(ctx, pos, sfmt("%s: offset %d is not inside the packet (%d bytes)", it.name, start, stop)) end
  end
  local raw, e, clean -- (clean: raw ends before the first NUL, so it has none to cut at)
  if it.size then
    if stop - start < it.size then
      mfail(ctx, start, sfmt("%s: needs %d bytes, %d left", it.name, it.size, math.max(stop - start, 0)))
    end
    raw, e = ssub(ctx.raw, start + 1, start + it.size - 1), start + it.size
  else
    local nul = sfind(ctx.raw, "\0", start + 1, true)
    if nul == nil or nul > stop then
      if not it.to_end then mfail(ctx, start, it.name .. ": no NUL before the end of the packet") end
      raw, e = ssub(ctx.raw, start + 1, stop), stop
    else
      raw, e, clean = ssub(ctx.raw, start + 1, nul - 1), it.to_end and stop or nul, true
    end
  end
  if not clean then
    local cut = sfind(raw, "\0", 1, true)
    if cut then raw = ssub(raw, 1, cut - 1) end
  end
  scope.v[it.name], scope.at[it.name] = raw, start
  if tree and tree ~= NULL_ITEM then ti_add(tree, IF[it.name], rng(ctx, start, e), raw) end
  if pos > e then return pos end
  return e
end

-- an Int's item and its bit fields in the tree (the value is read, and stored in the scope, by the
-- code compile_items makes)
local function show_int(ctx, it, code, bits, pos, v, tree)
  if tree == NULL_ITEM then return end -- (its items would go nowhere)
  local item, r
  if IF[it.name] then
    local w = WIDE[it.name]
    r = rng(ctx, pos, pos + code.size) -- the item's bit fields share its TvbRange
    item = ti_add(tree, IF[it.name], r, w and w.new(v) or v)
  end
  if item == nil then return end
  bits = bits or NONE
  for i = 1, #bits do
    local b = bits[i]
    if BF[b.name] then
      if BF_MASKED[b.name] then
        if code.le then ti_add_le(item, BF[b.name], r)
        else ti_add(item, BF[b.name], r) end
      else
        ti_add(item, BF[b.name], r, floor(v / 2 ^ b.shift) % 2 ^ b.width)
      end
    end
  end
  if it.values and it.values[v] then ti_append(item, " (" .. it.values[v] .. ")") end
end

-- the kinds read by a function of their own (int, choice and when are code compile_items writes)
local READ = {}
READ.text = read_text
READ.blob = function(ctx, it, pos, stop, scope, tree)
    local e = stop
    if it.size then
      local n = get(scope, it.size)
      if n > stop - pos then
        local at = start_of(scope, it.size) or pos
        mfail(ctx, at, sfmt("%s: %s = %d but %d bytes are left", it.name, it.size, n, math.max(stop - pos, 0)))
      end
      e = pos + n
    elseif it["end"] and holds(it.end_when, scope) then
      e = ctx.base + get(scope, it["end"])
      if e > stop then mfail(ctx, pos, sfmt("%s %d is past the end of the packet (%d bytes)", it["end"], e, stop - ctx.base)) end
      if e < pos then mfail(ctx, pos, sfmt("%s %d points inside the header (before offset %d)", it["end"], e, pos)) end
    end
    scope.v[it.name], scope.at[it.name] = ssub(ctx.raw, pos + 1, e), pos
    local item
    if tree == NULL_ITEM then
      item = NULL_ITEM
    elseif tree and TEXT_BLOB[it.name] then
      local text = ssub(ctx.raw, pos + 1, e)
      local cut = sfind(text, "\0", 1, true)
      item = ti_add(tree, IF[it.name], rng(ctx, pos, e), cut and ssub(text, 1, cut - 1) or text)
    elseif tree then
      item = ti_add(tree, IF[it.name], rng(ctx, pos, e))
    end
    local show_blob = BLOB[it.content]
    if show_blob then show_blob(ctx, it, pos, e, scope, item) end
    return e
end
-- a Repeat's group: an item labelled "<Name> [i]" at pos (its length set once it is read)
local LABELS = setmetatable({}, { __index = function(t, name) local l = label(name); t[name] = l; return l end })
local function group_item(ctx, tree, field, pos, name, i)
  if tree == NULL_ITEM then return NULL_ITEM end
  return ti_add(tree, field, rng(ctx, pos, pos), "", sfmt("%s [%d]", LABELS[name], i))
end
READ["repeat"] = function(ctx, it, pos, stop, scope, tree)
    local groups = {}
    if it.count then
      local n = get(scope, it.count)
      local min = 0
      for _, x in ipairs(it.items) do if x.kind == "int" then min = min + x.code.size end end
      if n * min > stop - pos then
        local at = start_of(scope, it.count) or pos
        mfail(ctx, at, sfmt("%s = %d needs %d bytes, %d left", it.count, n, n * min, math.max(stop - pos, 0)))
      end
      for i = 1, n do
        local g = scope_new(scope)
        local sub = tree and group_item(ctx, tree, IF[it.name] or MF.arg, pos, it.name, i - 1)
        local p0 = pos
        pos = read_items(ctx, it.items, pos, stop, g, sub)
        if sub and sub ~= NULL_ITEM then ti_set_len(sub, pos - p0) end
        groups[#groups + 1] = g
      end
    else
      while pos + it.more_than < stop do
        local g = scope_new(scope)
        local sub = tree and group_item(ctx, tree, MF.arg, pos, it.name, #groups)
        local p0 = pos
        pos = read_items(ctx, it.items, pos, stop, g, sub)
        if sub and sub ~= NULL_ITEM then ti_set_len(sub, pos - p0) end
        groups[#groups + 1] = g
      end
    end
    scope.v[it.name] = groups
    return pos
end
READ.switch = function(ctx, it, pos, stop, scope, tree)
    local sel = get(scope, it.selector)
    local form = sel ~= nil and it.cases[sel]
    if not form then mfail(ctx, pos - 1, sfmt("unknown %s %s", it.selector, tostring(sel))) end
    check_size(ctx, form, stop - ctx.base, ctx.base, form.name)
    scope.v[it.selector .. ":case"] = form.name
    scope.form_name = form.name
    return read_items(ctx, form.items, pos, stop, scope, tree)
end

-- A list of layout items as one Lua function, made once (on first use) from the spec's items: each
-- Int read with one string.byte call and arithmetic into the scope, a When's conditions tested in
-- place, a Choice's widths as branches; the other kinds are calls of READ[kind] with the item. The
-- function is what the list means: the same values, the same tree items in the same order, the same
-- failures (mfail) at the same offsets.
local COMPILED = setmetatable({}, { __mode = "k" }) -- item list -> its function
local function num(x) return sfmt("%.17g", x) end

local function int_code(lines, consts, ind, k, it, code, bits, known)
  local n, name = code.size, it.name
  lines[#lines + 1] = sfmt("%sif stop - pos < %d then mfail(ctx, pos, sfmt(%q, math.max(stop - pos, 0))) end", ind, n,
                           name:gsub("%%", "%%%%") .. ": needs " .. n .. " bytes, %d left")
  if n == 1 then
    lines[#lines + 1] = ind .. "local x = sbyte(raw, pos + 1)"
  else
    local bs = {}
    for i = 1, n do bs[i] = "b" .. i end
    lines[#lines + 1] = sfmt("%slocal %s = sbyte(raw, pos + 1, pos + %d)", ind, tconcat(bs, ", "), n)
    local order = {}
    for i = 1, n do order[i] = code.le and bs[n + 1 - i] or bs[i] end
    local e = order[1]
    for i = 2, n do e = "(" .. e .. ") * 256 + " .. order[i] end
    lines[#lines + 1] = ind .. "local x = " .. e
  end
  if code.signed then
    lines[#lines + 1] = sfmt("%sif x >= %s then x = x - %s end", ind, num(2 ^ (8 * n - 1)), num(2 ^ (8 * n)))
  end
  lines[#lines + 1] = sfmt("%sV[%q], AT[%q] = x, pos", ind, name, name)
  for _, b in ipairs(bits or NONE) do
    lines[#lines + 1] = sfmt("%sV[%q] = floor(x / %s) %% %s", ind, b.name, num(2 ^ b.shift), num(2 ^ b.width))
    if known then known[b.name] = true end
  end
  lines[#lines + 1] = sfmt("%sif tree then show_int(ctx, K[%d], %s, %s, pos, x, tree) end", ind, k,
                           consts.ref(code), bits and consts.ref(bits) or "nil")
  lines[#lines + 1] = sfmt("%spos = pos + %d", ind, n)
  if known then known[name] = true end
end

local function item_code(lines, ind, it, consts, known)
  consts[#consts + 1] = it
  local k = #consts
  local function value(name) -- get(scope, name), read in place when this list set it already
    if known and known[name] then return sfmt("V[%q]", name) end
    return sfmt("get(scope, %q)", name)
  end
  local kind = it.kind
  if kind == "int" then
    lines[#lines + 1] = ind .. "do"
    int_code(lines, consts, ind .. "  ", k, it, it.code, it.bits, known)
    lines[#lines + 1] = ind .. "end"
  elseif kind == "when" then
    lines[#lines + 1] = ind .. "do"
    local tests = {}
    for i, c in ipairs(it.conds or NONE) do
      lines[#lines + 1] = sfmt("%slocal c%d_%d = %s", ind, k, i, value(c.name))
      local x = sfmt("c%d_%d", k, i)
      local t = sfmt("type(%s) == \"number\"", x)
      if c.op == "==" then t = sfmt("%s and %s == %s", t, x, num(c.operand))
      elseif c.op == "!=" then t = sfmt("%s and %s ~= %s", t, x, num(c.operand))
      elseif c.op == "&" then t = sfmt("%s and band(%s, %s) ~= 0", t, x, num(c.operand)) end
      tests[#tests + 1] = "(" .. t .. ")"
    end
    lines[#lines + 1] = ind .. "if " .. (#tests > 0 and tconcat(tests, " and ") or "true") .. " then"
    item_code(lines, ind .. "  ", it.item, consts, nil) -- (what it sets is not set for sure)
    lines[#lines + 1] = ind .. "end end"
  elseif kind == "choice" then
    lines[#lines + 1] = sfmt("%sdo local sel = %s", ind, value(it.selector))
    local first = true
    for sel, code in pairs(it.codes) do
      local bits
      for _, bb in ipairs(it.bits) do if bb.size == code.size then bits = bb.bits end end
      lines[#lines + 1] = sfmt("%s%sif sel == %s then", ind, first and "" or "else", type(sel) == "number" and num(sel) or sfmt("%q", sel))
      int_code(lines, consts, ind .. "    ", k, it, code, bits, nil)
      first = false
    end
    if not first then lines[#lines + 1] = ind .. "  else" end
    lines[#lines + 1] = sfmt("%s    mfail(ctx, pos, sfmt(%q, tostring(sel)))", ind,
                             it.name:gsub("%%", "%%%%") .. ": no width for " .. it.selector:gsub("%%", "%%%%") .. " = %s")
    if not first then lines[#lines + 1] = ind .. "  end" end
    lines[#lines + 1] = ind .. "end"
    if known then known[it.name] = true end -- (set, or failed)
  elseif READ[kind] then
    lines[#lines + 1] = sfmt("%spos = READ[%q](ctx, K[%d], pos, stop, scope, tree)", ind, kind, k)
  else
    lines[#lines + 1] = sfmt("%serror(%q)", ind, "not a layout item: " .. tostring(kind))
  end
end

local function compile_items(items)
  local lines, consts, known = {}, {}, {}
  local index = {}
  consts.ref = function(v) -- K[i] of a constant table (codes and bit lists are shared between items)
    if index[v] == nil then consts[#consts + 1] = v; index[v] = #consts end
    return sfmt("K[%d]", index[v])
  end
  for i = 1, #items do item_code(lines, "  ", items[i], consts, known) end
  local src = "local K, READ, show_int, mfail, get, sbyte, sfmt, floor, band = ...\n"
    .. "return function(ctx, pos, stop, scope, tree)\n"
    .. "  local raw, V, AT = ctx.raw, scope.v, scope.at\n"
    .. tconcat(lines, "\n") .. "\n  return pos\nend\n"
  return assert(load(src, "=godot_mp layout"))(consts, READ, show_int, mfail, get, sbyte, sfmt, floor, band)
end

read_items = function(ctx, items, pos, stop, scope, tree)
  local f = COMPILED[items]
  if f == nil then f = compile_items(items); COMPILED[items] = f end
  return f(ctx, pos, stop, scope, tree)
end

-- a form of `size` bytes (checked as `what` at `at`) read from [s, e) into scope (pcall'd by the callers)
local function read_form(ctx, form, size, at, what, s, e, scope, tree)
  check_size(ctx, form, size, at, what)
  read_items(ctx, form.items, s, e, scope, tree)
end

-- Variants ---------------------------------------------------------------------------------------------
local CV = MS.compressed_variant

-- one standard Variant at raw[pos..e): its text; fails like the engine
local function one_variant(ctx, pos, e, tree, prefix)
  local ok, used, text, err_off, err = show(ctx.tvb, ctx.off + pos, ssub(ctx.raw, pos + 1, e), ctx.d,
                                            tree or NULL_ITEM, prefix)
  if not ok then mfail(ctx, pos + (err_off or 0), tostring(err)) end
  return pos + used, text
end

-- (Lua arithmetic, no C call: v - v % 2^shift is v's bits from shift up; the powers are kept on b)
local function bits_get(b, v)
  local lo, span = b.lo, b.span
  if lo == nil then lo, span = 2 ^ b.shift, 2 ^ b.width; b.lo, b.span = lo, span end
  return (v - v % lo) / lo % span
end

-- a little-endian signed Int's code by size (the compressed int's widths), made once
local LE_SIGNED = {}
for n = 1, 8 do LE_SIGNED[n] = { size = n, signed = true, le = true } end

-- one compressed Variant (MultiplayerAPI::decode_and_decompress_variant)
local function one_compressed(ctx, pos, e, tree, prefix)
  if e - pos < 1 then mfail(ctx, pos, "compressed Variant: needs 1 byte, 0 left") end
  local d = ctx.d
  local meta = sbyte(ctx.raw, pos + 1)
  local t = bits_get(CV.type_bits, meta)
  if t >= d.vmax then mfail(ctx, pos, sfmt("compressed Variant: type id %d is not below %d", t, d.vmax)) end
  local bool_t, int_t = d.by_key.BOOL, d.by_key.INT
  if t == bool_t.id then
    local v = bits_get(CV.bool_value_bits, meta) == 1
    local text = bool_t.name .. ": " .. tostring(v)
    if tree and tree ~= NULL_ITEM then -- the value field is the item (as engine.lua shows a bool), its type a
      local r = rng(ctx, pos, pos + 1) -- hidden field (TreeItem's functions called as such: no method lookups)
      ti_hidden(ti_add(ti_add(tree, F.bool, r, v, (prefix or "") .. text), F.type, r, t))
    end
    return pos + 1, text
  end
  if t == int_t.id then
    local code = LE_SIGNED[CV.int_codes[bits_get(CV.mode_bits, meta)].size]
    if e - pos - 1 < code.size then
      mfail(ctx, pos + 1, sfmt("compressed int (%d-bit): needs %d bytes, %d left", code.size * 8, code.size, e - pos - 1))
    end
    local v = code.size == 8 and Struct.unpack("<e", ctx.raw, pos + 2) or read_code(ctx.raw, pos + 1, code)
    local text = int_t.name .. ": " .. tostring(v)
    if tree and tree ~= NULL_ITEM then
      local whole = rng(ctx, pos, pos + 1 + code.size)
      ti_hidden(ti_add(ti_add(tree, F.int, whole, type(v) == "number" and Int64.new(v) or v, (prefix or "") .. text),
                       F.type, whole, t))
    end
    return pos + 1 + code.size, text
  end
  return one_variant(ctx, pos, e, tree, prefix)
end

-- (the texts go to ctx.args as they are read: a packet that fails is not shown with them)
-- label: what an error names each one ("argument", "value"), or nil for a single Variant of its own
local function show_args(ctx, it, s, e, scope, tree, count, reader, label)
  local pos = s
  local args = ctx.args or {}
  ctx.args = args
  local i = 0
  while (count and i < count) or (not count and pos < e) do
    if pos >= e then mfail(ctx, pos, sfmt("%s %d of %d: no bytes left", label or "argument", i, count)) end
    local text
    ctx.arg_label, ctx.arg_i = label, i
    pos, text = reader(ctx, pos, e, tree, tree and INDEX[i] or "") -- (no tree: no label)
    ctx.arg_label = nil
    args[#args + 1] = text
    i = i + 1
  end
  return pos -- bytes after the last argument: the engine ignores them
end

BLOB.variants = function(ctx, it, s, e, scope, tree)
  show_args(ctx, it, s, e, scope, tree, get(scope, "argc"), one_variant, "argument")
end
BLOB.variant = function(ctx, it, s, e, scope, tree) show_args(ctx, it, s, e, scope, tree, 1, one_variant) end
BLOB.compressed_variant = function(ctx, it, s, e, scope, tree)
  show_args(ctx, it, s, e, scope, tree, 1, one_compressed)
end
BLOB.compressed_variants = function(ctx, it, s, e, scope, tree)
  show_args(ctx, it, s, e, scope, tree, nil, one_compressed, "value") -- (replication state: values)
end
BLOB.compressed_args = function(ctx, it, s, e, scope, tree)
  if get(scope, "byte_only") == 1 then
    ctx.args = ctx.args or {}
    if e > s then
      local pba = ctx.d.by_key.PACKED_BYTE_ARRAY
      local text = sfmt("%s[%d]", pba and pba.name or "PackedByteArray", e - s)
      if tree then tree:add(F.type, rng(ctx, s, e), pba and pba.id or 0, "[0] " .. text) end
      ctx.args[#ctx.args + 1] = text
    end
    return
  end
  show_args(ctx, it, s, e, scope, tree, get(scope, "argc"), one_compressed, "argument")
end
BLOB.utf8 = function(ctx, it, s, e, scope, tree)
  local raw = ssub(ctx.raw, s + 1, e)
  local cut = sfind(raw, "\0", 1, true)
  if cut then raw = ssub(raw, 1, cut - 1) end
  scope.v[it.name] = raw
end
BLOB.packet = function(ctx, it, s, e, scope, tree)
  ctx.inner = { s = s, e = e }
end

-- Godot 4 method names -------------------------------------------------------------------------------------
-- Method ids index the node's RPC names sorted (node-level ones with NODE_RPC_FLAG); the names are not
-- on the wire, but SIMPLIFY_PATH carries get_rpc_md5 (md5 of the node-level names sorted, then the
-- script's sorted, concatenated). Names listed in the preference godot_mp.rpc_names are used only when
-- their md5 is the announced one (or, with no md5 in the capture, marked unverified): the rules of
-- godot_dissect/multiplayer/rpcnames.py.
godot_mp.prefs.rpc_names = Pref.string("RPC method names (Godot 4)", "",
  "NODE=name,name,node:name;NODE=... : the @rpc method names of a node (node: = rpc_config on the Node), "
  .. "checked against the md5 of SIMPLIFY_PATH")

local MD5_K, MD5_S = {}, { 7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21 }
for i = 0, 63 do MD5_K[i] = floor(math.abs(math.sin(i + 1)) * 2 ^ 32) end
local function md5_hex(msg) -- RFC 1321 with bit32
  local bxor_, bnot_, lrot = bit32.bxor, bit32.bnot, bit32.lrotate
  local n = #msg
  local bits, tail = n * 8, {}
  for i = 1, 8 do tail[i] = schar(bits % 256); bits = floor(bits / 256) end
  msg = msg .. "\128" .. srep("\0", (55 - n) % 64) .. tconcat(tail)
  local h = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 }
  local M = {}
  for chunk = 1, #msg, 64 do
    for i = 0, 15 do
      local p = chunk + i * 4
      local b1, b2, b3, b4 = sbyte(msg, p, p + 3)
      M[i] = b1 + b2 * 256 + b3 * 65536 + b4 * 16777216
    end
    local A, B, C, D = h[1], h[2], h[3], h[4]
    for i = 0, 63 do
      local f, g
      if i < 16 then f, g = bor(band(B, C), band(bnot_(B), D)), i
      elseif i < 32 then f, g = bor(band(D, B), band(bnot_(D), C)), (5 * i + 1) % 16
      elseif i < 48 then f, g = bxor_(B, C, D), (3 * i + 5) % 16
      else f, g = bxor_(C, bor(B, bnot_(D))), (7 * i) % 16 end
      f = (f + A + MD5_K[i] + M[g]) % 4294967296
      A, D, C = D, C, B
      B = (B + lrot(f, MD5_S[floor(i / 16) * 4 + i % 4 + 1])) % 4294967296
    end
    h[1], h[2], h[3], h[4] = (h[1] + A) % 4294967296, (h[2] + B) % 4294967296, (h[3] + C) % 4294967296,
                             (h[4] + D) % 4294967296
  end
  local out = {}
  for _, v in ipairs(h) do
    for _ = 1, 4 do out[#out + 1] = sfmt("%02x", v % 256); v = floor(v / 256) end
  end
  return tconcat(out)
end

local function norm_path(p)
  p = p:gsub("^/+", ""):gsub("/+$", "")
  if ssub(p, 1, 5) == "root/" then p = ssub(p, 6) end
  return p
end

local NODE_RPC_FLAG = MS.node_rpc_flag
-- (the preference is read once a session, not per RPC: two calls into Wireshark; rpc_want is forgotten
-- when the preferences change or a new session starts)
local rpc_pref, rpc_tables, rpc_want, rpc_any = nil, {}, nil, false
function godot_mp.prefs_changed() rpc_want = nil end
function godot_mp.init() rpc_want = nil end
local function rpc_candidates(path)
  local want = rpc_want
  if want == nil then want = tostring(godot_mp.prefs.rpc_names or ""); rpc_want = want end
  if want ~= rpc_pref then
    rpc_pref, rpc_tables, rpc_any = want, {}, false
    for entry in want:gmatch("[^;]+") do
      local node, list = entry:match("^%s*(.-)%s*=(.*)$")
      if node then
        local script, native = {}, {}
        for name in list:gmatch("[^,%s]+") do
          if ssub(name, 1, 5) == "node:" then native[#native + 1] = ssub(name, 6) else script[#script + 1] = name end
        end
        tsort(script); tsort(native)
        local t = { ids = {}, md5 = md5_hex(tconcat(native) .. tconcat(script)) }
        for i, name in ipairs(native) do t.ids[bor(i - 1, NODE_RPC_FLAG)] = name end
        for i, name in ipairs(script) do t.ids[i - 1] = name end
        local key = norm_path(node)
        rpc_any = true
        rpc_tables[key] = rpc_tables[key] or {}
        local list_ = rpc_tables[key]
        list_[#list_ + 1] = t
      end
    end
  end
  return path and rpc_any and rpc_tables[norm_path(path)] or nil
end

-- name, verified (true / false = no md5 in the capture); nil when unknown or the md5 differs
local function rpc_name(path, id, md5)
  local cands = rpc_candidates(path)
  if not cands then return nil end
  if md5 then
    for _, t in ipairs(cands) do if t.md5 == md5 then return t.ids[id], true end end
    return nil
  end
  return cands[1].ids[id], false
end

-- Packets ------------------------------------------------------------------------------------------------
local PROTOCOLS = MS.protocols

-- the command number in its item's label, " (3)", made once per number (a string.format per packet)
local NUMBER_TEXT = setmetatable({}, { __index = function(t, n)
  local text = sfmt(" (%d)", n)
  t[n] = text
  return text
end })
for _, proto in pairs(PROTOCOLS) do proto.title = "Godot multiplayer, " .. proto.name end

-- the command of each number, per protocol (a lookup, not a scan of the list per packet)
for _, proto in pairs(PROTOCOLS) do
  proto.by_id = {}
  for _, c in ipairs(proto.commands) do
    if proto.by_id[c.id] == nil then proto.by_id[c.id] = c end -- (the first of a number, as a scan finds)
  end
end
-- the label of a command's item: Command's (MF.command) with the number, "Command: RPC (3)"
for _, proto in pairs(PROTOCOLS) do
  for _, c in ipairs(proto.commands) do c.label = COMMAND_LABEL .. ": " .. c.name .. NUMBER_TEXT[c.id] end
end
local function command_of(proto, byte)
  local n = bits_get(proto.command_byte.bits[1], byte)
  return proto.by_id[n], n
end

-- the form its flags select, else the one its size fits (CONFIRM_PATH 4.3+ is exactly 6 bytes), else the
-- first without a fixed size; `hint`: the form the conversation was seen to use (packets.py pick_form)
local function pick_form(c, scope, size, hint)
  local all = c.forms
  if #all == 1 then return all[1] end -- (every rule below picks it)
  local any = false -- (no form's flags hold: choose among all)
  for i = 1, #all do if holds(all[i].when, scope) then any = true; break end end
  local first, by_size, open
  for i = 1, #all do
    local f = all[i]
    if not any or holds(f.when, scope) then
      if hint and f.name == hint then return f end
      first = first or f
      if by_size == nil and f.exact_size and f.exact_size == size then by_size = f end
      if open == nil and f.exact_size == nil then open = f end
    end
  end
  return by_size or open or first
end

-- state per conversation: path caches per sender, spawned nodes; memo of resolved names per message
local mstates = {}
local MAX_CACHE = MS.max_cache_entries
local function state_of(key)
  local s = mstates[key]
  if s == nil then
    s = { paths = {}, md5s = {}, path_md5s = {}, spawned = {}, syncs = {}, received = {}, first_s2c = true,
          n = { paths = 0, md5s = 0, path_md5s = 0, spawned = 0, syncs = 0, received = 0 } }
    mstates[key] = s
  end
  return s
end
-- each cache of a conversation (st[tbl][sender][id]) holds at most MAX_CACHE entries over all senders,
-- as the reader's: past that, that cache alone starts again (the reader drops its oldest entries one by
-- one instead), so a SPAWN of 70,000 sync ids forgets sync ids, not the paths later RPCs name
local function remember(st, tbl, sender, id, value)
  local t = st[tbl][sender]
  if t == nil then t = {}; st[tbl][sender] = t end
  if t[id] == nil then
    local n = st.n[tbl] + 1
    if n > MAX_CACHE then
      st[tbl], st.n[tbl] = {}, 0
      return remember(st, tbl, sender, id, value)
    end
    st.n[tbl] = n
  end
  t[id] = value
end
local function lookup(st, tbl, sender, id) local t = st[tbl][sender]; return t and t[id] end

-- one SceneMultiplayer / MultiplayerAPI packet at raw[base, stop): its message { kind, command, node, ... }
local decode_packet, show_header
decode_packet = function(ctx, base, stop, tree, env, memo)
  local proto = PROTOCOLS[env.major]
  ctx.base = base
  local whole = rng(ctx, base, stop)
  -- (every key a message may get, named so that Lua sizes its table once: each rehash as it grows is
  -- an allocation, and there is a message per packet; what resolve() finds goes to the memo. At most 8
  -- keys: Lua gives 9 a 16-slot hash, twice the memory. The packet's item and its TvbRange are the ctx's:
  -- a message kept for the packet list has neither)
  local msg = { args = nil, base = base, command = nil, kind = nil, scope = nil, form = nil, inner = nil }
  local null = ctx.null -- (no tree: every item below would go to NULL_ITEM; the calls are skipped)
  local root = NULL_ITEM
  if not null then
    -- (its text is set once, when the packet is read: packet())
    root = ti_add(tree, godot_mp, env.start ~= nil and env.start ~= base and rng(ctx, env.start, stop) or whole)
    if env.header then show_header(ctx, root, env.header, env) end
    ti_generated(ti_add(root, MF.protocol, whole, proto.name))
  end
  ctx.root, ctx.whole = root, whole
  if stop - base < 1 then
    if not null then root:add(MF.command, rng(ctx, base, stop), ""):append_text("(none)") end
    mfail(ctx, base, "empty packet")
  end
  local byte = sbyte(ctx.raw, base + 1)
  local c, n = command_of(proto, byte)
  local first, citem
  if not null then
    first = rng(ctx, base, base + 1) -- the command byte: its items share one TvbRange
    ti_hidden(ti_add(root, MF.command_id, first, n)) -- the number is in Command's label
  end
  if c == nil then
    if not null then root:add(MF.command, first, ""):append_text("(unknown)") end
    mfail(ctx, base, sfmt("unknown command %d (byte 0x%02x)", n, byte))
  end
  msg.command, msg.kind = c.name, c.kind
  if not null then
    citem = ti_add(root, MF.command, first, c.name, c.label) -- (its label: the field's, and the number)
    ti_generated(ti_add(root, MF.kind, first, c.kind))
  end
  local scope = packet_scope()
  local flags = c.flags or NONE
  for i = 1, #flags do
    local b = flags[i]
    local v = bits_get(b, byte)
    scope.v[b.name] = v
    if null then
    elseif BF_MASKED[b.name] then ti_add(citem, BF[b.name], first)
    elseif BF[b.name] then ti_add(citem, BF[b.name], first, v) end
  end
  msg.scope = scope
  local form = pick_form(c, scope, stop - base, ctx.hint)
  msg.form = form.name
  check_size(ctx, form, stop - base, base, c.name)
  ctx.args = nil
  ctx.inner = nil
  read_items(ctx, form.items, base + 1, stop, scope, not ctx.null and root or nil)
  msg.args = ctx.args
  local v = scope.v
  if c.name == "SPAWN" then -- the engine's name checks (String::validate_node_name)
    local at = scope.at.name or base
    if v.name_len == 0 then mfail(ctx, at, "zero spawn name size") end
    if v.name and sfind(v.name, "[" .. MS.invalid_node_name_chars:gsub("%p", "%%%0") .. "]") then
      mfail(ctx, at, sfmt("invalid node name '%s' (validate_node_name)", v.name))
    end
  end
  if c.name == "SYS" and env.relay then -- SceneMultiplayer::_process_packet has no case for a relayed SYS
    mfail(ctx, base, "a SYS packet inside a RELAY is not processed by the engine")
  end
  if c.name == "SYS" and env.direction == "c2s" and env.direction_known and not env.relay
     and (scope.form_name == "ADD_PEER" or scope.form_name == "DEL_PEER") then
    mfail(ctx, base + 1, sfmt("SYS %s from a client: only the server announces peers", scope.form_name))
  end
  return msg
end

-- what resolve() works out of a message is kept in its memo under these keys, and read from there
-- (summary, show_resolved, count): later passes find it there, with no copy (a memo kept is read only)
local NONE_RESOLVED, OWN_RESOLVED = 1, 2
local RESOLVED_KEYS = { "node", "node_id", "method", "method_id", "method_verified", "unresolved", "err", "err_off",
                        "name", "entries" }

-- names from the caches, into the memo (first pass; later passes have them in the memo already)
local function resolve(msg, st, env, memo)
  if memo.resolved then return end
  local s, sender, receiver = msg.scope, env.sender, env.receiver
  local c = msg.command
  local r = memo -- (what is resolved goes straight into the memo: no table of its own)
  local v = s.v
  if env.major == 3 then
    if c == "SIMPLIFY_PATH" then
      r.node, r.node_id = v.node_path, v.path_id
      remember(st, "paths", sender, v.path_id, v.node_path)
    elseif c == "CONFIRM_PATH" then
      r.node = v.node_path
    elseif c == "REMOTE_CALL" or c == "REMOTE_SET" then
      if v.inline_path == 1 then r.node = v.node_path
      else
        r.node_id = v.target
        r.node = lookup(st, "paths", sender, v.target)
        if r.node == nil then r.unresolved = sfmt("path id %d of peer %s not announced in the capture", v.target, tostring(sender)) end
      end
      if c == "REMOTE_CALL" then r.method = v.method else r.method = v.property end
    end
  else
    if c == "SIMPLIFY_PATH" then
      r.node, r.node_id = v.node_path, v.cache_id
      local key = tostring(sender) .. ">" .. tostring(receiver) .. ">" .. v.cache_id
      if st.received[key] then
        r.err_off = msg.base + 1 + MS.md5_hex_size
        r.err = sfmt("duplicate remote cache id %d for peer %s", v.cache_id, tostring(sender))
      else
        st.received[key] = true
        st.n.received = st.n.received + 1
        if st.n.received > MAX_CACHE then st.received, st.n.received = {}, 0 end -- (as the reader's: cleared)
      end
      remember(st, "paths", sender, v.cache_id, v.node_path)
      remember(st, "md5s", sender, v.cache_id, v.md5)
      remember(st, "path_md5s", sender, v.node_path, v.md5) -- (an inline-path call: the latest announcement's)
    elseif c == "CONFIRM_PATH" then
      if v.node_path then r.node = v.node_path
      elseif v.cache_id then r.node_id = v.cache_id; r.node = lookup(st, "paths", receiver, v.cache_id) end
    elseif c == "REMOTE_CALL" then
      r.method_id = v.method_id
      local md5
      if v.node_id ~= nil and v.inline_path == 1 and v.node_path then
        r.node = v.node_path
        md5 = lookup(st, "path_md5s", sender, r.node)
      else
        r.node_id = v.node_id
        r.node = lookup(st, "paths", sender, v.node_id)
        md5 = lookup(st, "md5s", sender, v.node_id)
        if r.node == nil then r.unresolved = sfmt("cache id %d of peer %s not announced in the capture", v.node_id, tostring(sender)) end
      end
      r.method, r.method_verified = rpc_name(r.node, v.method_id, md5)
    elseif c == "SPAWN" then
      r.node_id = v.spawner_id
      r.node = lookup(st, "paths", sender, v.spawner_id)
      remember(st, "spawned", sender, v.net_id, { name = v.name, spawner = r.node })
      for _, g in ipairs(v.sync_ids or {}) do remember(st, "syncs", sender, g.v.sync_id, v.name) end
      r.name = v.name
    elseif c == "DESPAWN" then
      local sp = lookup(st, "spawned", sender, v.net_id)
      if sp then r.node, r.name = sp.spawner, sp.name end
    elseif c == "SYNC" then
      local names = {}
      for _, g in ipairs(v.entries or {}) do
        local nid = g.v.net_id
        if g.v.path_cache == 1 then names[#names + 1] = lookup(st, "paths", sender, g.v.id) or tostring(nid)
        else names[#names + 1] = lookup(st, "syncs", sender, nid) or tostring(nid) end
      end
      r.entries = tconcat(names, ", ")
    end
  end
  -- (resolved: OWN when the message got names of its own, kept in its memo; NONE when not)
  local own = NONE_RESOLVED
  for i = 1, #RESOLVED_KEYS do if r[RESOLVED_KEYS[i]] ~= nil then own = OWN_RESOLVED; break end end
  r.resolved = own
end

-- the message's text (Info, the item's label); r: what resolve() put in its memo
local function summary(msg, r)
  local args = tconcat(msg.args or NONE, ", ")
  local where = r.node or (r.node_id and ("node#" .. r.node_id)) or "?"
  local k = msg.kind
  if k == "rpc" then
    local name = r.method or ("method#" .. tostring(r.method_id))
    return sfmt("RPC %s.%s(%s)", where, name, args)
  elseif k == "rset" then return sfmt("RSET %s.%s = %s", where, r.method or "?", args)
  elseif k == "simplify_path" then return sfmt("SIMPLIFY_PATH %s id=%s", tostring(r.node), tostring(r.node_id))
  elseif k == "confirm_path" then return "CONFIRM_PATH " .. where -- (4.3+: the receiver's cache id, named when known)
  elseif k == "spawn" then return sfmt("SPAWN %s by %s [%s]", tostring(r.name), where, args)
  elseif k == "despawn" then return "DESPAWN " .. tostring(r.name or msg.scope.v.net_id)
  elseif k == "sync" then return sfmt("SYNC %s: %s", r.entries or "", args)
  elseif k == "sys" then return "SYS " .. tostring(msg.scope.form_name or "") .. (msg.scope.v.peer and (" " .. msg.scope.v.peer) or "")
  elseif k == "raw" then return sfmt("RAW %d bytes", #(msg.scope.v.data or ""))
  end
  return msg.command or "?"
end

-- what the packet means, as generated fields: only what it did not carry as such (a node resolved
-- from a cache id, a Godot 4 method name from its id: an item it carried with the same value is the
-- field, shown once; a Godot 3 RPC's cache id is its Target, whose Path offset bits show it); the
-- arguments as text are hidden fields, for filters and pyshark (their Variants are the items shown).
-- r: what resolve() put in the memo
local function show_resolved(msg, r, root, whole)
  local v = msg.scope.v
  local node, node_id, method = r.node, r.node_id, r.method
  if node and v.node_path ~= node then ti_generated(ti_add(root, MF.node, whole, node)) end
  if node_id and v.node_id ~= node_id and v.path_id ~= node_id and v.cache_id ~= node_id and v.target ~= node_id then
    ti_generated(ti_add(root, MF.node_id, whole, node_id))
  end
  local kind = msg.kind
  if kind == "rpc" then
    if method and v.method ~= method then
      local it = ti_add(root, MF.method, whole, method)
      ti_generated(it)
      if r.method_verified == false then ti_append(it, " (not verified: no SIMPLIFY_PATH md5 in the capture)") end
    end
    if r.method_id and v.method_id ~= r.method_id then
      ti_generated(ti_add(root, MF.method_id, whole, r.method_id))
    end
  elseif kind == "rset" and method and v.property ~= method then
    ti_generated(ti_add(root, MF.property, whole, method))
  end
  if r.unresolved then
    ti_generated(ti_add(root, MF.unresolved, whole, r.unresolved))
    root:add_proto_expert_info(ME.unresolved, r.unresolved)
  end
  if kind == "rpc" or kind == "rset" then
    local args = msg.args or NONE
    local it = ti_add(root, MF.argc, whole, #args)
    ti_generated(it)
    ti_hidden(it)
    for i = 1, #args do
      it = ti_add(root, MF.arg, whole, args[i])
      ti_generated(it)
      ti_hidden(it)
    end
  end
end

-- the Info column: the frame's first message replaces what ENet or WebSocket wrote, the next ones are
-- appended (the rule of engine.lua's set_info), so every dissection of a frame writes the same text
local info_last = { number = -1, visited = false, text = "" }
-- the frame being read: set where a frame enters this layer (MP.deliver, heur_ws_mp), so a packet
-- reads no Pinfo attribute for them (each is a call into Wireshark)
local frame_number, frame_visited = -1, false
local function add_info(pinfo, text)
  local number, visited = frame_number, frame_visited
  local st = info_last
  local cols = pinfo.cols
  -- (the column may hold a fenced prefix, e.g. a TCP segment's earlier PDUs: compare its end)
  if st.number == number and st.visited == visited and ssub(tostring(cols.info), -#st.text) == st.text then
    st.text = st.text .. " | " .. text
    cols.info:append(" | " .. text)
  else
    st.number, st.visited, st.text = number, visited, text
    cols.protocol = MP_COLUMN
    cols.info = text
  end
end

-- Who sends to whom (multiplayer/session.py _route): every topology is a star around the server
-- (peer 1). A client's packet for another client goes client -> server -> client, and both legs
-- name the original sender and the final receiver, with relayed set. What the server does with a
-- client's packet follows the engine: target 1, 0 or -N (N != 1): the server executes it
-- (receiver 1); target N > 1: forwarded only (receiver N); target -1: to every other client (none).
local function route(env)
  local client = env.client_id
  local s2c = env.direction == "s2c"
  local hop_src, hop_dst = 1, client
  if not s2c then hop_src, hop_dst = client, 1 end
  local sender = env.sender_id or hop_src
  if s2c then return sender, hop_dst, sender ~= 1 end
  local target = env.target
  if env.relay_way then target = env.relay_way == "to" and env.relay_peer or nil end
  if target == nil or target == 1 or target == 0 or (target < 0 and target ~= -1) then return sender, 1, false end
  return sender, target > 1 and target or nil, true
end

-- one record for the statistics (stats.lua): the message as godot-dissect stats counts it
-- (callers test MP.count first: without the statistics there is nothing to count, and no call)
local function count(pinfo, env, kind, r, app_bytes) -- r: a message's resolution (its memo), or nil
  local sender, receiver, relayed = route(env)
  local name
  if r and (kind == "rpc" or kind == "rset") then
    name = r.method or (r.method_id and ("#" .. r.method_id)) or "?"
  end
  MP.count(pinfo, { kind = kind, sender = sender, receiver = receiver, relayed = relayed,
                    delivered = env.direction ~= "c2s" or receiver == 1, node = r and r.node or "",
                    name = name or "", transfer = env.transfer, channel = env.channel,
                    app_bytes = env.app_bytes or app_bytes, wire_bytes = env.wire, ws_bytes = env.ws_bytes })
end
MP.route = route

-- where a message went, as generated fields: the values read_pcap gives its record (sender, receiver,
-- relayed, app_bytes, transfer) and the relay it came through; whole: the message's TvbRange
local function show_route(root, env, whole, app_bytes)
  local sender, receiver, relayed = route(env)
  if sender then ti_generated(ti_add(root, MF.sender, whole, sender)) end
  if receiver then ti_generated(ti_add(root, MF.receiver, whole, receiver)) end
  if relayed then ti_generated(ti_add(root, MF.relayed, whole, true)) end
  ti_generated(ti_add(root, MF.app_bytes, whole, env.app_bytes or app_bytes))
  if env.transfer then ti_generated(ti_add(root, MF.transfer, whole, env.transfer)) end
  if env.relay then ti_generated(ti_add(root, MF.relay, whole, env.relay)) end
end

-- Readings of packets, for the packet list. Without a tree, what decode_packet makes of a packet (its
-- command, form, values and argument texts, or where and why it is malformed) is a function of the
-- packet's bytes, where they start in the message (the offsets of errors count from there), the dialect
-- (by major), the CONFIRM_PATH form hint, the preferences engine.lua shows Variants with (P.serial), and,
-- for a SYS packet, whether a client sent it on a connection of known direction; and game traffic repeats packets byte for byte (the same RPC or RSET, the same path
-- messages to every peer). So a packet of at most DECODED_MAX_BYTES that is not relayed keeps its
-- reading under those, and the next packet of the same bytes is not read again. What depends on the
-- conversation (names from the path caches, the caches themselves, the CONFIRM_PATH form) is still
-- worked out for every packet, after. A kept reading is only read, never written.
local DECODED_MAX_BYTES = 512 -- longer packets are read each time
local DECODED_KEEP = 256 -- readings kept before starting again: memory stays bounded
local decoded, decoded_n, decoded_serial = {}, 0, -1

-- the readings kept for packets like this one: decoded[major][hint][2 * base + (1: a client's on a known
-- direction, 2: other)] (a table of bytes -> reading)
local function decoded_of(env, hint, base)
  if decoded_serial ~= P.serial or decoded_n >= DECODED_KEEP then
    decoded, decoded_n, decoded_serial = {}, 0, P.serial
  end
  local by_major = decoded[env.major]
  if by_major == nil then by_major = {}; decoded[env.major] = by_major end
  local by_hint = by_major[hint]
  if by_hint == nil then by_hint = {}; by_major[hint] = by_hint end
  local way = 2 * base + ((env.direction == "c2s" and env.direction_known) and 1 or 2)
  local t = by_hint[way]
  if t == nil then t = {}; by_hint[way] = t end
  return t
end

-- a label shorter than this is set in one call (Wireshark's ITEM_LABEL_LENGTH is 240 bytes)
local LABEL_SHORT = 200

-- a packet with its resolution and, for a SYS RELAY, the relayed packet
local function packet(ctx, base, stop, tree, env, st, memo, pinfo, prefix)
  ctx.root = nil
  if memo.hint == nil then memo.hint = (not env.relay and st.confirm_form) or false end
  ctx.hint = memo.hint or nil
  local ok, msg
  local kept, key -- (the packet list: readings kept by bytes)
  if ctx.null and not env.relay and stop - base <= DECODED_MAX_BYTES then
    kept = decoded_of(env, memo.hint, base)
    local raw = ctx.raw
    key = (base == 0 and stop == #raw) and raw or ssub(raw, base + 1, stop)
    msg = kept[key]
    if msg then
      ok = not msg.failed
      if ok then ctx.inner = msg.inner else ctx.err_off, ctx.err, msg = msg.err_off, msg.err, MPFAIL end
      ctx.root, kept = NULL_ITEM, nil
    end
  end
  if msg == nil then ok, msg = pcall(decode_packet, ctx, base, stop, tree, env, memo) end
  if kept then
    decoded_n = decoded_n + 1
    if ok then
      msg.inner = ctx.inner
      kept[key] = msg
    elseif msg == MPFAIL then
      kept[key] = { failed = true, err_off = ctx.err_off, err = ctx.err }
    end
  end
  if not ok then
    if msg ~= MPFAIL then error(msg, 0) end
    local text = sfmt("offset %d: %s", ctx.err_off, ctx.err)
    local where = ctx.root or tree
    if ctx.root and ctx.root ~= NULL_ITEM then ti_set_text(ctx.root, PROTOCOLS[env.major].title) end
    if env.relay then where:add(MF.relay, rng(ctx, base, stop), env.relay):set_generated() end
    local it = where:add(MF.error, rng(ctx, math.min(ctx.err_off, stop), stop), text)
    it:add_proto_expert_info(ME.malformed, text)
    add_info(pinfo, (prefix or "") .. "malformed: " .. ctx.err)
    if MP.count then count(pinfo, env, "error", nil, stop - base) end
    return
  end
  if msg.command == "CONFIRM_PATH" and st.confirm_form == nil and not frame_visited then
    -- the conversation's CONFIRM_PATH form (4.0-4.2 path / 4.3+ id), from a relayed one too: one engine
    -- version on both sides (as the reader learns it; a relayed packet itself is read without the hint)
    st.confirm_form = msg.form
  end
  resolve(msg, st, env, memo)
  if memo.err then
    local text = sfmt("offset %d: %s", memo.err_off, memo.err)
    ctx.root:add(MF.error, rng(ctx, memo.err_off, stop), text):add_proto_expert_info(ME.malformed, text)
  end
  local text = (prefix or "") .. summary(msg, memo)
  if not ctx.null then -- (no tree: the generated fields and labels would go nowhere)
    local whole = ctx.whole -- one TvbRange for the generated fields (each costs an allocation)
    local root = ctx.root
    show_route(root, env, whole, stop - base)
    show_resolved(msg, memo, root, whole)
    local title = PROTOCOLS[env.major].title
    if #title + #text < LABEL_SHORT then ti_set_text(root, title .. ": " .. text)
    else -- (a label Wireshark cuts: set_text marks it "[truncated]", append_text does not)
      ti_set_text(root, title)
      ti_append(root, ": " .. text)
    end
  end
  local inner = ctx.inner
  if inner and msg.command == "SYS" then
    local peer = msg.scope.v.peer
    local env2 = { major = env.major, direction = env.direction, client_id = env.client_id, channel = env.channel,
                   transfer = env.transfer, app_bytes = stop - base, relay_peer = peer, wire = env.wire,
                   ws_bytes = env.ws_bytes }
    if env.direction == "s2c" then
      env2.sender, env2.receiver, env2.relay, env2.relay_way = peer, env.receiver, "from " .. peer, "from"
    else
      env2.sender, env2.receiver, env2.relay, env2.relay_way = env.sender, peer, "to " .. peer, "to"
    end
    env2.sender_id = type(env2.sender) == "number" and env2.sender or env.client_id
    memo.inner = memo.inner or {}
    packet(ctx, inner.s, inner.e, tree, env2, st, memo.inner, pinfo, "[relay " .. env2.relay .. "] ")
    return
  end
  add_info(pinfo, text)
  if MP.count then count(pinfo, env, msg.kind, memo, stop - base) end
end

-- Memos: what a message's first reading decided (the CONFIRM_PATH form hint, the names resolved from the
-- caches as they were then, a relayed packet's memo, a WebSocket peer-id message), so that later passes
-- show the same. Kept per frame for the whole capture, so kept small: Lua's collector walks every live
-- object once a cycle, and a table or two per message made a long capture's collection cost grow faster
-- than the capture (a one-peer ENet flood: 64k messages kept ~20 MB live). A memo that holds nothing of
-- its own (a malformed packet, a SYS message: only the hint and whether it was resolved) is a shared
-- constant, and a frame whose messages all share one is one entry: memos[frame] is nil (not read yet),
-- a shared constant for messages 1..n of the frame (n = its `n`), a message's own memo (message 1), or a
-- list of them by message index (tagged LIST).
local memos = {}
local LIST = {}
local SHARED = {} -- [hint][resolved][n]: the shared constants, made when first needed
local function shared_memo(hint, resolved, n)
  local by_hint = SHARED[hint]
  if by_hint == nil then by_hint = {}; SHARED[hint] = by_hint end
  local by_n = by_hint[resolved]
  if by_n == nil then by_n = {}; by_hint[resolved] = by_n end
  local m = by_n[n]
  if m == nil then m = { hint = hint, resolved = resolved, n = n, shared = true }; by_n[n] = m end
  return m
end

-- the memo of message i of the frame: (memo, fresh); a shared constant is handed out as a copy (the
-- reading may write to the memo it gets)
local function memo_of(frame, i)
  local cur = memos[frame]
  local m
  if cur == nil then
  elseif cur[LIST] then m = cur[i]
  elseif cur.shared then if i <= cur.n then m = cur end
  elseif i == 1 then m = cur end
  if m == nil then return { hint = nil, resolved = nil, inner = nil, peer_id = nil }, true end
  if m.shared then return { hint = m.hint, resolved = m.resolved }, false end
  return m, false
end

-- Memos with names of their own are mostly alike: every `state` RPC of a game names the same node and
-- method, so one table per message (kept per frame) was most of a long session's live heap (20 MB at
-- 40k messages) and of the collector's work. A memo that holds only its hint and resolved names is kept
-- once per content: later messages alike keep that one (read only from then on: later passes copy out
-- of it). The content is looked up through nested tables, a level per key (no key text made: making one
-- of ten values cost more than the memo saved); at most MEMO_INTERN_KEEP contents are looked up at a
-- time, past that the lookup starts again (memos kept so far stay with their frames).
local MEMO_INTERN_KEEP = 1024
local NIL = {} -- (a key's level for "no value")
local interned, interned_n = {}, 0
local function interned_memo(m)
  local level = interned[m.hint]
  if level == nil then level = {}; interned[m.hint] = level end
  for j = 1, #RESOLVED_KEYS - 1 do
    local x = m[RESOLVED_KEYS[j]]
    if x == nil then x = NIL end
    local nxt = level[x]
    if nxt == nil then nxt = {}; level[x] = nxt end
    level = nxt
  end
  local x = m[RESOLVED_KEYS[#RESOLVED_KEYS]]
  if x == nil then x = NIL end
  local got = level[x]
  if got then return got end
  if interned_n >= MEMO_INTERN_KEEP then
    interned, interned_n = {}, 0
    return m
  end
  level[x], interned_n = m, interned_n + 1
  return m
end

-- keep what the first reading of message i of the frame put in its memo
local function memo_keep(frame, i, m)
  if m.inner == nil and m.peer_id == nil then
    if m.resolved ~= OWN_RESOLVED then
      local hint = m.hint -- (nil when the reading never got to the packet: kept as false)
      if hint == nil then hint = false end
      m = shared_memo(hint, m.resolved or false, 1) -- (nothing of its own)
    elseif m.hint ~= nil then
      m = interned_memo(m)
    end
  end
  local cur = memos[frame]
  if cur == nil then
    if i == 1 then memos[frame] = m else memos[frame] = { [LIST] = true, [i] = m } end
  elseif cur[LIST] then
    cur[i] = m
  elseif cur.shared and m.shared and m.hint == cur.hint and m.resolved == cur.resolved and i == cur.n + 1 then
    memos[frame] = shared_memo(cur.hint, cur.resolved, i) -- (one more message sharing it)
  else
    local list = { [LIST] = true }
    local n = cur.shared and cur.n or 1
    local one = cur.shared and shared_memo(cur.hint, cur.resolved, 1) or cur
    for j = 1, n do list[j] = one end
    list[i] = m
    memos[frame] = list
  end
end

local function peer_message(ctx, form, tree, pinfo, command_name, values_name, s, e, env)
  local scope = scope_new(nil)
  local root = tree:add(godot_mp, rng(ctx, s, e))
  root:set_text("Godot multiplayer, peer message")
  ctx.base = s
  local ok, err = pcall(read_form, ctx, form, e - s, s, command_name, s, e, scope, not ctx.null and root or nil)
  if not ok and err ~= MPFAIL then error(err, 0) end
  if not ok then
    local text = sfmt("offset %d: %s", ctx.err_off or s, ctx.err or "bad peer message")
    root:add(MF.error, rng(ctx, s, e), text):add_proto_expert_info(ME.malformed, text)
    add_info(pinfo, "malformed: " .. text)
    if MP.count then count(pinfo, env, "error", nil, e - s) end
    return nil
  end
  local name = command_name
  local first = form.items[1]
  if first.values and first.values[scope.v[first.name]] then name = first.values[scope.v[first.name]] end
  if values_name then name = values_name end
  local whole = rng(ctx, s, e)
  root:add(MF.command, whole, name)
  root:add(MF.kind, whole, "peer"):set_generated()
  local peer = scope.v.peer
  -- (the peer id the message carries is its Peer item already: shown once)
  if peer and scope.at.peer == nil then root:add(MF.peer, whole, peer):set_generated() end
  -- (a message telling the client its own id goes to that id: the conversation learns it from this one)
  if env.own_id and env.client_id == nil then env.client_id = peer end
  if not ctx.null then show_route(root, env, whole, e - s) end
  local text = name .. " " .. tostring(peer)
  root:append_text(": " .. text)
  add_info(pinfo, text)
  if MP.count then count(pinfo, env, "peer", nil, e - s) end
  scope.root, scope.name = root, name
  return scope
end

-- the name of each ENet channel, by major: the map's, else "custom N" (made when first asked for)
local CHANNEL_NAMES = {}
for major, cmap in pairs(MS.enet_channels) do
  local names = {}
  for _, ch in ipairs(cmap.channels) do names[ch.number] = ch.name end
  CHANNEL_NAMES[major] = setmetatable(names, { __index = function(t, channel)
    local name = sfmt("custom %d", channel - cmap.custom_offset)
    t[channel] = name
    return name
  end })
end

-- the Godot 3 ENet peer header forms by name, with their size
-- A form of Ints only (`plain`) can not fail on a packet of at least `need` bytes: its src and dst are
-- then read in place (no scope, no pcall); any other header is read as a form, to fail as forms fail.
local ENET3_HEADER_FORMS = {}
for _, f in ipairs(MS.enet3_peer_header) do
  ENET3_HEADER_FORMS[f.name] = f
  f.header_size = 0
  f.plain = f.exact_size == nil
  for _, it in ipairs(f.items) do
    if it.kind ~= "int" then f.plain = false; break end
    if it.name == "src" then f.src_at, f.src_code = f.header_size, it.code end
    if it.name == "dst" then f.dst_at, f.dst_code = f.header_size, it.code end
    f.header_size = f.header_size + it.code.size
  end
  f.plain = f.plain and f.src_at ~= nil and f.dst_at ~= nil
  f.need = math.max(f.min_size or 0, f.header_size)
end

-- what packet() is told about an ENet packet: one table per major, set afresh for each packet (nothing
-- keeps it: a relayed packet gets a table of its own), every key named so that it is sized once
local ENV3 = { major = 3, sender = nil, receiver = nil, sender_id = nil, target = nil, direction = nil,
               client_id = nil, channel = nil, transfer = nil, wire = nil, start = 0, header = false }

-- the Godot 3 ENet peer header's item (in the packet's, first): `form` read again, into the tree, and what
-- its ENet channel is for (the channel's number is ENet's field, enet.channel, shown once)
show_header = function(ctx, root, form, env)
  local hrange = rng(ctx, 0, form.header_size)
  local htree = ti_add(root, MF.peer_header, hrange)
  read_items(ctx, form.items, 0, ctx.len, scope_new(nil), htree)
  ti_generated(ti_add(htree, MF.channel_name, hrange, CHANNEL_NAMES[env.major][env.channel]))
end
local ENV4 = { major = 4, direction = nil, client_id = nil, direction_known = nil, channel = nil, transfer = nil,
               wire = nil, sender = nil, receiver = nil, sender_id = nil, receiver_id = nil }

-- ENet: one delivered packet. p: { tvb, off, data, channel, frame, index (its message index in the
-- frame) }; env from enet.lua
local payload
MP.payload = function(p, pinfo, tree, e)
  local major = e.major
  if major == nil then
    -- no CONNECT seen: a Godot 3 peer header is 8 bytes with a MultiplayerAPI command (0-4) after it
    local raw = p.data
    major = (#raw >= 9 and sbyte(raw, 9) <= 4 and p.channel <= 2) and 3 or 4
    e.conv.major, e.conv.major_evidence = major, "guessed from the first packet (no CONNECT in the capture)"
  end
  local proto = PROTOCOLS[major]
  if not proto then return end
  local null = tree == NULL_ITEM
  local ctx = ctx_for(p.tvb, p.off or 0, p.data, DIALECTS[major == 3 and "godot3" or "godot4"], null,
                      not null and p.range or nil)
  local st = state_of(e.key)
  local memo, fresh = memo_of(p.frame, p.index)
  payload(p, pinfo, tree, e, major, ctx, st, memo)
  if fresh then memo_keep(p.frame, p.index, memo) end
end

payload = function(p, pinfo, tree, e, major, ctx, st, memo)
  local transfer = MS.transfer_of_delivery[p.delivery]
  if major == 3 then
    if p.channel == 0 then
      local scope = peer_message(ctx, MS.enet3_sysmsg, tree, pinfo, "SYSMSG", nil, 0, #p.data,
                                 { direction = e.direction, client_id = e.conv.client_id, sender_id = 1,
                                   channel = p.channel, transfer = transfer, wire = p.wire })
      if scope and e.direction == "c2s" and e.direction_known then -- "Only server can send config messages"
        local text = sfmt("offset 0: %s from a client on channel 0: the server drops it", scope.name or "SYSMSG")
        scope.root:add(MF.error, p.range, text):add_proto_expert_info(ME.malformed, text)
      end
      return
    end
    if st.enet3_header == nil then
      -- decided once per conversation, as the Python reader does: 3.0/3.1 put a small flags u32 where
      -- 3.2+ has the command byte and the low bytes of the target
      local raw = p.data
      local old = #raw >= 13 and sbyte(raw, 9) <= 2 and ssub(raw, 10, 12) == "\0\0\0"
      st.enet3_header = old and "3.0-3.1" or "3.2+"
    end
    local form = ENET3_HEADER_FORMS[st.enet3_header]
    local raw = p.data
    local src, dst, ok, err
    if form.plain and #raw >= form.need then
      src, dst, ok = read_code(raw, form.src_at, form.src_code), read_code(raw, form.dst_at, form.dst_code), true
    else
      local scope = scope_new(nil)
      ctx.base = 0
      ok, err = pcall(read_form, ctx, form, #raw, 0, "ENet peer header", 0, #raw, scope, nil)
      if not ok and err ~= MPFAIL then error(err, 0) end
      src, dst = scope.v.src, scope.v.dst
    end
    if not ok then
      local text = sfmt("offset %d: %s", ctx.err_off or 0, ctx.err or "bad header")
      local root = tree:add(godot_mp, p.range)
      root:set_text("Godot 3 ENet peer header: " .. text)
      root:add(MF.command, p.range, "ENET_PEER_HEADER")
      root:add(MF.error, p.range, text):add_proto_expert_info(ME.malformed, text)
      add_info(pinfo, "malformed: " .. text)
      return
    end
    local hsize = form.header_size
    if e.direction == "c2s" and e.conv.client_id == nil and not frame_visited then
      e.conv.client_id = src -- no CONNECT in the capture: the header says who the client is
    end
    -- (start: the packet's item covers the peer header, shown inside it)
    local env = ENV3
    env.sender, env.receiver, env.sender_id, env.target = src, dst, src, dst
    env.direction, env.client_id, env.channel, env.transfer, env.wire = e.direction, e.conv.client_id, p.channel,
                                                                        transfer, p.wire
    env.header = not ctx.null and form -- (shown by show_header: a closure per packet was garbage per packet)
    packet(ctx, hsize, #p.data, tree, env, st, memo, pinfo)
    return
  end
  local env = ENV4
  env.direction, env.client_id, env.direction_known = e.direction, e.conv.client_id, e.direction_known
  env.channel, env.transfer, env.wire = p.channel, transfer, p.wire
  env.sender, env.receiver, env.sender_id, env.receiver_id = "client", 1, e.client_id, nil
  if e.direction == "s2c" then env.sender, env.receiver, env.sender_id, env.receiver_id = 1, "client", 1, e.client_id end
  packet(ctx, 0, #p.data, tree, env, st, memo, pinfo)
end

-- WebSocket ------------------------------------------------------------------------------------------------
local wsconvs = {}
local tvb_raw = Tvb.raw
local ws_msg_index = { number = -1, n = 0 }
local WS3_SYS_ID
for id, name in pairs(MS.ws3_header.items[1].values) do if name == "SYS_ID" then WS3_SYS_ID = id end end

local function ws_conv(pinfo)
  local a = tostring(pinfo.src) .. ":" .. pinfo.src_port
  local b = tostring(pinfo.dst) .. ":" .. pinfo.dst_port
  local key = a < b and (a .. " " .. b) or (b .. " " .. a)
  local c = wsconvs[key]
  if c == nil then c = { key = "w " .. key }; wsconvs[key] = c end
  return c, a
end

-- the first binary message of a conversation decides: Godot 4 (4-byte peer id) or Godot 3 (SYS_ID)
local function ws_detect(c, sender, raw)
  local n = #raw
  if n == MS.ws4_peer_id.exact_size then
    local id = read_code(raw, 0, MS.ws4_peer_id.items[1].code)
    if id >= MS.ws4_min_peer_id then
      c.kind, c.server, c.client_id = "ws4", sender, id
      c.evidence = sfmt("godot4 WebSocketMultiplayerPeer: the server's first binary message is 4 bytes, the client's peer id %d", id)
      return true
    end
  end
  local hsize = MS.ws3_header.min_size
  if n == hsize + MS.ws3_sys.min_size and sbyte(raw, 1) == WS3_SYS_ID then
    c.kind, c.server = "ws3", sender
    c.evidence = "godot3 WebSocketMultiplayerPeer: 9-byte header, the server's first message is SYS_ID"
    return true
  end
  return false
end

-- the WebSocket frame's size on the wire (RFC 6455 5.2): 2 bytes, the extended length, and the mask a
-- client's frames carry (for the statistics' wire_bytes)
local function ws_frame_size(n, masked)
  local size = 2 + n + (masked and TR.WS_MASK_KEY_SIZE or 0)
  if n >= 65536 then return size + TR.WS_LEN64_FIELD_SIZE elseif n >= TR.WS_LEN16 then return size + TR.WS_LEN16_FIELD_SIZE end
  return size
end

local ws_payload
local function heur_ws_mp(tvb, pinfo, given)
  enter(given)
  local tree = tree_of(given)
  local raw = tvb_raw(tvb) -- (tvb:raw() is two calls into Wireshark: the method's lookup, and the call)
  if looks_like_text(raw) then return false end -- a text message (engine.lua)
  local c, sender = ws_conv(pinfo)
  if c.kind == nil then
    if pinfo.visited or not ws_detect(c, sender, raw) then c.kind = c.kind or "no"; return false end
  end
  if c.kind == "no" then return false end
  frame_number, frame_visited = pinfo.number, pinfo.visited
  if ws_msg_index.number ~= frame_number or ws_msg_index.visited ~= frame_visited then
    ws_msg_index.number, ws_msg_index.visited, ws_msg_index.n = frame_number, frame_visited, 0
  end
  ws_msg_index.n = ws_msg_index.n + 1
  local direction = sender == c.server and "s2c" or "c2s"
  local wsb = ws_frame_size(#raw, direction == "c2s")
  local ctx = ctx_for(tvb, 0, raw, DIALECTS[c.kind == "ws3" and "godot3" or "godot4"], tree == NULL_ITEM)
  local st = state_of(c.key)
  local index = ws_msg_index.n
  local memo, fresh = memo_of(frame_number, index)
  pinfo.conversation = godot_mp
  ws_payload(tvb, pinfo, tree, raw, c, sender, direction, wsb, ctx, st, memo)
  if fresh then memo_keep(frame_number, index, memo) end
  return true
end

ws_payload = function(tvb, pinfo, tree, raw, c, sender, direction, wsb, ctx, st, memo)
  if c.kind == "ws4" then
    if direction == "s2c" and (memo.peer_id or (not frame_visited and st.first_s2c)) then
      st.first_s2c = false
      memo.peer_id = true
      peer_message(ctx, MS.ws4_peer_id, tree, pinfo, "PEER_ID", "PEER_ID", 0, #raw,
                   { direction = direction, client_id = c.client_id, sender_id = 1, transfer = "reliable",
                     ws_bytes = wsb, own_id = true })
      return true
    end
    local env = { major = 4, direction = direction, client_id = c.client_id, direction_known = true, transfer = "reliable",
                  ws_bytes = wsb }
    if direction == "s2c" then env.sender, env.receiver, env.sender_id, env.receiver_id = 1, "client", 1, c.client_id
    else env.sender, env.receiver, env.sender_id = "client", 1, c.client_id end
    packet(ctx, 0, #raw, tree, env, st, memo, pinfo)
    return true
  end
  -- Godot 3: the 9-byte header, then a system message or a MultiplayerAPI packet
  local form = MS.ws3_header
  local scope = scope_new(nil)
  local hsize = form.min_size
  local htree = NULL_ITEM -- (no tree: not even the TvbRange)
  if tree ~= NULL_ITEM then htree = ti_add(tree, godot_mp, tvb(0, math.min(hsize, #raw)), "Godot 3 WebSocket multiplayer header") end
  ctx.base = 0
  local ok, err = pcall(read_form, ctx, form, #raw, 0, "WebSocket multiplayer header", 0, #raw, scope, htree)
  if not ok and err ~= MPFAIL then error(err, 0) end
  if not ok then
    local text = sfmt("offset %d: %s", ctx.err_off or 0, ctx.err or "bad header")
    htree:add(MF.command, tvb(), "WS_HEADER")
    htree:add(MF.error, tvb(), text):add_proto_expert_info(ME.malformed, text)
    add_info(pinfo, "malformed: " .. text)
    return true
  end
  local tname = form.items[1].values[scope.v.type]
  if scope.v.type ~= 0 then
    local ps = peer_message(ctx, MS.ws3_sys, tree, pinfo, tname or ("SYS_" .. scope.v.type), tname, hsize, #raw,
                            { direction = direction, client_id = c.client_id, sender_id = 1, transfer = "reliable",
                              ws_bytes = wsb, own_id = tname == "SYS_ID" })
    if ps and ps.name == "SYS_ID" and not frame_visited then c.client_id = ps.v.peer end
    return true
  end
  local env = { major = 3, sender = scope.v.from, receiver = scope.v.to, sender_id = scope.v.from, target = scope.v.to,
                direction = direction, client_id = c.client_id, transfer = "reliable", ws_bytes = wsb }
  packet(ctx, hsize, #raw, tree, env, st, memo, pinfo)
  return true
end

MP.reset = function()
  mstates, memos, wsconvs = {}, {}, {}
  decoded, decoded_n, rpc_want = {}, 0, nil
  interned, interned_n = {}, 0
  info_last = { number = -1, visited = false, text = "" }
  ws_msg_index = { number = -1, n = 0 }
end

-- ENet: enet.lua hands the packets its commands delivered in one frame to MP.deliver, which calls the
-- godot_mp dissector through its handle (that call is what puts godot_mp in frame.protocols); the
-- call's tree is the ENet item (Wireshark's Lua adds its hidden helper item there, not at the top),
-- and the multiplayer items go to the top level of the tree, after ENet's.
local handed, mp_handle = nil, nil
-- Returns whether the packets were read (every packet read writes the Info column; the godot_mp
-- protocol may be disabled).
-- `list`: the packets, each { tvb, data, channel, msg_key, ... }; `env`: what they share (conversation,
-- direction); `number`, `visited`: the frame's (read by enet.lua already: each Pinfo read is a call)
-- (`len`: the tvb's length, what the dissector returns: tvb:len() is a call into Wireshark)
local job = { list = nil, env = nil, top = nil, len = 0 }
-- read the packets handed over (whether there was a job)
local function run_job(pinfo)
  local j = handed
  handed = nil
  if j == nil then return false end
  local list, env, top = j.list, j.env, j.top
  j.list, j.env, j.top, j.len = nil, nil, nil, nil
  for i = 1, #list do MP.payload(list[i], pinfo, top, env) end
  return true
end
local mp_call -- Dissector.call, looked up once (a method call looks it up through the metatable)
local tvb_len = Tvb.len -- (likewise: tvb:len() is two calls into Wireshark, tvb_len(tvb) one)
MP.deliver = function(list, env, tvb, pinfo, top, enet_item, number, visited, len)
  job.list, job.env, job.top, job.len = list, env, top, len
  frame_number, frame_visited = number, visited
  handed = job
  if top == NULL_ITEM then
    -- no tree, so no frame.protocols or io,phs to show the layer in: the call through the handle
    -- (a Tvb, a Pinfo, Lua's helper item) would cost without showing anything
    run_job(pinfo)
  else
    if mp_handle == nil then mp_handle, mp_call = Dissector.get("godot_mp"), Dissector.call end
    mp_call(mp_handle, tvb, pinfo, enet_item)
  end
  local read = handed == nil -- (godot_mp.dissector takes the job)
  handed = nil
  return read
end

function godot_mp.dissector(tvb, pinfo, tree)
  local len = job.len
  if not run_job(pinfo) then return 0 end -- not called by enet.lua (e.g. Decode As): nothing to read alone
  return len or tvb_len(tvb)
end

godot_mp:register_heuristic("ws", heur_ws_mp)
