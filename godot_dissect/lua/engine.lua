-- The Lua engine of the Godot Variant dissector: a template. `godot-dissect lua` replaces the SPEC line
-- below with the spec as Lua data (dialect tables: ids, names, layout kinds and their parameters) and
-- writes lua/godot.lua. Everything here switches on layout kinds, never on type ids or names.
--
-- Wireshark 4.0 runs Lua 5.2: no bitwise operators (bit32 instead), no string.pack (Struct instead).
--
-- Speed (benchmarks/bench_lua.py): values are read from one tvb:raw() string with string.byte and
-- Struct.unpack; what costs is Wireshark's Lua API. Every TreeItem and TvbRange is a userdata that
-- is allocated, type-checked on each call and finalized by the garbage collector, so the tree shows
-- two levels by default (AUTO_DEPTH), has one item per Variant shown (a bool, int, float or String
-- Variant is its value field), what is not shown is only checked (check()), String keys are in
-- their entries' labels, and the fields inside an item share its TvbRange. Labels are made of kept
-- strings (numbers, keys, math values, Dictionary summaries) in small memo tables (the collector
-- walks all of them on every cycle), TreeItem methods are looked up once, and the message being read
-- lives in upvalues rather than in a table. Without a tree, a message of a shape read before (the
-- same bytes but for numbers and ASCII text) gets that reading's answer (see "Shapes"); with one, it
-- gets that showing's items again with its own values, nothing but the values read (see "Plans").

-- Loaded twice (an installed copy in the plugin folder and `-X lua_script:`): Wireshark loads the
-- plugin folder first; the copy loaded second steps aside without a word, so every message is
-- dissected once (and Proto() does not fail on the second "Godot Variant").
if select(2, pcall(Dissector.get, "godot")) ~= nil then return end

-- Lua's collector, kept close behind the allocations. Every item shown is a TreeItem (and most a
-- TvbRange) whose C memory is freed only when the collector finalizes it: left at Lua's defaults (a
-- cycle once the heap has doubled, at 2x allocation speed), a frame's items are freed hundreds of frames
-- later, in bursts, from memory long out of the cache. Collecting as soon as a cycle ends and 6x faster
-- keeps the heap near its live size and reuses memory still warm: `tshark -V` with the plugin took
-- 15-25% less CPU on a long Godot 3 ENet session and 5-10% on raw-UDP load (interleaved runs), for more
-- instructions; a longer pause was slower still. The setting is the Lua state's: other Lua plugins share it.
local GC_PAUSE = 130 -- % of the live heap reached before the next cycle starts (Lua's default 200)
local GC_STEPMUL = 600 -- collection speed against allocation, % (Lua's default 200)
collectgarbage("setpause", GC_PAUSE)
collectgarbage("setstepmul", GC_STEPMUL)

local SPEC = nil -- @SPEC@

local bit32, Struct = bit32, Struct
local band, bor, rshift, lshift, bnot = bit32.band, bit32.bor, bit32.rshift, bit32.lshift, bit32.bnot
local unpack = Struct.unpack
local sfmt, sbyte, ssub, srep, sfind, schar = string.format, string.byte, string.sub, string.rep, string.find, string.char
local tconcat, tsort, floor = table.concat, table.sort, math.floor
local ipairs, pairs, pcall, error, tostring, type, select = ipairs, pairs, pcall, error, tostring, type, select

-- A str as Python's repr() writes it, for the reasons the reader quotes a name or path in ({s!r}): in
-- single quotes (double when it holds a ' and no "), \\ \t \n \r and the quote escaped, \xNN for the other
-- control characters, DEL, the C1 controls, NO-BREAK SPACE and SOFT HYPHEN (what str.isprintable refuses
-- below U+0100; a rarer non-printable character further on stays itself)
local REPR_ESCAPES = { ["\\"] = "\\\\", ["\t"] = "\\t", ["\n"] = "\\n", ["\r"] = "\\r" }
local function py_repr(s)
  local q = (sfind(s, "'", 1, true) and not sfind(s, '"', 1, true)) and '"' or "'"
  s = s:gsub("[%z\1-\31\\\127]", function(c) return REPR_ESCAPES[c] or sfmt("\\x%02x", sbyte(c)) end)
  s = s:gsub("\194([\128-\160\173])", function(c) return sfmt("\\x%02x", sbyte(c)) end)
  if q == "'" then s = s:gsub("'", "\\'") end
  return q .. s .. q
end

-- No tree (tshark without -V, -T, -Y or a tap that needs one): Wireshark passes a TreeItem with no
-- tree behind it (its text is nil). The dissectors still read every message, for the Info column and
-- their state, but into NULL_ITEM, whose every method is a Lua no-op: no TreeItem or TvbRange is made.
local NULL_ITEM, NULL_FN = {}, nil
NULL_FN = function() return NULL_ITEM end
for _, m in ipairs({ "add", "add_le", "set_text", "append_text", "prepend_text", "set_generated", "set_hidden",
                     "set_len", "add_proto_expert_info", "add_tvb_expert_info", "add_expert_info" }) do
  NULL_ITEM[m] = NULL_FN -- the common methods without a metamethod call
end
setmetatable(NULL_ITEM, { __index = function() return NULL_FN end, __call = NULL_FN })
-- Decided where Wireshark calls a dissector (its TreeItem then holds Lua's helper item, absent without
-- a tree); not from the TreeItems dissect_tcp_pdus hands its callbacks, whose text is unsafe to read.
local NO_TREE = false
-- Variants shown by this call of a dissector (at most SPEC.transports.LUA_MAX_SHOWN: see not_shown())
local SHOWN = 0
local function enter(tree) NO_TREE = tree.text == nil; SHOWN = 0 end
local function tree_of(tree) if NO_TREE then return NULL_ITEM end return tree end

-- How many entries each of the engine's memo tables keeps (decoded strings, label texts, keys) before
-- it starts again: the garbage collector goes through everything kept on every cycle, and on a big
-- capture a small heap saves more than the memos' misses cost.
local KEEP = 512

----------------------------------------------------------------------------------------------------
-- The spec compiled for the engine
----------------------------------------------------------------------------------------------------

local function field_mask(f) return lshift(lshift(1, f.bits) - 1, f.shift) end
local function field_get(f, h) return band(rshift(h, f.shift), lshift(1, f.bits) - 1) end

local FLAG64 = field_mask(SPEC.flag_64)
local OBJ_AS_ID = field_mask(SPEC.object_as_id)
local EL_KIND, KEY_KIND, VAL_KIND = SPEC.array_element_kind, SPEC.dict_key_kind, SPEC.dict_value_kind
local KINDS = SPEC.container_kinds -- 1-based: KINDS[kind + 1]
local MAX_NESTING = SPEC.max_nesting
local TR = SPEC.transports -- spec.transports' constants by name
local DEPTH_FAILURE = "nesting deeper than " -- the start of the reason the nesting limit gives
local ZEROS = { [0] = "", "\0", "\0\0", "\0\0\0" }
local STRUCT_CODE = { i = "i4", I = "I4", q = "e", Q = "E", f = "f", d = "d" }
local INT_CODES = { i = true, I = true, q = true, Q = true }

local DIALECTS, DIALECT_LIST = {}, {}

local function compile_type(d, e)
  local def = SPEC.typedefs[e.def] -- shared by every dialect that has this type definition
  local L = def.layout
  local t = { id = e.id, name = e.name, key = e.key, kind = L.kind, L = L, allowed = 0, header = def.header, shown = 0,
              colon = e.name .. ": ", text_true = e.name .. ": true", text_false = e.name .. ": false",
              keys = {}, nkeys = 0 }
  for _, f in ipairs(def.header) do
    local typed_ok = true
    if f.name == EL_KIND.name then typed_ok = d.typed_array end
    if f.name == KEY_KIND.name or f.name == VAL_KIND.name then typed_ok = d.typed_dictionary end
    if typed_ok then t.allowed = bor(t.allowed, field_mask(f)) end
  end
  local k = L.kind
  if k == "number" then
    t.nfmt, t.nsize = "<" .. STRUCT_CODE[L.narrow.code], L.narrow.size
    t.wfmt, t.wsize = "<" .. STRUCT_CODE[L.wide.code], L.wide.size
    t.is_int = INT_CODES[L.narrow.code] or false
    t.nname, t.wname = L.narrow.name, L.wide.name
  elseif k == "struct" then
    local n = #L.fields
    t.n, t.real = n, (L.component.name == "real")
    local code = STRUCT_CODE[L.component.code]
    t.nfmt, t.nsize = "<" .. srep(code, n), n * L.component.size
    t.wfmt, t.wsize = "<" .. srep("d", n), n * 8
    local one = INT_CODES[L.component.code] and "%d" or "%.7g"
    t.nlabel = e.name .. ": (" .. srep(one, n, ", ") .. ")"
    t.wlabel = e.name .. ": (" .. srep("%.15g", n, ", ") .. ")"
    t.nlabels, t.wlabels, t.nlabeled = {}, {}, 0
    t.is_int = INT_CODES[L.component.code] or false
  elseif k == "packed" then
    local c = L.component
    t.real = (c.name == "real")
    t.width = L.width
    t.csize = c.size
    t.code = STRUCT_CODE[c.code]
    t.esize = L.stride or (c.size * L.width)
    t.wesize = 8 * L.width
    t.is_int = INT_CODES[c.code] or false
    t.element = L.element
  elseif k == "container" then
    t.pairs = L.pairs
    t.count_mask = L.count_mask
    t.count_mod = L.count_mask + 1
  elseif k == "node_path" then
    t.new_bit, t.absolute, t.legacy = L.new_format_bit, L.flag_absolute, L.flag_legacy_property
    -- the count words' masks and the legacy property flag's extra subnames, as the spec declares them
    local P = SPEC.kind_parts.node_path
    t.names_mask, t.subs_mask, t.legacy_extra = P.name_count.mask, P.subname_count.mask, L.legacy_extra_subnames
  end
  return t
end

for _, sd in ipairs(SPEC.dialects) do
  local d = {
    name = sd.name, title = sd.title, family = sd.family, real_double = sd.real_is_double,
    strict = sd.utf8_strict, typed_array = sd.typed_array, typed_dictionary = sd.typed_dictionary,
    doc_only = sd.doc_only, empty_path_relative = sd.empty_node_path_is_relative,
    types = {}, by_key = {}, by_name = {}, vmax = #sd.types,
  }
  for _, e in ipairs(sd.types) do
    local t = compile_type(d, e)
    d.types[e.id] = t
    d.by_key[e.key] = t
    d.by_name[e.name] = t
  end
  DIALECTS[d.name] = d
  DIALECT_LIST[#DIALECT_LIST + 1] = d
end

local CONVERTS = {}
for to, froms in pairs(SPEC.conversions) do
  local s = {}
  for _, f in ipairs(froms) do s[f] = true end
  CONVERTS[to] = s
end

local function family_of(name) return (name:match("^([^-]+)")) end

----------------------------------------------------------------------------------------------------
-- UTF-8 as String::parse_utf8 reads it (strict: Godot 4; lenient: Godot 3). Returns the string and
-- whether re-encoding it gives the same bytes back, or nil when the engine rejects the bytes.
----------------------------------------------------------------------------------------------------

local BOM = "\239\187\191"

local function trim(raw)
  local canon = true
  if ssub(raw, 1, 3) == BOM then raw, canon = ssub(raw, 4), false end
  local z = sfind(raw, "\0", 1, true)
  if z then raw, canon = ssub(raw, 1, z - 1), false end
  return raw, canon
end

local function valid_strict(s)
  local i, n = 1, #s
  while i <= n do
    local c = sbyte(s, i)
    if c < 0x80 then
      i = i + 1
    else
      local need, lo, hi
      if c >= 0xC2 and c <= 0xDF then need, lo, hi = 1, 0x80, 0xBF
      elseif c == 0xE0 then need, lo, hi = 2, 0xA0, 0xBF
      elseif c == 0xED then need, lo, hi = 2, 0x80, 0x9F
      elseif c >= 0xE1 and c <= 0xEF then need, lo, hi = 2, 0x80, 0xBF
      elseif c == 0xF0 then need, lo, hi = 3, 0x90, 0xBF
      elseif c >= 0xF1 and c <= 0xF3 then need, lo, hi = 3, 0x80, 0xBF
      elseif c == 0xF4 then need, lo, hi = 3, 0x80, 0x8F
      else return false end
      if i + need > n then return false end
      local b = sbyte(s, i + 1)
      if b < lo or b > hi then return false end
      for k = 2, need do
        b = sbyte(s, i + k)
        if b < 0x80 or b > 0xBF then return false end
      end
      i = i + need + 1
    end
  end
  return true
end

local function utf8_encode(cp)
  if cp < 0x80 then return schar(cp) end
  if cp < 0x800 then return schar(0xC0 + floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return schar(0xE0 + floor(cp / 4096), 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return schar(0xF0 + floor(cp / 262144), 0x80 + floor(cp / 4096) % 64, 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
end

local function utf8_len(cp)
  if cp < 0x80 then return 1 elseif cp < 0x800 then return 2 elseif cp < 0x10000 then return 3 end
  return 4
end

local function decode_strict_(raw)
  if not sfind(raw, "[%z\128-\255]") then return raw, true end
  local s, canon = trim(raw)
  if not valid_strict(s) then return nil, false end
  return s, canon
end

local function decode_godot3_(raw)
  local s, canon = decode_strict_(raw)
  if s then return s, canon end
  local data
  data, canon = trim(raw)
  local out, i, n = {}, 1, #data
  while i <= n do
    local c = sbyte(data, i)
    local length
    if c < 0x80 then length = 1
    elseif band(c, 0xE0) == 0xC0 then length = 2
    elseif band(c, 0xF0) == 0xE0 then length = 3
    elseif band(c, 0xF8) == 0xF0 then length = 4
    elseif band(c, 0xFC) == 0xF8 then length = 5
    elseif band(c, 0xFE) == 0xFC then length = 6
    else return nil, false end
    if i + length - 1 > n then return nil, false end
    if length == 2 and band(c, 0x1E) == 0 then return nil, false end
    local cp = c
    if length > 1 then cp = band(c, rshift(0xFF, length + 1)) end
    for k = 1, length - 1 do
      local b = sbyte(data, i + k)
      if band(b, 0xC0) ~= 0x80 then return nil, false end
      if cp == 0 and k == 2 and rshift(band(b, 0x7F), 7 - length) == 0 then return nil, false end
      cp = cp * 64 + band(b, 0x3F)
    end
    if cp > 0x10FFFF then
      out[#out + 1], canon = "\239\191\189", false
    else
      -- surrogates are kept by the engine (and re-encode alike) but are not UTF-8: shown as U+FFFD
      out[#out + 1] = (cp >= 0xD800 and cp <= 0xDFFF) and "\239\191\189" or utf8_encode(cp)
      if utf8_len(cp) ~= length then canon = false end
    end
    i = i + length
  end
  return tconcat(out), canon
end

-- the same, memoized: strings repeat (Dictionary keys, names); two tables of plain values (no table
-- per entry: a small heap keeps the garbage collector cheap)
local function memo_utf8(fn)
  local text, canonical, n = {}, {}, 0
  return function(raw)
    local s = text[raw]
    if s == nil then
      local canon
      s, canon = fn(raw)
      s = s or false
      if n >= KEEP then text, canonical, n = {}, {}, 0 end
      text[raw], canonical[raw], n = s, canon, n + 1
      return s or nil, canon
    end
    return s or nil, canonical[raw]
  end
end
local decode_strict, decode_godot3 = memo_utf8(decode_strict_), memo_utf8(decode_godot3_)

----------------------------------------------------------------------------------------------------
-- Protocol, fields, expert info, preferences
----------------------------------------------------------------------------------------------------

local godot = Proto("godot", "Godot Variant")

local F = {
  type = ProtoField.uint8("godot.type", "Type", base.DEC),
  flags = ProtoField.uint32("godot.flags", "Header flags", base.HEX),
  bool = ProtoField.bool("godot.bool", "bool"),
  int = ProtoField.int64("godot.int", "int", base.DEC),
  float = ProtoField.double("godot.float", "float"),
  string = ProtoField.string("godot.string", "String"),
  nodepath = ProtoField.string("godot.nodepath", "NodePath"),
  count = ProtoField.int32("godot.count", "Count", base.DEC),
  len = ProtoField.int32("godot.len", "Length", base.DEC),
  component = ProtoField.double("godot.component", "Component"),
  element = ProtoField.string("godot.element", "Element"),
  bytes = ProtoField.bytes("godot.bytes", "Bytes"),
  id = ProtoField.uint64("godot.id", "Id", base.DEC),
  class = ProtoField.string("godot.class", "Class"),
  property = ProtoField.string("godot.property", "Property"),
  container_type = ProtoField.string("godot.container_type", "Container type"),
  more = ProtoField.none("godot.more", "More"),
  pdu_len = ProtoField.uint32("godot.pdu_len", "Length prefix", base.DEC),
  dialect = ProtoField.string("godot.dialect", "Dialect"),
  evidence = ProtoField.string("godot.evidence", "Dialect evidence"),
  error = ProtoField.string("godot.error", "Malformed"),
  note = ProtoField.string("godot.note", "Note"),
  dbg_message = ProtoField.string("godot.debugger.message", "Debugger message"),
  dbg_thread = ProtoField.int64("godot.debugger.thread", "Thread", base.DEC),
  dbg_part = ProtoField.string("godot.debugger.part", "Debugger message part"),
  part = ProtoField.string("godot.part", "Part of a long message"),
  dbg_argc = ProtoField.int32("godot.debugger.argc", "Arguments", base.DEC),
  dbg_args = ProtoField.none("godot.debugger.args", "Arguments"),
}
local field_list = {}
for _, f in pairs(F) do field_list[#field_list + 1] = f end
godot.fields = field_list

local E = {
  malformed = ProtoExpert.new("godot.malformed", "Malformed Godot Variant", expert.group.MALFORMED, expert.severity.ERROR),
  skipped = ProtoExpert.new("godot.skipped", "Bytes skipped", expert.group.MALFORMED, expert.severity.WARN),
  partial = ProtoExpert.new("godot.partial", "Message incomplete in this segment (TCP reassembly off)",
                            expert.group.REASSEMBLE, expert.severity.WARN),
  depth = ProtoExpert.new("godot.depth", "Deeper levels not shown", expert.group.UNDECODED, expert.severity.NOTE),
  engine = ProtoExpert.new("godot.engine", "Engine behaviour", expert.group.PROTOCOL, expert.severity.NOTE),
  not_reassembled = ProtoExpert.new("godot.not_reassembled", "Long message not reassembled",
                                    expert.group.REASSEMBLE, expert.severity.WARN),
  not_shown = ProtoExpert.new("godot.not_shown", "Variants not shown", expert.group.UNDECODED, expert.severity.NOTE),
}
godot.experts = { E.malformed, E.skipped, E.partial, E.depth, E.engine, E.not_reassembled, E.not_shown }

local DIALECT_ENUM = { { 1, "auto", 1 } }
local DIALECT_BY_ENUM = { [1] = "auto" }
for i, d in ipairs(DIALECT_LIST) do
  DIALECT_ENUM[#DIALECT_ENUM + 1] = { i + 1, d.name, i + 1 }
  DIALECT_BY_ENUM[i + 1] = d.name
end

godot.prefs.dialect = Pref.enum("Dialect", 1, "auto: guessed per conversation from its messages", DIALECT_ENUM, false)
godot.prefs.udp_ports = Pref.range("UDP ports", "", "UDP ports that carry Godot Variants for sure", 65535)
godot.prefs.tcp_ports = Pref.range("TCP ports", "", "TCP ports with u32-length-prefixed Variants (put_var)", 65535)
godot.prefs.debugger_ports = Pref.range("Debugger ports", tconcat(SPEC.debugger_ports, ","),
                                        "TCP ports of the Godot remote debugger", 65535)
godot.prefs.heuristics = Pref.bool("Heuristics", true, "Find Godot flows on other UDP/TCP ports and over WebSocket")
godot.prefs.packed_limit = Pref.uint("Packed array elements shown", 16,
                                     "Elements of a packed array shown one by one; the rest are collapsed")
godot.prefs.max_depth = Pref.uint("Maximum depth shown", 0,
                                  "Nesting levels shown in the tree (capped at 200, below Wireshark's own limit); "
                                  .. "0: automatic, 2 (a Variant and its elements) or 32 with the details preference")
godot.prefs.details = Pref.bool("Show details", false,
                               "Show every field: a type item for every Variant, string lengths, Dictionary keys as "
                               .. "Variants, math type components, NodePath counts")

godot.prefs.compact = Pref.bool("Compact tree", false,
                               "Leave out counts, property items, and the header flags and hidden type items of "
                               .. "bool, int, float and String Variants: fewer items, for big captures")

-- the levels shown when the max_depth preference is 0 (automatic): a message's Variant and its
-- elements (a game-state Dictionary's entries, an RPC argument's elements); deeper containers are
-- one item each, labelled with their summary. Every item costs tshark -V time (a TreeItem, a
-- TvbRange and a label made in Lua: about 5 microseconds), and a game-state message holds dozens of
-- Variants; the details preference shows every level.
local AUTO_DEPTH, DETAILS_DEPTH = 2, 32

local P = { dialect = "auto", heuristics = true, packed_limit = 16, max_depth = AUTO_DEPTH, details = false,
            compact = false, depth_noted = false, serial = 0 } -- serial: counts the times they were read

local function read_prefs()
  P.dialect = DIALECT_BY_ENUM[godot.prefs.dialect] or "auto"
  P.heuristics = godot.prefs.heuristics
  P.packed_limit = godot.prefs.packed_limit
  P.details = godot.prefs.details
  local md = godot.prefs.max_depth
  -- a depth the user chose is said where it cuts (expert info); the automatic one is not
  P.depth_noted = md > 0
  if md == 0 then md = P.details and DETAILS_DEPTH or AUTO_DEPTH end
  if md > 200 then md = 200 end
  P.max_depth = md
  P.compact = godot.prefs.compact and not P.details
  P.serial = P.serial + 1
end

----------------------------------------------------------------------------------------------------
-- Labels
----------------------------------------------------------------------------------------------------

-- Labels are made of texts kept in tables: making a string from a number (tostring, string.format)
-- costs about as much as adding a tree item does, and the same numbers, keys and names come back.

-- a table that fills itself from fn(key) and empties itself once it holds `limit` entries
local function cache(limit, fn)
  local n = 0
  return setmetatable({}, { __index = function(tab, k)
    local v = fn(k)
    if n >= limit then
      for x in pairs(tab) do tab[x] = nil end
      n = 0
    end
    tab[k], n = v, n + 1
    return v
  end })
end

-- decimal text of an integer (counts, ids, hit points): "%d" prints integers as tostring's "%.14g" does,
-- without its floating-point conversion
local SMALL = cache(KEEP, function(v) return sfmt("%d", v) end)
local FLOAT7 = cache(KEEP, function(v) return sfmt("%.7g", v) end)
local FLOAT15 = cache(KEEP, function(v) return sfmt("%.15g", v) end)

local function fmt_float(v, single)
  if v ~= v then return "nan" end
  if v % 1 == 0 and v > -1e7 and v < 1e7 then -- an integer: both formats print it as one
    if v == 0 then return 1 / v < 0 and "-0" or "0" end -- 0 and -0 are one table key
    return SMALL[v]
  end
  if single then return FLOAT7[v] end
  return FLOAT15[v]
end

local function short(s, n)
  if #s > n then
    local cut = n
    while cut > 1 and band(sbyte(s, cut + 1) or 0, 0xC0) == 0x80 do cut = cut - 1 end
    return ssub(s, 1, cut) .. "…"
  end
  return s
end

local function escape(ch) return sfmt("\\x%02x", sbyte(ch)) end

-- a String in a label: quoted, 40 bytes at most, control characters, quotes and backslashes as \xNN
local QUOTED = cache(KEEP, function(s)
  if #s > 40 then s = short(s, 40) end
  if sfind(s, '[%c"\\]') then s = s:gsub('[%c"\\]', escape) end
  return '"' .. s .. '"'
end)

local function header_text(t, h)
  local upper = h - h % 256
  local names = {}
  for _, f in ipairs(t.header) do
    local v = field_get(f, h)
    if v ~= 0 then names[#names + 1] = f.bits > 1 and (f.name .. " " .. (KINDS[v + 1] or v)) or f.name end
  end
  if band(upper, bnot(t.allowed)) ~= 0 then names[#names + 1] = "bits the engine ignores" end
  return sfmt("Header flags: 0x%08x", upper) .. (#names > 0 and (" (" .. tconcat(names, ", ") .. ")") or "")
end

local INDEX = cache(KEEP, function(i) return "[" .. i .. "] " end)   -- array elements: "[3] "
local BRACKET = cache(KEEP, function(n) return "[" .. n .. "]" end) -- counts: "Array[3]"

----------------------------------------------------------------------------------------------------
-- Decoder: exactly the engine's accept/reject rules (godot_dissect/codec/decoder.py). Every reader
-- checks the bytes; given a tree it also shows them. Readers return the position after the value
-- and, when showing, a short text for labels. Entry points: decode(), show(), top_shape().
-- Offsets are 0-based within the message; raw string positions are 1-based.
----------------------------------------------------------------------------------------------------

local decode, show, top_shape -- the decoder's entry points (the block below keeps the rest to itself)

do

local forget_shapes, fits, keep_shape -- see "Shapes"

-- The message being read, set by begin() for decode(), show() and top_shape() (which never run
-- inside one another): upvalues, not fields of a table, because readers use them all the time
local RAW, STOP, D, TYPES, UTF8 = "", 0, nil, nil, nil -- the bytes, where they end, the dialect
local CK, CANON = false, true         -- checking that it re-encodes byte-identically (detection); result
local ERR_OFF, ERR_MSG = false, false -- where and why it is malformed
local TVB, BASE, TLEN = nil, 0, 0     -- showing: the Tvb, where the message starts in it, its length
local NULL_MODE = false               -- showing into NULL_ITEM (no tree): labels for the Info column only
local COMPACT, DETAILS, LIMIT, MAX_SHOWN, NOTED = false, false, 0, 0, false -- preferences; depth noted
local DEPTH_NOTED = false -- the depth limit is the user's: say where it cuts
local SERIAL = 0 -- counts the messages shown (see leaf())
-- recording a shape (see "Shapes" below): the spans of bytes check() lets vary, as flat triples
-- (start, end, whether they must be ASCII without NUL), in the order check() steps over them
local REC, REC_OK, SPANS, NSPAN = false, false, {}, 0
-- recording a plan (see "Plans" below): the items shown, as ops in the order they were added, and the
-- op (slot) that added each TreeItem, for its children's ops
local TREC, OPS, NOPS, SLOT = false, nil, 0, nil

local function begin(raw, stop, d, ck)
  RAW, STOP, D, TYPES, UTF8 = raw, stop, d, d.types, d.strict and decode_strict or decode_godot3
  CK, CANON, ERR_OFF, ERR_MSG, NOTED = ck, true, false, false, false
end

local SCAN = "[%z\128-\255]" -- a byte that may need UTF-8 checking (NUL, BOM, non-ASCII)

local FAIL = {} -- the error object of a malformed message (anything else is a bug and is re-raised)

local function fail(off, msg)
  ERR_OFF, ERR_MSG = off, msg
  error(FAIL, 0)
end

local function need(pos, n, what)
  if STOP - pos < n then
    local left = STOP - pos
    if left < 0 then left = 0 end
    fail(pos, sfmt("%s: needs %d bytes, %d left", what, n, left))
  end
end

-- while recording a shape: bytes [s, e) may be anything (ascii: any ASCII byte but NUL) without
-- changing what the reading finds
local function vary(s, e, ascii)
  local n = NSPAN
  SPANS[n + 1], SPANS[n + 2], SPANS[n + 3] = s, e, ascii
  NSPAN = n + 3
end

-- a single-bit flag of the header
local function has(h, mask) return h % (mask + mask) >= mask end

-- the TvbRange of message bytes [s, e), clamped to the data
local function rg(s, e)
  local tl = TLEN
  if e > tl then e = tl end
  if s >= tl then s = tl - 1 end
  if e < s then e = s end
  return TVB(BASE + s, e - s)
end

local function read_string(pos, what, packed)
  if STOP - pos < 4 then need(pos, 4, what .. " length") end
  local raw = RAW
  local n = unpack("<i4", raw, pos + 1)
  if n < 0 then fail(pos, sfmt("%s length %d is negative", what, n)) end
  local start = pos + 4
  local stop = start + n
  local pad = (-n) % 4
  if stop + pad > STOP then
    fail(pos, sfmt("%s length %d (+%d padding) runs past the end (%d bytes left)", what, n, pad, STOP - start))
  end
  local bytes = ssub(raw, start + 1, stop)
  local s, canon = UTF8(bytes)
  if s == nil then fail(start, what .. " is not valid UTF-8") end
  if CK then
    if packed then -- the engine writes each element with one NUL terminator
      canon = n > 0 and sfind(bytes, "\0", 1, true) == n and (select(2, UTF8(ssub(bytes, 1, n - 1)))) or false
    end
    if not canon or (pad > 0 and ssub(raw, stop + 1, stop + pad) ~= ZEROS[pad]) then CANON = false end
  end
  return s, stop + pad, n
end

local variant -- forward

-- TreeItem methods, looked up once (show() fills them in from the first tree it is given): a method
-- call on a TreeItem (tree:add) first goes through Wireshark's __index for the method, which costs
-- about a sixth of what adding the item costs
local add, add_le, set_text, set_len, prepend_text, add_expert, set_hidden
local REAL_METHODS = nil

-- the TreeItem methods the readers call: Wireshark's, or the no-ops of NULL_ITEM (no tree)
local function tree_methods(tree)
  if tree == NULL_ITEM then
    add, add_le, set_text, set_len, prepend_text, add_expert, set_hidden =
      NULL_FN, NULL_FN, NULL_FN, NULL_FN, NULL_FN, NULL_FN, NULL_FN
    return
  end
  local m = REAL_METHODS
  if m == nil then
    m = { tree.add, tree.add_le, tree.set_text, tree.set_len, tree.prepend_text, tree.add_tvb_expert_info,
          tree.set_hidden }
    REAL_METHODS = m
  end
  add, add_le, set_text, set_len, prepend_text, add_expert, set_hidden = m[1], m[2], m[3], m[4], m[5], m[6], m[7]
end

local INT64 = cache(KEEP, Int64.new) -- values of godot.int (an int64 field takes Int64 objects)
local KEY = "Key: " -- the prefix of a key shown as a Variant
local F_type, F_flags, F_int, F_float, F_bool, F_string, F_count =
  F.type, F.flags, F.int, F.float, F.bool, F.string, F.count

-- an Object property, or a Dictionary key that is not a String (see read_key), in its value's subtree
-- Past SHOWN_MAX Variants shown in this call the rest of a container (or packed array) is read and
-- checked but not shown: Wireshark ends a packet's tree at gui.max_tree_items with a "Dissector bug"
local SHOWN_MAX = TR.LUA_MAX_SHOWN
local function not_shown(item, s, left)
  REC_OK = false -- (not planned)
  local text = sfmt("… %d more not shown (at most %d Variants are shown a packet)", left, SHOWN_MAX)
  local it = add(item, F.more, rg(s, STOP))
  set_text(it, text)
  add_expert(it, E.not_shown, rg(s, STOP), text)
end

local function show_key(item, key)
  if key.prop then
    add(item, F.property, rg(key.s, key.e), key.prop)
  else
    -- any other key is a Variant of its own, shown inside; its text leads the value's label
    local _, text = variant(key.s, key.depth, item, KEY, nil)
    key.text, key.pre = text, text .. " → "
    prepend_text(item, key.pre)
  end
end

-- The item of one Variant: its type (godot.type), labelled with the value; inside it the key it is
-- the value of, and the header flags when any are set. Returns the item and its TvbRange, which the
-- fields inside share (a container's Count, the value field with the details preference): every
-- distinct TvbRange is an object that Wireshark's Lua API allocates and the garbage collector
-- finalizes.
local function head(tree, t, s, e, label, key, h)
  if e > TLEN then e = TLEN end -- a PackedByteArray's missing final padding
  local range = TVB(BASE + s, e - s)
  local item = add(tree, F_type, range, t.id, label)
  if key then show_key(item, key) end
  if h >= 256 then add(item, F_flags, TVB(BASE + s, 4), h - h % 256, header_text(t, h)) end
  return item, range
end

-- The item of a bool, int, float or String Variant (unless the details preference is set): its
-- value field (godot.bool, godot.int, godot.float, godot.string) as the item, labelled with the type
-- and the value, covering the whole Variant. The first such Variant of each type in a message also
-- gets a hidden godot.type item (as Wireshark's ip.addr items are), so that a filter on godot.type
-- still finds the message; the compact tree leaves that and the header flags out.
local function leaf(tree, t, s, e, field, value, label, key, h)
  local range = TVB(BASE + s, e - s)
  local item = add(tree, field, range, value, label)
  if key then show_key(item, key) end
  if not COMPACT then
    if h >= 256 then add(item, F_flags, TVB(BASE + s, 4), h - h % 256, header_text(t, h)) end
    if t.shown ~= SERIAL then
      t.shown = SERIAL
      set_hidden(add(item, F_type, range, t.id))
    end
  end
  return item
end

-- Plans. With a tree, a message of a shape shown before (see "Shapes": the same bytes but for numbers
-- and ASCII text) adds the same items in the same order, only with other values: showing a message
-- records its items as ops, and the next message of its shape replays them, reading just the values
-- (no Variant header, key, count or summary read again; a container's item made with its final label).
-- An op: { replay function, its parent's slot (the op that added it; 0: the tree given), type, start,
-- end, where the value starts, label prefix, header, ... }; it calls head() and leaf() as the reader
-- does, so its items are the reader's. Planned: Dictionaries and Arrays without types, nil, bool,
-- numbers, Strings and math types, not shown under a key that is a Variant of its own; anything else
-- shown leaves the message without a plan.
local function plan_op(fn, tree, t, s, e, pos, pre, h)
  local p = SLOT[tree]
  if p == nil then REC_OK = false; return nil end
  local op = { fn, p, t, s, e, pos, pre, h, false, false } -- (room for 10: no resize)
  NOPS = NOPS + 1
  OPS[NOPS] = op
  return op
end

-- One reader per layout kind: R[kind](t, pos, h, s, depth, tree, prefix, key) checks the value at
-- `pos` (its header, `h`, starts at `s`) and returns the position after it; given a tree it shows it
-- there (`prefix` leads the label, `key` is what it is the value of) and returns its text too.
local R = {}

local function rp_empty(op, items) head(items[op[2]], op[3], op[4], op[5], op[7], nil, op[8]) end

R.empty = function(t, pos, h, s, depth, tree, prefix, key)
  if tree then
    if TREC then plan_op(rp_empty, tree, t, s, pos, pos, prefix .. t.name, h) end
    head(tree, t, s, pos, prefix .. t.name, key, h)
  end
  return pos, t.name
end

local function rp_bool(op, items)
  local t = op[3]
  local v = unpack("<I4", RAW, op[6] + 1)
  leaf(items[op[2]], t, op[4], op[5], F_bool, v ~= 0, op[7] .. (v ~= 0 and t.text_true or t.text_false), nil, op[8])
end

R.bool = function(t, pos, h, s, depth, tree, prefix, key)
  if STOP - pos < 4 then need(pos, 4, t.name) end
  local v = unpack("<I4", RAW, pos + 1)
  if CK and v > 1 then CANON = false end
  if not tree then return pos + 4 end
  local text = v ~= 0 and t.text_true or t.text_false
  if TREC then
    vary(pos, pos + 4, false)
    plan_op(rp_bool, tree, t, s, pos + 4, pos, prefix, h)
  end
  if DETAILS then
    local item, range = head(tree, t, s, pos + 4, prefix .. text, key, h)
    add(item, F_bool, range, v ~= 0)
  else
    leaf(tree, t, s, pos + 4, F_bool, v ~= 0, prefix .. text, key, h)
  end
  return pos + 4, text
end

local function rp_int(op, items)
  local t = op[3]
  local v = unpack(t.nfmt, RAW, op[6] + 1)
  leaf(items[op[2]], t, op[4], op[5], F_int, INT64[v], op[7] .. SMALL[v], nil, op[8])
end

local function rp_int64(op, items)
  local low, high = unpack("<I4I4", RAW, op[6] + 1) -- (not Int64.new(unpack()): unpack returns a position too)
  local value = Int64.new(low, high)
  leaf(items[op[2]], op[3], op[4], op[5], F_int, value, op[7] .. tostring(value), nil, op[8])
end

local function rp_float(op, items) -- op[9]: 64-bit
  local t, wide = op[3], op[9]
  local v = unpack(wide and t.wfmt or t.nfmt, RAW, op[6] + 1)
  leaf(items[op[2]], t, op[4], op[5], F_float, v, op[7] .. fmt_float(v, not wide), nil, op[8])
end

R.number = function(t, pos, h, s, depth, tree, prefix, key)
  local wide = h >= 65536 and has(h, FLAG64)
  local size = wide and t.wsize or t.nsize
  if STOP - pos < size then need(pos, size, wide and t.wname or t.nname) end
  local e = pos + size
  if not tree then return e end
  if TREC then
    vary(pos, e, false)
    local op = plan_op(not t.is_int and rp_float or wide and rp_int64 or rp_int, tree, t, s, e, pos,
                       prefix .. t.colon, h)
    if op then op[9] = wide end
  end
  local field, value, text
  if not t.is_int then
    value = unpack(wide and t.wfmt or t.nfmt, RAW, pos + 1)
    field, text = F_float, t.colon .. fmt_float(value, not wide)
  elseif wide then -- a Lua number cannot hold every 64-bit integer: an Int64 of the two halves
    local low, high = unpack("<I4I4", RAW, pos + 1)
    value = Int64.new(low, high)
    field, text = F_int, t.colon .. tostring(value)
  else
    local v = unpack(t.nfmt, RAW, pos + 1)
    field, value, text = F_int, INT64[v], t.colon .. SMALL[v]
  end
  if DETAILS then
    local item, range = head(tree, t, s, e, prefix .. text, key, h)
    add(item, field, range, value)
  else
    leaf(tree, t, s, e, field, value, prefix .. text, key, h)
  end
  return e, text
end

local function rp_string(op, items) -- op[9]: the String's end, or its text when it is not plain ASCII
  local str = op[9]
  if str == true then str = ssub(RAW, op[6] + 5, op[10]) end
  leaf(items[op[2]], op[3], op[4], op[5], F_string, str, op[7] .. QUOTED[str], nil, op[8])
end

R.string = function(t, pos, h, s, depth, tree, prefix, key)
  local str, np, n = read_string(pos, t.name)
  if not tree then return np end
  if TREC then
    local op = plan_op(rp_string, tree, t, s, np, pos, prefix .. t.colon, h)
    if op then
      -- plain ASCII without NUL reads as itself in every dialect (a shape keeps it plain ASCII)
      local q = n > 0 and sfind(RAW, SCAN, pos + 5)
      if n > 0 and not (q and q <= pos + 4 + n) then
        vary(pos + 4, pos + 4 + n, true)
        op[9], op[10] = true, pos + 4 + n
      else
        op[9] = str
      end
    end
  end
  local text = t.colon .. QUOTED[str]
  if DETAILS then
    local item, range = head(tree, t, s, np, prefix .. text, key, h)
    add_le(item, F.len, TVB(BASE + pos, 4))
    add(item, F_string, range, str)
  else
    leaf(tree, t, s, np, F_string, str, prefix .. text, key, h)
  end
  return np, text
end

-- the label of a math value, e.g. "Vector3: (0, 1.5, -4)": one string.format for all components
-- (t.nlabel, t.wlabel), kept by the value's bytes (rotations and velocities repeat)
local function struct_text(t, bytes, fmt, wide)
  local labels = wide and t.wlabels or t.nlabels
  local text = labels[bytes]
  if text == nil then
    text = sfmt(wide and t.wlabel or t.nlabel, unpack(fmt, bytes))
    if t.nlabeled > KEEP then t.nlabels, t.wlabels, t.nlabeled = {}, {}, 0; labels = wide and t.wlabels or t.nlabels end
    labels[bytes], t.nlabeled = text, t.nlabeled + 1
  end
  return text
end

-- a math value's label text, and for its components: their bytes, format and whether they are float32
local function struct_label(t, pos, size, wide)
  local fmt = wide and t.wfmt or t.nfmt
  -- a single-precision build reads 64-bit components into float32 (the engine's C cast)
  local single = wide and not D.real_double
  local bytes = ssub(RAW, pos + 1, pos + size)
  if single then bytes, fmt = Struct.pack(t.nfmt, unpack(fmt, bytes)), t.nfmt end
  return struct_text(t, bytes, fmt, wide and not single), bytes, fmt, single
end

-- (op[9]: 64-bit)
local function rp_struct(op, items)
  local t, pos, e = op[3], op[6], op[5]
  head(items[op[2]], t, op[4], e, op[7] .. struct_label(t, pos, e - pos, op[9]), nil, op[8])
end

R.struct = function(t, pos, h, s, depth, tree, prefix, key)
  local wide = t.real and h >= 65536 and has(h, FLAG64)
  local size = wide and t.wsize or t.nsize
  if STOP - pos < size then need(pos, size, t.name .. (wide and " (64-bit)" or "")) end
  if CK and t.real and wide ~= D.real_double then CANON = false end
  if not tree then return pos + size end
  if TREC then
    vary(pos, pos + size, false)
    local op = plan_op(rp_struct, tree, t, s, pos + size, pos, prefix, h)
    if op then op[9] = wide end
  end
  local text, bytes, fmt, single = struct_label(t, pos, size, wide)
  local item = head(tree, t, s, pos + size, prefix .. text, key, h)
  if DETAILS then
    local vals = { unpack(fmt, bytes) }
    local cs = wide and 8 or 4
    local names = t.L.fields
    for i = 1, t.n do
      local off = pos + (i - 1) * cs
      local v = vals[i]
      add(item, F.component, rg(off, off + cs), v,
          names[i] .. ": " .. (t.is_int and sfmt("%d", v) or fmt_float(v, single or not wide)))
    end
  end
  return pos + size, text
end

R.node_path = function(t, pos, h, s, depth, tree, prefix, key)
  need(pos, 4, t.name)
  local raw = RAW
  local first = unpack("<I4", raw, pos + 1)
  if first < t.new_bit then fail(pos, t.name .. " in the old (Godot 2) string format is rejected") end
  need(pos, 12, t.name .. " header")
  local n_names = band(first, t.names_mask)
  local n_subs, flags = unpack("<I4I4", raw, pos + 5)
  if has(flags, t.legacy) then n_subs = band(n_subs + t.legacy_extra, t.subs_mask) end
  if CK and flags ~= 0 and flags ~= t.absolute then CANON = false end
  local p = pos + 12
  local names = tree and {} or nil
  local total = (n_names + n_subs) % 4294967296
  local i = 0
  while i < total do -- bounded by the data: every part needs at least 4 bytes
    local str
    str, p = read_string(p, sfmt("%s part %d", t.name, i))
    if names then names[#names + 1] = str end
    i = i + 1
  end
  if not tree then return p end
  local subs = {}
  for k = #names, n_names + 1, -1 do subs[k - n_names] = names[k]; names[k] = nil end
  local absolute = has(flags, t.absolute) and (total > 0 or not D.empty_path_relative)
  local path = (absolute and "/" or "") .. tconcat(names, "/")
  if #subs > 0 then path = path .. ":" .. tconcat(subs, ":") end
  local text = t.colon .. QUOTED[path]
  local item = head(tree, t, s, p, prefix .. text, key, h)
  add(item, F.nodepath, rg(pos, p), path)
  if DETAILS then
    add(item, F_count, rg(pos, pos + 4), n_names, "Names: " .. n_names)
    add(item, F_count, rg(pos + 4, pos + 8), #subs, "Subnames: " .. #subs)
    add(item, F_flags, rg(pos + 8, pos + 12), flags, sfmt("Path flags: 0x%x", flags))
  end
  return p, text
end

R.id64 = function(t, pos, h, s, depth, tree, prefix, key)
  need(pos, 8, t.name)
  if not tree then return pos + 8 end
  local text = t.colon .. tostring(unpack("<E", RAW, pos + 1))
  add_le(head(tree, t, s, pos + 8, prefix .. text, key, h), F.id, rg(pos, pos + 8))
  return pos + 8, text
end

R.signal = function(t, pos, h, s, depth, tree, prefix, key)
  local name, np, n = read_string(pos, t.name .. " name")
  need(np, 8, t.name .. " object id")
  if not tree then return np + 8 end
  local text = t.colon .. QUOTED[name] .. " on #" .. tostring(unpack("<E", RAW, np + 1))
  local item = head(tree, t, s, np + 8, prefix .. text, key, h)
  add(item, F_string, rg(pos + 4, pos + 4 + n), name)
  add_le(item, F.id, rg(np, np + 8))
  return np + 8, text
end

R.packed_bytes = function(t, pos, h, s, depth, tree, prefix, key)
  need(pos, 4, t.name .. " count")
  local n = unpack("<i4", RAW, pos + 1)
  local data = pos + 4
  if n < 0 or n > STOP - data then
    fail(pos, sfmt("%s count %d does not fit the %d bytes left", t.name, n, STOP - data))
  end
  local pad = (-n) % 4
  if CK and pad > 0 and ssub(RAW, data + n + 1, data + n + pad) ~= ZEROS[pad] then CANON = false end
  -- the engine counts the padding as used even when it is missing at the very end
  local np = data + n + pad
  if not tree then
    if REC and n > 0 then vary(data, data + n, false) end
    return np
  end
  local text = t.name .. BRACKET[n]
  local item = head(tree, t, s, np, prefix .. text, key, h)
  add_le(item, F_count, rg(pos, data))
  if n > 0 then add(item, F.bytes, rg(data, data + n)) end
  return np, text
end

R.packed_strings = function(t, pos, h, s, depth, tree, prefix, key)
  need(pos, 4, t.name .. " count")
  local n = unpack("<i4", RAW, pos + 1)
  if CK and n < 0 then CANON = false end
  local text = t.name .. BRACKET[n]
  local item
  if tree then
    item = head(tree, t, s, pos + 4, prefix .. text, key, h)
    add_le(item, F_count, rg(pos, pos + 4))
  end
  local lim = LIMIT
  local cut = item and lim > SHOWN_MAX - SHOWN and n > SHOWN_MAX - SHOWN -- (the budget cuts before the preference)
  if cut then lim = SHOWN_MAX - SHOWN end
  local p = pos + 4
  local i = 0
  while i < n do -- negative n: empty, as in the engine; every string needs at least 4 bytes
    local str, np, len = read_string(p, sfmt("%s[%d]", t.name, i), true)
    if item and i < lim then add(item, F_string, rg(p + 4, p + 4 + len), str, INDEX[i] .. QUOTED[str]) end
    p = np
    i = i + 1
  end
  if not tree then return p end
  if n > 0 then SHOWN = SHOWN + (n < lim and n or lim) end
  if cut then not_shown(item, pos + 4, n - lim)
  elseif n > lim then set_text(add(item, F.more, rg(pos + 4, p)), sfmt("… %d more elements", n - lim)) end
  set_len(item, (p < TLEN and p or TLEN) - s)
  return p, text
end

R.packed = function(t, pos, h, s, depth, tree, prefix, key)
  need(pos, 4, t.name .. " count")
  local n = unpack("<i4", RAW, pos + 1)
  local data = pos + 4
  local wide = t.real and h >= 65536 and has(h, FLAG64)
  local es = wide and t.wesize or t.esize
  if n < 0 or n * es > STOP - data then
    fail(pos, sfmt("%s count %d x %d bytes does not fit the %d bytes left", t.name, n, es, STOP - data))
  end
  local np = data + n * es
  if REC and n > 0 then vary(data, np, false) end
  if CK then
    if t.real and wide ~= D.real_double then CANON = false end
    local gap = es - t.csize * t.width
    if not wide and gap > 0 then -- a padded stride: our encoder zeroes the engine's filler
      local z, raw = srep("\0", gap), RAW
      for i = 0, n - 1 do
        local q = data + i * es + es - gap
        if ssub(raw, q + 1, q + gap) ~= z then CANON = false; break end
      end
    end
  end
  if not tree then return np end
  local text = t.name .. BRACKET[n]
  local item = head(tree, t, s, np, prefix .. text, key, h)
  add_le(item, F_count, rg(pos, data))
  local lim = LIMIT
  local cut = lim > SHOWN_MAX - SHOWN and n > SHOWN_MAX - SHOWN -- (the budget cuts before the preference)
  if cut then lim = SHOWN_MAX - SHOWN end
  local shown = n < lim and n or lim
  SHOWN = SHOWN + shown
  local raw = RAW
  local fmt = "<" .. (wide and "d" or t.code)
  local cs = wide and 8 or t.csize
  local round = wide and not D.real_double -- a single-precision build reads them into float32
  local single = round or (not wide and t.code == "f")
  for i = 0, shown - 1 do
    local off = data + i * es
    if t.width == 1 then
      if t.is_int then
        prepend_text(add_le(item, F_int, rg(off, off + cs)), INDEX[i])
      else
        local v = unpack(fmt, raw, off + 1)
        if round then v = unpack("<f", Struct.pack("<f", v)) end
        add(item, F_float, rg(off, off + cs), v, INDEX[i] .. fmt_float(v, single))
      end
    else
      local el = {}
      for k = 0, t.width - 1 do
        local v = unpack(fmt, raw, off + k * cs + 1)
        if round then v = unpack("<f", Struct.pack("<f", v)) end
        el[#el + 1] = fmt_float(v, single)
      end
      local str = "(" .. tconcat(el, ", ") .. ")"
      add(item, F.element, rg(off, off + es), str, INDEX[i] .. str)
    end
  end
  if cut then not_shown(item, data + lim * es, n - lim)
  elseif n > lim then set_text(add(item, F.more, rg(data + lim * es, np)), sfmt("… %d more elements", n - lim)) end
  return np, text
end

-- typed-container info: builtin type id or a class name / script path string
local function container_type(pos, kind, what)
  local kname = KINDS[kind + 1]
  if kname == "builtin" then
    need(pos, 4, what .. " builtin type")
    local id = unpack("<I4", RAW, pos + 1)
    if id >= D.vmax then fail(pos, sfmt("%s builtin type %d is not below %d", what, id, D.vmax)) end
    local et = TYPES[id]
    if CK and et.key == "NIL" then CANON = false end -- the encoder writes Variant as untyped
    return { kind = kname, t = et, name = et.name, s = pos, e = pos + 4 }, pos + 4
  end
  local str, np = read_string(pos, what .. " " .. kname:gsub("_", " "))
  if kname == "script" and ssub(str, 1, 6) ~= "res://" then -- objects are allowed: the reader reads them
    fail(pos, sfmt("%s script path %s does not start with res://", what, py_repr(str)))
  end
  return { kind = kname, name = str, s = pos, e = np }, np
end

-- what the engine's typed container does with an element of type `et`: keep, convert or reject
local function settle(ct, et)
  if ct == nil then return "keep" end
  local obj = D.by_key.OBJECT
  if ct.kind ~= "builtin" or (obj and ct.t == obj) then
    if et.key == "NIL" or et.key == "OBJECT" then return "keep" end
    return "reject"
  end
  local want = ct.t.key
  if et.key == want or want == "NIL" then return "keep" end
  local conv = CONVERTS[want]
  if conv and conv[et.key] then return "convert" end
  return "reject"
end

local function too_deep(item, s, e)
  if not NOTED and DEPTH_NOTED then
    NOTED = true
    REC_OK = false -- (not planned)
    add_expert(item, E.depth, rg(s, e),
               sfmt("nesting deeper than %d levels is not shown (preference godot.max_depth)", MAX_SHOWN))
  end
end

local function show_types(item, types)
  for _, which in ipairs({ "element", "key", "value" }) do
    local ct = types[which]
    if ct then
      add(item, F.container_type, rg(ct.s, ct.e), ct.kind .. " " .. ct.name,
          (which:gsub("^%l", string.upper)) .. " type: " .. ct.kind .. " " .. ct.name)
    end
  end
end

-- A Dictionary key, read before its value is shown. A String key is shown in its entry's label:
-- { pre = '"name" → ', short = summary text }, kept by its bytes (keys repeat from message to
-- message). Any other key (and every key with the details preference) is a Variant shown inside its
-- value's item: { s, depth, pre }.
local function read_key(pos, depth)
  if depth > MAX_NESTING then fail(pos, DEPTH_FAILURE .. MAX_NESTING .. " levels") end
  if STOP - pos < 4 then need(pos, 4, "Variant header") end
  local raw = RAW
  local id, b1, b2, b3, n0, n1, n2, n3 = sbyte(raw, pos + 1, pos + 8) -- the header and the length
  local t = TYPES[id]
  if t and t.kind == "string" and b1 + b2 + b3 == 0 and not DETAILS then
    local start = pos + 8
    if n3 and n3 < 128 then -- the whole length is there and it is not negative
      local n = n0 + 256 * (n1 + 256 * (n2 + 256 * n3))
      local np = start + n + (-n) % 4
      if np <= STOP then
        local key = t.keys[ssub(raw, start + 1, start + n)]
        if key then return key, np end
      end
    end
    local str, np, n = read_string(pos + 4, t.name) -- fails as the engine does
    local key = { pre = QUOTED[str] .. " → ", short = short(str, 24) }
    if t.nkeys >= KEEP then t.keys, t.nkeys = {}, 0 end
    t.keys[ssub(raw, start + 1, start + n)], t.nkeys = key, t.nkeys + 1
    return key, np
  end
  REC_OK = false -- its text is made from its bytes: no shape
  return { s = pos, depth = depth, pre = "" }, variant(pos, depth)
end

-- The text of a key that is not a String, for the label of a Dictionary shown as one item: the key
-- read again as without a tree (it was checked already), then the tree's methods back
local function key_text(k, item)
  local tvb = TVB
  tree_methods(NULL_ITEM)
  TVB, NULL_MODE = NULL_FN, true
  local _, text = variant(k.s, k.depth, NULL_ITEM, KEY, nil)
  TVB, NULL_MODE = tvb, false
  tree_methods(item)
  k.text = text
  return text
end

-- The label of a Dictionary: its type and first keys, e.g. Dictionary{id, pos, rot, vel, …}. The
-- labels are kept in a trie of key texts: node[key] is the next node, node[1] the one before,
-- node[2] the key, node[3] the label once made.
local SUMMARY, summary_n = {}, 0
local MORE = {} -- the key after the fourth: more keys follow

local function summary_next(node, key)
  local nx = node[key]
  if nx == nil then
    if summary_n >= KEEP then SUMMARY, summary_n = {}, 0 end
    nx = { node, key }
    node[key], summary_n = nx, summary_n + 1
  end
  return nx
end

local function summary_text(node)
  local text = node[3]
  if text == nil then
    local keys, x = {}, node
    while x[1] do
      table.insert(keys, 1, x[2] == MORE and "…" or x[2])
      x = x[1]
    end
    text = x[2] .. "{" .. tconcat(keys, ", ") .. "}"
    node[3] = text
  end
  return text
end

-- (op[9]: the item's length, op[10]: the count shown, false in the compact tree)
local function rp_container(op, items, i)
  local item, range = head(items[op[2]], op[3], op[4], op[5], op[7], nil, op[8])
  local n = op[10]
  if n then add(item, F_count, range, n) end
  set_len(item, op[9])
  items[i] = item
end

R.container = function(t, pos, h, s, depth, tree, prefix, key)
  local raw = RAW
  local pairs_ = t.pairs
  local types
  local what = pairs_ and "Dictionary" or "Array"
  if h >= 65536 then
    if pairs_ then
      if D.typed_dictionary then
        local kk, vk = field_get(KEY_KIND, h), field_get(VAL_KIND, h)
        if kk ~= 0 or vk ~= 0 then
          types = {}
          if kk ~= 0 then types.key, pos = container_type(pos, kk, "Dictionary key") end
          if vk ~= 0 then types.value, pos = container_type(pos, vk, "Dictionary value") end
        end
      end
    elseif D.typed_array then
      local ek = field_get(EL_KIND, h)
      if ek ~= 0 then
        types = {}
        types.element, pos = container_type(pos, ek, "Array element")
      end
    end
  end
  if STOP - pos < 4 then need(pos, 4, what .. " count") end
  local word = unpack("<I4", raw, pos + 1)
  local n = word % (t.count_mask + 1)
  if CK and n ~= word then CANON = false end
  pos = pos + 4
  local item, range, sub, tname, node, op
  if tree then
    tname = t.name
    if types then
      tname = tname .. "[" .. (pairs_ and ((types.key and types.key.name or "Variant") .. ", "
                                            .. (types.value and types.value.name or "Variant"))
                                       or types.element.name) .. "]"
    end
    -- the item covers the header and the count until the end is known (set_len below); so does Count
    local label = prefix .. tname .. (pairs_ and " (incomplete)" or BRACKET[n])
    item, range = head(tree, t, s, pos, label, key, h)
    if TREC then
      if types then REC_OK = false end
      op = plan_op(rp_container, tree, t, s, pos, pos, label, h)
      if op then SLOT[item], op[10] = NOPS, not COMPACT and n end
    end
    if key then prefix = key.pre end -- a key that is a Variant of its own has its text now
    if types then show_types(item, types) end
    if not COMPACT then add(item, F_count, range, n) end
    sub = item
    if depth + 1 >= MAX_SHOWN and n > 0 then
      too_deep(item, s, STOP)
      sub = nil
    end
    if pairs_ then
      node = SUMMARY[tname]
      if node == nil then node = { nil, tname }; SUMMARY[tname] = node end
    end
  end
  local seen = (CK and pairs_) and {} or nil
  local settled = false -- an element the typed container converts or drops
  for i = 0, n - 1 do
    if sub and not NULL_MODE then
      if SHOWN >= SHOWN_MAX then not_shown(sub, pos, n - i); sub = nil else SHOWN = SHOWN + 1 end
    end
    if pairs_ then
      local ks = pos
      if sub and NULL_MODE then
        -- no tree: only the label of the message's top Variant is wanted (the Info column), and a
        -- Dictionary's label names its first keys; the values are checked, not labelled
        if i < 4 then
          local k
          k, pos = read_key(pos, depth + 1)
          if not k.short and not k.text then
            local _, text = variant(k.s, k.depth, sub, KEY, nil)
            k.text = text
          end
          pos = variant(pos, depth + 1)
          local kt = k.short or k.text
          node = node[kt] or summary_next(node, kt)
        else
          pos = variant(variant(pos, depth + 1), depth + 1)
        end
      elseif sub then
        local k
        k, pos = read_key(pos, depth + 1)
        if k.s then
          pos = variant(pos, depth + 1, sub, "", k)
        else
          pos = variant(pos, depth + 1, sub, k.pre, nil)
        end
        if i < 4 then
          local kt = k.short or k.text
          node = node[kt] or summary_next(node, kt)
        end
      elseif node and i < 4 then
        -- a Dictionary below the levels shown is one item: its label names its first keys
        local k
        k, pos = read_key(pos, depth + 1)
        local kt = k.short or k.text or key_text(k, item)
        pos = variant(pos, depth + 1)
        node = node[kt] or summary_next(node, kt)
      else
        pos = variant(pos, depth + 1)
        if seen then -- a repeated key collapses in the engine's Dictionary
          local k = ssub(raw, ks + 1, pos)
          if seen[k] then CANON = false end
          seen[k] = true
        end
        pos = variant(pos, depth + 1)
      end
      if types and types.key then -- a typed Dictionary pushes its keys (Godot 4.6 keeps values as sent)
        local st = settle(types.key, TYPES[sbyte(raw, ks + 1)])
        if st ~= "keep" then
          settled = true
          if sub then
            add_expert(sub, E.engine, rg(ks, ks + 4), st == "convert"
              and sfmt("the engine converts key %d to the Dictionary's key type", i)
              or sfmt("the engine drops entry %d: its key is not of the Dictionary's key type", i))
          end
        end
      end
    else
      local es = pos
      if NULL_MODE then pos = variant(pos, depth + 1) -- no tree: the elements are checked, not labelled
      else pos = variant(pos, depth + 1, sub, sub and INDEX[i] or nil, nil) end
      if types then -- a typed Array pushes each element: kept, converted or dropped
        local st = settle(types.element, TYPES[sbyte(raw, es + 1)])
        if st ~= "keep" then
          settled = true
          if sub then
            add_expert(sub, E.engine, rg(es, es + 4), st == "convert"
              and sfmt("the engine converts element %d to the Array's element type", i)
              or sfmt("the engine drops element %d: it is not of the Array's element type", i))
          end
        end
      end
    end
  end
  if settled and CK then CANON = false end
  if not tree then return pos end
  local len = (pos < TLEN and pos or TLEN) - s
  set_len(item, len)
  if op then op[9] = len end
  if not pairs_ then return pos, tname .. BRACKET[n] end
  if n > 4 then node = summary_next(node, MORE) end
  local text = summary_text(node)
  set_text(item, prefix .. text)
  if op then op[7] = prefix .. text end -- replayed: the item made with its final label
  return pos, text
end

R.object = function(t, pos, h, s, depth, tree, prefix, key)
  local raw = RAW
  if h >= 65536 and has(h, OBJ_AS_ID) then
    need(pos, 8, t.name .. " id")
    if not tree then return pos + 8 end
    local text = t.name .. ": #" .. tostring(unpack("<E", raw, pos + 1))
    add_le(head(tree, t, s, pos + 8, prefix .. text, key, h), F.id, rg(pos, pos + 8))
    return pos + 8, text
  end
  -- a full object: the reader reads objects (allow_objects)
  local cls, p, clen = read_string(pos, t.name .. " class name")
  local item
  if tree then
    item = head(tree, t, s, p, prefix .. t.name .. ": " .. (cls == "" and "null" or cls), key, h)
    if key then prefix = key.pre end
    add(item, F.class, rg(pos + 4, pos + 4 + clen), cls)
  end
  if cls == "" then return p, t.name .. ": null" end
  need(p, 4, t.name .. " property count")
  local n = unpack("<i4", raw, p + 1)
  if item then add_le(item, F_count, rg(p, p + 4)) end
  p = p + 4
  if n < 0 and CK then CANON = false end
  local sub = item
  if item and depth + 1 >= MAX_SHOWN and n > 0 then too_deep(item, s, STOP); sub = nil end
  local seen = CK and {} or nil
  for i = 1, n do
    if depth + 1 > MAX_NESTING then fail(p, DEPTH_FAILURE .. MAX_NESTING .. " levels") end
    if sub then
      if SHOWN >= SHOWN_MAX then not_shown(sub, p, n - i + 1); sub = nil else SHOWN = SHOWN + 1 end
    end
    local ns = p
    local name
    name, p = read_string(p, "property name")
    if seen then
      if seen[name] then CANON = false end
      seen[name] = true
    end
    if sub then
      local pre = "." .. name .. " = "
      p = variant(p, depth + 1, sub, pre, not COMPACT and { prop = name, s = ns, e = p, pre = pre } or nil)
    else
      p = variant(p, depth + 1)
    end
  end
  local text = t.name .. ": " .. cls .. " (" .. (n > 0 and n or 0) .. " properties)"
  if item then
    set_len(item, (p < TLEN and p or TLEN) - s)
    set_text(item, prefix .. text)
  end
  return p, text
end

for _, d in ipairs(DIALECT_LIST) do
  for _, t in pairs(d.types) do
    t.read = R[t.kind]
    -- for check(): the size after the header of a Variant whose size the header alone gives, and
    -- whether the 64-bit flag widens it
    local k = t.kind
    t.planned = k == "container" or k == "number" or k == "struct" or k == "string" or k == "bool" or k == "empty"
    if k == "number" or k == "struct" then t.fixed, t.widens = t.nsize, k == "number" or t.real
    elseif k == "bool" then t.fixed, t.widens = 4, false
    elseif k == "empty" then t.fixed, t.widens = 0, false end
  end
end

-- the reader of the Variant at `pos`: checks it, and shows it when given a tree
local function full(pos, depth, tree, prefix, key)
  if depth > MAX_NESTING then fail(pos, DEPTH_FAILURE .. MAX_NESTING .. " levels") end
  if STOP - pos < 4 then need(pos, 4, "Variant header") end
  local id, b1, b2, b3 = sbyte(RAW, pos + 1, pos + 4)
  local t = TYPES[id]
  if t == nil then fail(pos, sfmt("type id %d is not below %d (%s)", id, D.vmax, D.name)) end
  local h = id + 256 * (b1 + 256 * (b2 + 256 * b3))
  if CK and h >= 256 and band(h, 0xFFFFFF00 - t.allowed) ~= 0 then CANON = false end
  if TREC and tree and (key or not t.planned) then REC_OK = false end
  return t.read(t, pos + 4, h, pos, depth, tree, prefix, key)
end

-- Checking alone (no tree, no canonical-form check): the common layouts are stepped over here, in
-- one function, without the readers' calls; anything else, and anything that does not look right,
-- goes to full(), which reads it as before (and fails where the engine does). Most Variants of a
-- message are checked this way: all of them without a tree, and the levels below the ones shown.
local check
check = function(pos, depth)
  if depth > MAX_NESTING or STOP - pos < 4 then return full(pos, depth) end
  local raw = RAW
  -- the header and the word after it (a length or a count) in one call
  local id, b1, b2, b3, n0, n1, n2, n3 = sbyte(raw, pos + 1, pos + 8)
  local t = TYPES[id]
  if t == nil then return full(pos, depth) end
  local p = pos + 4
  local size = t.fixed
  if size then
    if b2 + b3 > 0 and t.widens and has(id + 256 * (b1 + 256 * (b2 + 256 * b3)), FLAG64) then size = t.wsize end
    if STOP - p < size then return full(pos, depth) end
    if REC and size > 0 then vary(p, p + size, false) end
    return p + size
  end
  local k = t.kind
  if k == "string" then
    if STOP - p < 4 or n3 >= 128 then return full(pos, depth) end -- short, or a negative length
    local n = n0 + 256 * (n1 + 256 * (n2 + 256 * n3))
    local stop = p + 4 + n
    local e = stop + (-n) % 4
    if e > STOP then return full(pos, depth) end
    if n > 0 then
      -- plain ASCII without NUL is valid in every dialect; the scan ends at the next length or
      -- header (their high bytes are zero), so a message is scanned about once in all
      local q = sfind(raw, SCAN, p + 5)
      if q and q <= stop then
        if UTF8(ssub(raw, p + 5, stop)) == nil then return full(pos, depth) end
      elseif REC then
        vary(p + 4, stop, true)
      end
    end
    return e
  elseif k == "container" then
    if b2 + b3 > 0 or STOP - p < 4 then return full(pos, depth) end -- typed: the reader
    local n = (n0 + 256 * (n1 + 256 * (n2 + 256 * n3))) % t.count_mod
    p = p + 4
    if t.pairs then n = n + n end
    depth = depth + 1
    if depth > MAX_NESTING then
      for _ = 1, n do p = check(p, depth) end -- (fails there, as the engine's reader does)
      return p
    end
    -- the elements of the commonest kinds are stepped over here, without a call per element: a
    -- fixed-size Variant without the 64-bit flag, a String of plain ASCII; anything else goes to check()
    local types, stop, keyed = TYPES, STOP, t.pairs
    for i = 1, n do
      local eid, _, e2, e3, m0, m1, m2, m3 = sbyte(raw, p + 1, p + 8)
      local et = types[eid]
      local q = p + 4
      local esize = et and et.fixed
      if esize then
        if stop - q >= esize and e2 + e3 == 0 then
          p = q + esize
          if REC and esize > 0 then vary(q, p, false) end
        else
          p = check(p, depth)
        end
      elseif et and et.kind == "string" and stop - q >= 4 and m3 < 128 then
        local len = m0 + 256 * (m1 + 256 * (m2 + 256 * m3))
        local e = q + 4 + len + (-len) % 4
        local odd = len > 0 and sfind(raw, SCAN, q + 5)
        if e <= stop and not (odd and odd <= q + 4 + len) then
          -- (a key's text stays in the shape: keys come back, and bytes compared cost less than a search)
          if REC and len > 0 and not (keyed and i % 2 == 1) then vary(q + 4, q + 4 + len, true) end
          p = e
        else
          p = check(p, depth)
        end
      else
        p = check(p, depth)
      end
    end
    return p
  end
  return full(pos, depth)
end

-- Shapes. Without a tree (the packet list) a message is checked for its Info text and whether it is
-- malformed, and game traffic repeats a few shapes: the same types, counts, lengths and keys, with
-- other numbers and other ASCII text in them. Checking a message records the spans of bytes check()
-- steps over without reading (the value of a number, bool or math type, the data of a packed array)
-- or reads only to see they are plain ASCII (a String value's), and the message's shape is its other
-- bytes (headers, counts, lengths, Dictionary keys) where they are. A message of the same dialect and
-- length with those bytes, and plain ASCII where that was, is read exactly as that one was, to every
-- byte where reading decides anything, so it gets the same answer: one string.find (plain, anchored
-- by comparing where it finds it) per run of those bytes, and one per ASCII span. A shape is made only
-- of a valid message, only for a container at the top (a String's or number's label is its value),
-- and not when a key the label shows is not a String; the preferences being read again forgets every
-- shape.
local SHAPE_MAX_BYTES = 4096 -- longer messages are checked each time
local SHAPE_KEEP = 128 -- shapes kept (by dialect and length) before starting again
-- the longest run of a shape's bytes found at once: a run that is not where it should be is searched
-- for in the rest of the message, at most (bytes left) x (its length) byte comparisons
local SHAPE_RUN_MAX = 64
-- the ops of all plans kept (each a table of ~220 bytes) before starting again: a plan has an op per item
-- shown, and 128 long messages of many small Variants would otherwise keep ~15 MB for the collector to walk
local PLAN_OPS_KEEP = 8192
-- Recording a plan costs more than showing the message without one (an op table per item, the shape's
-- bytes copied), and a flood of messages of distinct shapes replays none (-V took ~1.4x the time it did
-- without plans). After PLAN_MISS_RUN plans recorded in a row and none replayed, only one message in
-- PLAN_SAMPLE records one; a replay ends the run. (Plans change no output, only the time taken.)
local PLAN_MISS_RUN, PLAN_SAMPLE = 64, 16
local plan_misses = 0 -- plans recorded since the last replay
-- the shapes kept for the packet list and the plans kept for the tree (see "Plans"), each by dialect
-- and length, with how many they hold (n)
local SHAPES, PLANS, SHAPES_SERIAL = {}, {}, -1

local function clear_kept(kept)
  for _, d in ipairs(DIALECT_LIST) do kept[d] = {} end
  kept.n, kept.ops = 0, 0
end

forget_shapes = function()
  clear_kept(SHAPES)
  clear_kept(PLANS)
  SHAPES_SERIAL = P.serial
end

-- whether the message fits the shape: { start (1-based), bytes, start, bytes, ..., ascii = { start,
-- end, ... } }. A run found later than its start is a difference: the search stops at the first one.
fits = function(raw, sh)
  for i = 1, #sh, 2 do
    local at = sh[i]
    if sfind(raw, sh[i + 1], at, true) ~= at then return false end
  end
  local a = sh.ascii
  for i = 1, #a, 2 do
    local q = sfind(raw, SCAN, a[i])
    if q and q <= a[i + 1] then return false end
  end
  return true
end

keep_shape = function(kept, raw, used, text)
  local len = #raw
  local sh, ascii, at = { used = used, text = text }, {}, 0
  sh.ascii = ascii
  for i = 1, NSPAN + 1, 3 do
    local s, e, is_ascii = len, len, false -- (past the last span: the bytes after it)
    if i < NSPAN then s, e, is_ascii = SPANS[i], SPANS[i + 1], SPANS[i + 2] end
    if s < at then return end -- not in order: no shape
    while s > at do
      local e_run = s - at > SHAPE_RUN_MAX and at + SHAPE_RUN_MAX or s
      sh[#sh + 1], sh[#sh + 2] = at + 1, ssub(raw, at + 1, e_run)
      at = e_run
    end
    if is_ascii then ascii[#ascii + 1], ascii[#ascii + 2] = s + 1, e end
    at = e
  end
  local shapes = kept[D]
  if shapes[len] == nil then
    if kept.n >= SHAPE_KEEP then clear_kept(kept); shapes = kept[D] end
    kept.n = kept.n + 1
  end
  shapes[len] = sh
  return sh
end

-- the ops of a plan, replayed under `tree`: items[slot] holds the TreeItem each op adds for its children
local ITEMS = {}
local function replay(ops, tree)
  local items = ITEMS
  items[0] = tree
  for i = 1, #ops do
    local op = ops[i]
    op[1](op, items, i)
  end
end

variant = function(pos, depth, tree, prefix, key)
  if tree == nil and not CK then return check(pos, depth) end
  return full(pos, depth, tree, prefix, key)
end

-- Check one message: ok, bytes used, canonical (re-encodes byte-identically), error offset, reason
decode = function(raw, stop, d, ck)
  begin(raw, stop, d, ck)
  local ok, used = pcall(variant, 0, 0)
  if ok then return true, used, CANON end
  if used ~= FAIL then error(used, 0) end
  return false, nil, false, ERR_OFF, ERR_MSG
end

-- Check and show one message under `tree`: ok, bytes used, label text, error offset, reason.
-- A malformed message shows what was read before the error.
show = function(tvb, base, raw, d, tree, prefix)
  SERIAL = SERIAL + 1
  local len, kept = #raw, nil
  if SHAPES_SERIAL ~= P.serial then forget_shapes() end
  if tree == NULL_ITEM then
    -- no tree: a message of a shape read before gives the same answer (see "Shapes")
    kept = SHAPES
    local sh = SHAPES[d][len]
    if sh and fits(raw, sh) then return true, sh.used, sh.text end
  elseif not P.details then
    -- a tree: a message of a shape shown before adds that one's items (see "Plans")
    local pl = PLANS[d][len]
    if pl and pl.prefix == prefix and fits(raw, pl) then
      RAW, TVB, BASE, TLEN, D = raw, tvb, base, len, d
      COMPACT = P.compact
      tree_methods(tree)
      replay(pl.ops, tree)
      plan_misses = 0
      return true, pl.used, pl.text
    end
    -- (after a run of plans recorded and none replayed, one message in PLAN_SAMPLE records one)
    if plan_misses < PLAN_MISS_RUN or SERIAL % PLAN_SAMPLE == 0 then kept = PLANS end
  end
  begin(raw, len, d, false)
  NULL_MODE = tree == NULL_ITEM
  TVB, BASE, TLEN = (NULL_MODE and NULL_FN or tvb), base, #raw
  COMPACT, DETAILS, LIMIT, MAX_SHOWN = P.compact, P.details, NULL_MODE and 0 or P.packed_limit, P.max_depth
  DEPTH_NOTED = P.depth_noted
  tree_methods(tree)
  if kept and len <= SHAPE_MAX_BYTES then
    local t = TYPES[sbyte(raw, 1)]
    REC = t ~= nil and t.kind == "container"
    REC_OK, NSPAN = true, 0
    if REC and kept == PLANS then TREC, OPS, NOPS, SLOT = true, {}, 0, { [tree] = 0 } end
  end
  local ok, used, text = pcall(variant, 0, 0, tree, prefix, nil)
  if REC then
    REC = false
    if ok and REC_OK and (not TREC or NOPS <= PLAN_OPS_KEEP) then
      if TREC and kept.ops + NOPS > PLAN_OPS_KEEP then clear_kept(kept) end
      local sh = keep_shape(kept, raw, used, text)
      if sh and TREC then sh.ops, sh.prefix, kept.ops, plan_misses = OPS, prefix, kept.ops + NOPS, plan_misses + 1 end
    end
    TREC, OPS, SLOT = false, nil, nil
  end
  if ok then return true, used, text end
  if used ~= FAIL then error(used, 0) end
  return false, nil, nil, ERR_OFF, ERR_MSG
end

-- The top of a valid message, for the debugger: { t, v (String/int value), kids = { {t, v}... } }
top_shape = function(raw, d)
  begin(raw, #raw, d, false)
  local function leaf(pos)
    local id = sbyte(raw, pos + 1)
    local t = TYPES[id]
    local node = { t = t }
    if t.kind == "string" then node.v = read_string(pos + 4, t.name)
    elseif t.kind == "number" and t.is_int then
      local h = unpack("<I4", raw, pos + 1)
      node.v = tonumber(tostring(unpack(has(h, FLAG64) and t.wfmt or t.nfmt, raw, pos + 5)))
    elseif t.kind == "bool" then node.v = unpack("<I4", raw, pos + 5) ~= 0 and 1 or 0 end
    return node
  end
  local top = leaf(0)
  local t = top.t
  if t.kind == "container" and not t.pairs then
    local h = unpack("<I4", raw, 1)
    local pos = 4
    if D.typed_array and h >= 65536 then
      local ek = field_get(EL_KIND, h)
      if ek ~= 0 then
        local ct
        top.typed = true
        ct, pos = container_type(pos, ek, "Array element")
      end
    end
    local n = unpack("<I4", raw, pos + 1) % (t.count_mask + 1)
    pos = pos + 4
    top.kids = {}
    for i = 1, n do
      local kid = leaf(pos)
      top.kids[i] = kid
      local e = variant(pos, 1)
      if kid.t.kind == "container" and not kid.t.pairs then kid.raw = ssub(raw, pos + 1, e) end
      pos = e
    end
  end
  return top
end

end -- of the decoder

----------------------------------------------------------------------------------------------------
-- Dialect detection per conversation: the rules of godot_dissect/detect.py
----------------------------------------------------------------------------------------------------

local CANDIDATES = SPEC.candidates

local function new_guess()
  local g = { samples = 0, disc = 0, scores = {} }
  for _, name in ipairs(CANDIDATES) do g.scores[name] = { fails = 0, exact = 0, canonical = 0, first = "" } end
  return g
end

local function b2n(b) return b and 1 or 0 end

local function guess_add(g, raw)
  g.samples = g.samples + 1
  if g.samples == 1 and #raw >= 4 then
    -- what each dialect takes the first message for: the evidence says what differed
    local id = band(unpack("<I4", raw, 1), SPEC.type_mask)
    g.first_types = {}
    for _, name in ipairs(CANDIDATES) do
      local t = DIALECTS[name].types[id]
      g.first_types[name] = t and t.name or sfmt("type %d (none)", id)
    end
  end
  local outcome = {}
  local best
  for _, name in ipairs(CANDIDATES) do
    local s = g.scores[name]
    local ok, used, canon, off, msg = decode(raw, #raw, DIALECTS[name], true)
    local o
    if not ok and msg and sfind(msg, DEPTH_FAILURE, 1, true) == 1 then
      -- fails only on our nesting limit (Godot 3.2 has none): the engine reads it all, so for the
      -- dialect guess it is a full reading (shown as malformed, with the reason, all the same)
      ok, used, canon = true, #raw, false
    elseif ok and used < #raw and used * 2 < #raw then
      -- a prefix leaving most of the message unread is no reading of it: it must not win over a
      -- dialect that reads the message through
      ok, off, msg = false, used, sfmt("%d of %d bytes read", used, #raw)
    end
    if not ok then
      s.fails = s.fails + 1
      if s.first == "" then s.first = sfmt("%s at offset %d", msg, off) end
      o = 0
    else
      local exact = used == #raw
      local c = exact and canon
      if exact then s.exact = s.exact + 1 end
      if c then s.canonical = s.canonical + 1 end
      -- the key (exact, ok, canonical) as one number
      o = b2n(exact) * 4 + 2 + b2n(c)
    end
    outcome[name] = o
    if best == nil or o > best then best = o end
  end
  local fams, nf = {}, 0
  for _, name in ipairs(CANDIDATES) do
    if outcome[name] == best and not DIALECTS[name].doc_only then
      local f = family_of(name)
      if not fams[f] then fams[f] = true; nf = nf + 1 end
    end
  end
  if nf == 1 then g.disc = g.disc + 1 end
end

local function guess_decided(g)
  if g.disc >= 2 or g.samples >= SPEC.max_ambiguous_samples then return true end
  return g.samples >= SPEC.max_samples and g.disc >= 1
end

local function rank(g)
  local order = {}
  for i, name in ipairs(CANDIDATES) do order[i] = name end
  local idx = {}
  for i, name in ipairs(CANDIDATES) do idx[name] = i end
  tsort(order, function(a, b)
    local x, y = g.scores[a], g.scores[b]
    if x.exact ~= y.exact then return x.exact > y.exact end
    if x.fails ~= y.fails then return x.fails < y.fails end
    if x.canonical ~= y.canonical then return x.canonical > y.canonical end
    return idx[a] < idx[b]
  end)
  return order
end

local function same_score(x, y) return x.exact == y.exact and x.fails == y.fails and x.canonical == y.canonical end

-- the best dialect; ties go to what other conversations of the capture speak, then to the order
local function guess_verdict(g, elsewhere)
  local ranked = rank(g)
  local s0 = g.scores[ranked[1]]
  local tied = {}
  for _, name in ipairs(ranked) do
    if same_score(g.scores[name], s0) then tied[#tied + 1] = name end
  end
  local hint = ""
  if #tied > 1 and elsewhere then
    local any = false
    for _, name in ipairs(tied) do if (elsewhere[name] or 0) > 0 then any = true end end
    if any then
      local pick, best = nil, -1
      for _, name in ipairs(tied) do
        local n = elsewhere[name] or 0
        if n > best then pick, best = name, n end
      end
      if pick ~= ranked[1] then
        hint = sfmt("; %s chosen because other conversations in this capture speak it", pick)
      end
      for i, name in ipairs(ranked) do
        if name == pick then table.remove(ranked, i); break end
      end
      table.insert(ranked, 1, pick)
    end
  end
  local best = ranked[1]
  local s = g.scores[best]
  local parts = { sfmt("%s: %d/%d messages decode exactly, %d re-encode byte-identically",
                       best, s.exact, g.samples, s.canonical) }
  for i = 2, #ranked do
    local o = g.scores[ranked[i]]
    if o.fails > 0 then
      parts[#parts + 1] = sfmt("%s rejects %d (%s)", ranked[i], o.fails, o.first)
    elseif o.exact ~= s.exact or o.canonical ~= s.canonical then
      parts[#parts + 1] = sfmt("%s: %d exact, %d identical", ranked[i], o.exact, o.canonical)
    end
  end
  if #tied > 1 then
    local ft = g.first_types or {}
    local as, differ = {}, false
    for _, name in ipairs(tied) do
      as[#as + 1] = sfmt("%s as %s", name, ft[name] or "?")
      if ft[name] ~= ft[tied[1]] then differ = true end
    end
    if differ then
      parts[#parts + 1] = sfmt("ambiguous: %s score alike but read the first message differently (%s)%s",
                               tconcat(tied, ", "), tconcat(as, ", "), hint)
    else
      parts[#parts + 1] = sfmt("ambiguous: %s score alike (the first message is a %s in each)%s",
                               tconcat(tied, ", "), ft[tied[1]] or "?", hint)
    end
  end
  local fams, nf = {}, 0
  for _, name in ipairs(tied) do
    if not DIALECTS[name].doc_only and not fams[family_of(name)] then fams[family_of(name)] = true; nf = nf + 1 end
  end
  return { dialect = best, evidence = tconcat(parts, "; "), ambiguous = #tied > 1, family_clear = nf <= 1 }
end

----------------------------------------------------------------------------------------------------
-- Conversations, per-frame records, messages
----------------------------------------------------------------------------------------------------

local convs, frames, clear_verdicts = {}, {}, {}

local last = { number = -1 } -- the conversation of the frame dissected last (TCP asks twice per frame)

-- see "Long PDUs", "Lost synchronisation" and "Connection ends" below
local tcp_notes, tcp_starts, tcp_held, lost_notes, end_notes, tap_upto = {}, {}, 0, {}, {}, 0
local tcp_collecting = 0 -- collected PDUs not finished (the tap that sees connection ends is on meanwhile)
local tcp_upto = 0 -- the last frame tcp_pdus saw in the first pass
local function reset_state()
  convs, frames, clear_verdicts = {}, {}, {}
  last = { number = -1 }
  tcp_notes, tcp_starts, tcp_held, lost_notes, end_notes, tap_upto = {}, {}, 0, {}, {}, 0
  tcp_collecting, tcp_upto = 0, 0
end

-- pinfo.number and pinfo.visited, read once per dissector call (each read of a Pinfo attribute is a
-- call into Wireshark); the cache holds the Pinfo object it was read from
local seen_pinfo = { pinfo = false, number = -1, visited = false }

local function frame_of(pinfo)
  local f = seen_pinfo
  if f.pinfo ~= pinfo then f.pinfo, f.number, f.visited = pinfo, pinfo.number, pinfo.visited end
  return f.number, f.visited
end

-- the decimal text of a port: a number made a string costs a C sprintf (as much as a Pinfo attribute),
-- and there are at most 65536 of them
local PORT_TEXT = setmetatable({}, { __index = function(t, port)
  local s = tostring(port)
  t[port] = s
  return s
end })

-- a conversation's key (both directions alike) and the sender's address:port
local function conv_key(pinfo, transport)
  local a = tostring(pinfo.src) .. ":" .. PORT_TEXT[pinfo.src_port]
  local b = tostring(pinfo.dst) .. ":" .. PORT_TEXT[pinfo.dst_port]
  return a < b and (transport .. " " .. a .. " " .. b) or (transport .. " " .. b .. " " .. a), a
end

-- (existing: only a conversation already kept, else nil)
local function conv_of(pinfo, transport, existing)
  local n, visited = frame_of(pinfo)
  if last.number == n and last.transport == transport and last.visited == visited then
    return last.conv, last.sender
  end
  local key, a = conv_key(pinfo, transport)
  local conv = convs[key]
  if conv == nil then
    if existing then return nil end
    conv = { key = key, transport = transport, sides = {}, pending = {}, confirmed = false }
    if P.dialect ~= "auto" then
      conv.verdict = { dialect = P.dialect, evidence = "chosen by the user (preference godot.dialect)" }
    else
      conv.guess = new_guess()
    end
    convs[key] = conv
  end
  last.number, last.transport, last.visited, last.conv, last.sender = n, transport, visited, conv, a
  return conv, a
end

local function side_of(conv, sender)
  local s = conv.sides[sender]
  if s == nil then s = {}; conv.sides[sender] = s end
  return s
end

local function decide(conv)
  local v = guess_verdict(conv.guess, clear_verdicts)
  conv.verdict = v
  if v.family_clear then clear_verdicts[v.dialect] = (clear_verdicts[v.dialect] or 0) + 1 end
end

-- a message the verdict's dialect rejects: switch when another dialect reads it exactly
local function reconsider(conv, raw)
  local g = conv.guess
  if g == nil then return nil end
  guess_add(g, raw)
  local new = guess_verdict(g, clear_verdicts)
  if new.dialect == conv.verdict.dialect then return nil end
  local ok, used = decode(raw, #raw, DIALECTS[new.dialect], false)
  if not ok or used ~= #raw then return nil end
  new.evidence = new.evidence .. sfmt(" (switched from %s at a message %s rejects)", conv.verdict.dialect,
                                      conv.verdict.dialect)
  conv.verdict = new
  return new
end

local function is_array(n) return n.t.kind == "container" and not n.t.pairs end

-- The message's record, once its conversation's dialect is known (the Python reader's _emit and
-- _debugger). rec: { dialect, evidence, role, name, thread, part, argc, args (raw bodies), err }.
-- `hint`: a dialect already known to read the message exactly.
-- a String that can start a Godot 3 game -> editor message: a 3.x name, or a game's own (its prefix); any
-- other String is an argument of a message the capture joined part-way (spec.debugger.is_godot3_message_name)
local GODOT3_MESSAGES = {}
for _, name in ipairs(SPEC.godot3_debugger_messages) do GODOT3_MESSAGES[name] = true end
local function is_message_name(name)
  return GODOT3_MESSAGES[name] or name:sub(1, #SPEC.godot3_custom_prefix) == SPEC.godot3_custom_prefix
end

local function finalize(conv, side, raw, debugger)
  local v = conv.verdict
  if not debugger and conv.evidence_shown then
    -- plain messages after the first share one record per verdict: the live heap stays small,
    -- which keeps Lua's garbage collector cheap on big captures
    local shared = conv.shared
    if shared == nil or shared.verdict ~= v then
      shared = { dialect = v.dialect, evidence = v.evidence, role = "variant", conv = conv, verdict = v, shared = true }
      conv.shared = shared
    end
    return shared
  end
  local rec = { dialect = v.dialect, evidence = v.evidence, role = "variant", conv = conv }
  if not conv.evidence_shown then rec.show_evidence, conv.evidence_shown = true, true end
  -- plain messages are checked while they are shown (show_message); debugger messages now, because
  -- the Godot 3 debugger's state depends on them
  if not debugger then return rec end
  local d = DIALECTS[v.dialect]
  local ok = decode(raw, #raw, d, false)
  if not ok then
    local switched = reconsider(conv, raw)
    if switched then
      v, d = switched, DIALECTS[switched.dialect]
      rec.dialect, rec.evidence, rec.show_evidence = v.dialect, v.evidence, true
      ok = decode(raw, #raw, d, false)
    end
  end
  rec.checked = true
  if not ok then return rec end
  local top = top_shape(raw, d)
  local kids = top.kids
  if d.family >= 4 then
    if kids and (#kids == 3 or #kids == 2) and kids[1].t.kind == "string" and is_array(kids[#kids])
        and (#kids == 2 or kids[2].v ~= nil) then
      rec.role, rec.name = "debugger", kids[1].v
      if #kids == 3 then rec.thread = kids[2].v end
    else
      rec.role, rec.err = "error", "debugger message is not [name, thread, data]"
    end
    return rec
  end
  -- Godot 3: the editor sends [command, args...]; the game sends name, count, then count PDUs
  if side.dbg_name == nil then
    if kids and #kids > 0 and kids[1].t.kind == "string" then
      rec.role, rec.name = "debugger", kids[1].v
    elseif top.t.kind == "string" and is_message_name(top.v) then -- else an argument of a message begun
      -- before the capture did: a plain Variant
      side.dbg_name, side.dbg_count, side.dbg_args = top.v, nil, {}
      rec.role, rec.name, rec.part = "part", top.v, "name"
    end
    return rec
  end
  local name = side.dbg_name
  if side.dbg_count == nil then
    local n = top.t.kind == "number" and top.v or nil
    if n == nil or n < 0 then
      side.dbg_name = nil
      rec.role, rec.name, rec.err = "error", name, sfmt("debugger message %s has no argument count", py_repr(name))
      return rec
    end
    if n > SPEC.transports.MAX_DEBUGGER3_ARGS then
      side.dbg_name = nil
      rec.role, rec.name = "error", name
      rec.err = sfmt("debugger message %s claims %d arguments, more than a Godot 3 game can send (%d); the next "
                     .. "PDU starts a new message", py_repr(name), n, SPEC.transports.MAX_DEBUGGER3_ARGS)
      return rec
    end
    side.dbg_count = n
    rec.part = "count"
  else
    side.dbg_args[#side.dbg_args + 1] = raw
    rec.part = sfmt("argument %d of %d", #side.dbg_args, side.dbg_count)
  end
  rec.role, rec.name = "part", name
  if #side.dbg_args >= side.dbg_count then
    rec.role, rec.args, rec.argc = "debugger", side.dbg_args, side.dbg_count
    side.dbg_name, side.dbg_count, side.dbg_args = nil, nil, nil
  end
  return rec
end

-- the frame's own record, to change it (a shared one is copied first)
local function own(key, rec)
  if not rec.shared then return rec end
  local mine = {}
  for k, x in pairs(rec) do mine[k] = x end
  mine.shared, mine.verdict = nil, nil
  frames[key] = mine
  return mine
end

local function settle_pending(conv)
  local pending = conv.pending
  conv.pending = {}
  for _, p in ipairs(pending) do frames[p.key] = finalize(conv, p.side, p.raw, p.debugger) end
end

-- first pass: feed the conversation's guess; once decided, settle every message held back
local function first_pass(conv, side, raw, key, debugger)
  if conv.verdict == nil then
    guess_add(conv.guess, raw)
    conv.pending[#conv.pending + 1] = { side = side, raw = raw, key = key, debugger = debugger }
    if not guess_decided(conv.guess) then
      local rec = { provisional = true, conv = conv, debugger = debugger }
      frames[key] = rec
      return rec
    end
    decide(conv)
    settle_pending(conv)
    local rec = own(key, frames[key])
    rec.show_evidence = true -- the message that decided it
    return rec
  end
  local rec = finalize(conv, side, raw, debugger)
  frames[key] = rec
  return rec
end

-- The Strings of a debugger message's arguments (Arrays of them, a few levels deep): what the game
-- printed, the error text, the names of a scene tree; for the Info column
local function printed(raws, d)
  local out, n = {}, 0
  local function walk(raw, depth)
    if n >= 8 or depth > 3 then return end
    local ok = decode(raw, #raw, d, false)
    if not ok then return end
    local top = top_shape(raw, d)
    if top.t.kind == "string" then n = n + 1; out[n] = top.v; return end
    for _, kid in ipairs(top.kids or {}) do
      if n >= 8 then return end
      if kid.t.kind == "string" then n = n + 1; out[n] = kid.v
      elseif kid.raw then walk(kid.raw, depth + 1) end
    end
  end
  for _, raw in ipairs(raws) do walk(raw, 1) end
  return n > 0 and tconcat(out, " ") or nil
end

-- Show one message (a datagram, a PDU body or a WebSocket message) at tvb[off, off + #raw)
local function show_message(tvb, pinfo, tree, rec, raw, off, framing, key)
  local dname, evidence = rec.dialect, rec.show_evidence and rec.evidence
  local conv = rec.conv
  local provisional = rec.provisional
  if provisional then
    local v = conv.verdict or guess_verdict(conv.guess, clear_verdicts)
    dname = v.dialect
    evidence = v.evidence .. " (provisional: the conversation's dialect is still being guessed)"
    local debugger = rec.debugger
    rec = { role = "variant" }
    if debugger and decode(raw, #raw, DIALECTS[dname], false) then
      -- the debugger's message names read alike in both engine families
      local top = top_shape(raw, DIALECTS[dname])
      if top.kids and #top.kids > 0 and top.kids[1].t.kind == "string" then
        rec.role, rec.name = "debugger", top.kids[1].v
      elseif top.t.kind == "string" and is_message_name(top.v) then
        rec.role, rec.name, rec.part = "part", top.v, "name"
      end
    end
  end
  local d = DIALECTS[dname]
  local len = #raw
  local head = framing and 4 or 0
  local whole = tree == NULL_ITEM and NULL_ITEM or tvb(off - head, len + head) -- (no tree: no TvbRange)
  local root = tree:add(godot, whole)
  if framing and root ~= NULL_ITEM then root:add_le(F.pdu_len, tvb(off - 4, 4)) end -- (no tree: no TvbRange)
  local ditem = root:add(F.dialect, whole, dname)
  if evidence then ditem:add(F.evidence, whole, evidence) end
  if rec.name then
    root:add(F.dbg_message, whole, rec.name)
    if rec.thread then root:add(F.dbg_thread, whole, Int64.new(rec.thread)) end
    if rec.part then root:add(F.dbg_part, whole, rec.part) end
  end
  local info
  if rec.args then
    -- the whole Godot 3 debugger message: the arguments of every PDU, joined in one tvb
    root:add(F.dbg_argc, whole, rec.argc)
    local all = tconcat(rec.args)
    local aitem
    if #all > 0 then
      local atvb = ByteArray.new(all, true):tvb("Godot debugger message")
      aitem = root:add(F.dbg_args, atvb())
      local pos, texts = 0, {}
      for i, a in ipairs(rec.args) do
        local _, _, text = show(atvb, pos, a, d, aitem, INDEX[i - 1])
        texts[#texts + 1] = text
        pos = pos + #a
      end
      info = rec.name .. ": " .. short(printed(rec.args, d) or tconcat(texts, ", "), 100)
    else
      aitem = root:add(F.dbg_args, whole)
      info = rec.name
    end
    aitem:set_text(sfmt("Arguments (%d)", rec.argc))
  else
    local ok, used, text, eoff, emsg = show(tvb, off, raw, d, root, "")
    if not ok and not select(2, frame_of(pinfo)) and not rec.checked and conv and conv.verdict and conv.guess then
      -- a message the conversation's dialect rejects: the Python reader's reconsider()
      local switched = reconsider(conv, raw)
      if switched then
        rec = own(key, rec)
        rec.dialect, rec.evidence, rec.show_evidence = switched.dialect, switched.evidence, true
        d, dname = DIALECTS[switched.dialect], switched.dialect
        root:add(F.dialect, whole, dname):add(F.evidence, whole, switched.evidence)
        ok, used, text, eoff, emsg = show(tvb, off, raw, d, root, "")
      end
    end
    if ok then
      if used < len then
        root:add(F.note, tvb(off + used, len - used), sfmt("%d trailing bytes ignored (as the engine does)", len - used))
      end
      if rec.role == "error" then
        root:add(F.error, whole, rec.err)
        root:add_tvb_expert_info(E.malformed, whole, rec.err)
        info = "Malformed: " .. rec.err
      elseif rec.role == "debugger" then
        -- the data after the name (and thread): its Strings, else its summary
        local top = top_shape(raw, d)
        local raws, strings = {}, {}
        for i, kid in ipairs(top.kids or {}) do
          if i > 1 and kid.raw then raws[#raws + 1] = kid.raw end
          if i > 1 and kid.t.kind == "string" then strings[#strings + 1] = kid.v end
        end
        local what = printed(raws, d)
        if what and #strings > 0 then what = tconcat(strings, " ") .. " " .. what end
        what = what or (#strings > 0 and tconcat(strings, " ")) or nil
        info = what and (rec.name .. ": " .. short(what, 100)) or rec.name
      elseif rec.role == "part" then
        info = rec.name .. " (" .. rec.part .. ")"
      else
        info = short(text, 60)
      end
    else
      local reason = sfmt("offset %d: %s", eoff or 0, emsg or "?")
      root:add(F.error, whole, reason)
      local s = eoff or 0
      if s >= len then s = len > 0 and len - 1 or 0 end
      root:add_tvb_expert_info(E.malformed, len > 0 and tvb(off + s, len - s) or whole, reason)
      info = "Malformed: " .. reason
    end
  end
  if root ~= NULL_ITEM then root:append_text(", " .. dname .. ": " .. info) end
  if provisional then info = info .. " [provisional " .. dname .. "]" end
  return info
end

-- the Info column: the frame's first message replaces what the layers below wrote, the next ones are
-- appended. "Next" = the same frame and pass as the message before, with the column still holding
-- what we wrote then: a new dissection of the frame (a second pass, a click in the GUI) starts from
-- what the lower layers wrote, so every dissection writes the same text.
local info_last = { number = -1, visited = false, text = "" }
local function set_info(pinfo, text)
  local number, visited = frame_of(pinfo)
  local st = info_last
  local cols = pinfo.cols
  -- (the column may hold a fenced prefix, e.g. a TCP segment's earlier PDUs: compare its end)
  if st.number == number and st.visited == visited and ssub(tostring(cols.info), -#st.text) == st.text then
    st.text = st.text .. " | " .. text
    cols.info:append(" | " .. text)
  else
    st.number, st.visited, st.text = number, visited, text
    cols.protocol = "Godot"
    cols.info = text
  end
end

-- the statistics (stats.lua) count every message the dissectors show: stats.lua sets `count`
local STATS_HOOK = {}

-- one message through the conversation machinery
local function message(tvb, pinfo, tree, conv, sender, raw, off, key, framing, debugger)
  tree = tree_of(tree)
  local rec = frames[key]
  if rec == nil then
    rec = first_pass(conv, side_of(conv, sender), raw, key, debugger)
  end
  if rec.provisional and select(2, frame_of(pinfo)) then
    -- shown before the conversation's dialect was known: settle the conversation now
    local c = rec.conv
    if c.verdict == nil then decide(c); settle_pending(c) end
    rec = frames[key]
  end
  set_info(pinfo, show_message(tvb, pinfo, tree, rec, raw, off, framing, key))
  if STATS_HOOK.count and rec.role ~= "part" then -- set while a statistic is asked for
    STATS_HOOK.count(pinfo, { kind = "variant", app_bytes = #raw })
  end
end

----------------------------------------------------------------------------------------------------
-- Transports
----------------------------------------------------------------------------------------------------

local function in_range(ranges, port)
  for _, r in ipairs(ranges) do
    if port >= r[1] and port <= r[2] then return true end
  end
  return false
end

local function parse_range(s)
  local out = {}
  for part in tostring(s or ""):gmatch("[^,%s]+") do
    local a, b = part:match("^(%d+)%-(%d+)$")
    if a then out[#out + 1] = { tonumber(a), tonumber(b) }
    elseif part:match("^%d+$") then out[#out + 1] = { tonumber(part), tonumber(part) } end
  end
  return out
end

local PORTS = { udp = {}, tcp = {}, debugger = {} }

local function known(transport, pinfo)
  local r = PORTS[transport]
  if #r == 0 then return false end
  return in_range(r, pinfo.src_port) or in_range(r, pinfo.dst_port)
end

-- which of godot4/godot3 reads the message to exactly its length (the heuristic), trying `first` first
local PLAUSIBLE = { "godot4", "godot3" }
local function plausible_in(raw, len, first)
  if len < 4 or len % 4 ~= 0 then return nil end
  if first then
    local ok, used = decode(raw, len, DIALECTS[first], false)
    if ok and used == len then return first end
  end
  for _, name in ipairs(PLAUSIBLE) do
    if name ~= first and DIALECTS[name] then
      local ok, used = decode(raw, len, DIALECTS[name], false)
      if ok and used == len then return name end
    end
  end
  return nil
end

-- UDP: one datagram, one Variant
local function dissect_udp(tvb, pinfo, tree)
  local raw = tvb:raw()
  local len = #raw
  if len == 0 then return 0 end
  local conv, sender = conv_of(pinfo, "udp")
  local key, visited = frame_of(pinfo) -- UDP records are keyed by frame number (TCP and WebSocket ones by strings)
  if frames[key] == false then return 0 end -- not a Godot message on the first pass
  if not (conv.confirmed or conv.by_port or known("udp", pinfo)) then
    -- the heuristic's rules (the Python reader): until the conversation is confirmed, a datagram must
    -- read exactly in some dialect, and short datagrams only count once a longer one confirms them;
    -- a confirmed conversation takes every datagram (bad ones are shown malformed)
    if not P.heuristics then return 0 end
    local first = conv.verdict and conv.verdict.dialect
    if first ~= "godot4" and first ~= "godot3" then first = conv.plausible end
    local hint = plausible_in(raw, len, first)
    if not hint then
      if not visited then frames[key] = false end
      return 0
    end
    conv.plausible = hint
    if len >= 8 then
      conv.confirmed = true
    elseif visited then
      return 0 -- short datagrams of a conversation no longer one ever confirmed
    end
  end
  message(tvb, pinfo, tree, conv, sender, raw, 0, key, false, false)
  return len
end

local function looks_http(tvb)
  if tvb:len() < 5 then return false end
  local head = tvb(0, 5):raw():lower()
  return ssub(head, 1, 4) == "get " or head == "http/"
end

-- a conversation's first bytes too few to tell: they begin "GET " or "HTTP/" (a client may send its request's
-- first bytes on their own; the Python reader decides on the stream's first bytes, not on a segment's)
local function may_be_http(tvb)
  local n = tvb:len()
  if n >= 5 then return false end
  local head = tvb(0, n):raw():lower()
  return head == ssub("get ", 1, n) or head == ssub("http/", 1, n)
end

-- TCP: u32 length-prefixed PDUs (StreamPeer.put_var, PacketPeerStream, the remote debugger)
local tcp_pdus
local function dissect_pdu(tvb, pinfo, tree)
  local conv, sender = conv_of(pinfo, "tcp")
  local avail = tvb:len()
  if avail < 4 then
    tree:add(godot, tvb()):add_tvb_expert_info(E.partial, tvb(), "message cut short by the capture")
    return tvb:reported_length_remaining()
  end
  local n = tvb(0, 4):le_uint()
  if n > SPEC.max_pdu then
    local root = tree:add(godot, tvb())
    root:add_le(F.pdu_len, tvb(0, 4))
    root:append_text(sfmt(", length %d is implausible", n))
    root:add_tvb_expert_info(E.skipped, tvb(), sfmt("length %d is implausible: %d bytes skipped", n, avail))
    set_info(pinfo, sfmt("%d bytes skipped", avail))
    return avail
  end
  if avail < n + 4 then
    local root = tree:add(godot, tvb())
    root:add_le(F.pdu_len, tvb(0, 4))
    root:add_tvb_expert_info(E.partial, tvb(), sfmt("%d of %d bytes in this segment", avail - 4, n))
    set_info(pinfo, sfmt("partial message (%d of %d bytes)", avail - 4, n))
    return avail
  end
  local raw = tvb:raw(4, n)
  local key = "t" .. pinfo.number .. ":" .. tvb:offset() .. ":" .. n
  message(tvb, pinfo, tree, conv, sender, raw, 4, key, true, conv.kind == "debugger")
  return n + 4
end

-- Long PDUs. Wireshark 4.0's TCP reassembly walks the list of every segment it holds for a PDU each
-- time it adds one (epan/reassemble.c), so a PDU that arrives in m segments costs it m^2 -- whatever the
-- dissector (DNS over TCP as much as this one). It is asked to hold at most SPEC.lua_desegment_max bytes
-- (at worst that many 1-byte segments) at once: a longer PDU is reassembled by Wireshark in stages of
-- that size, each collected here, and dissected where it completes, so time stays linear in segments.
-- Bytes collected across the capture stay under SPEC.max_held_bytes: a PDU that would go past it is
-- counted, not kept, and reported once. For re-dissection a collected PDU's record is shared by its
-- frames (tcp_starts / tcp_notes[frame] = record, one table entry per frame); only the frame that
-- completes it keeps its bytes (record.data), or why they were not kept (record.why).
-- A stage Wireshark never delivers (a gap in the capture, or a new connection on the same addresses and
-- ports: Wireshark's TCP starts afresh) shows as a plain segment arriving while a stage was asked for:
-- the PDU is given up there (expert info) and the plugin resynchronises on the next plausible PDU.
local PIECES_PER_CHUNK = 256 -- collected segments joined into one string this often (bounds the table)

-- a segment of a collected PDU: kept ones are marked in the Info column only (as Wireshark's TCP marks a
-- segment of a reassembled PDU); one not kept gets an item and expert info
local function collected_tree(tree, pinfo, tvb, big, ends)
  if big.kept then
    set_info(pinfo, sfmt("[part of a %d-byte message from frame %d]", big.n, big.first))
    return
  end
  local root = tree_of(tree):add(godot, tvb())
  root:set_text(sfmt("Godot Variant: part of a %d-byte message not reassembled", big.n))
  root:add(F.part, tvb(), sfmt("%d-byte message from frame %d", big.n, big.first))
  root:add_tvb_expert_info(E.not_reassembled, tvb(), ends and big.why or big.cause)
  set_info(pinfo, ends and sfmt("%d-byte message not reassembled", big.n)
                  or sfmt("[part of a %d-byte message not reassembled]", big.n))
end

-- where a call's notes are kept for re-dissection: the frame, where its tvb is in the frame (a reassembly
-- is at 0) and its length tell apart the calls of one frame
local function call_key(number, tvb, start)
  return sfmt("%d:%d:%d:%d", number, tvb:offset(), tvb:len(), start)
end

-- an item with expert info saying what became of bytes the stream did not deliver as a message
local function skipped_item(tree, tvb, text)
  local root = tree_of(tree):add(godot, tvb)
  root:set_text("Godot Variant: " .. text)
  root:add_tvb_expert_info(E.skipped, tvb, text)
end

-- dissected again (a second pass, a click in Wireshark): the last segment of a PDU that never completed says
-- so, with the reason the first pass found (the end of the connection the tap saw), or none
local function show_never_completed(tree, tvb, big, number)
  if big.last == nil and big.latest == number and not big.shown then
    skipped_item(tree, tvb(0, 0), big.cut or sfmt("%d bytes of a PDU of %d bytes (from frame %d), never completed: "
                                                   .. "no more of it in the capture", big.n - big.need, big.n, big.first))
  end
end

-- a collected PDU that ends unfinished (its stage never came, or the connection ended): its bytes go
local function drop_big(side, why)
  local big = side.big
  side.big, tcp_collecting = nil, tcp_collecting - 1
  if big.kept then
    tcp_held = tcp_held - big.n
    big.parts, big.chunks = nil, nil
  end
  big.cut = sfmt("%d bytes of a PDU of %d bytes (from frame %d), never completed: %s", big.n - big.need, big.n,
                 big.first, why)
  return big.cut
end

local new_lost -- (below) synchronisation is lost: skip to the next plausible PDU
local long_release -- (below) a long resync candidate is let go

-- a collected PDU continues with this tvb: returns the bytes of it used (and true when Wireshark was asked
-- for more)
local function tcp_continue(tvb, pinfo, tree, side, number, visited)
  local len = tvb:len()
  local big, ends -- ends: this call completes the PDU
  if visited then
    big = tcp_notes[number]
    ends = big.last == number and big.last_off == tvb:offset() and big.last_len == len
  else
    big = side.big
    if big.asked and tvb:offset() ~= 0 then
      -- a plain segment, not the stage Wireshark was asked to reassemble: it will not come
      local text = drop_big(side, "Wireshark's TCP delivered no more of it (a gap in the capture, or a new "
                                  .. "connection on the same addresses and ports)")
      end_notes[call_key(number, tvb, -1)] = text -- (re-dissection shows it as show_end does)
      big.shown = true -- (not again on the PDU's last segment)
      skipped_item(tree, tvb(0, 0), text)
      set_info(pinfo, sfmt("%d-byte message cut short", big.n))
      side.lost = new_lost(number, 0)
      return 0
    end
    big.asked = false
    -- Wireshark keeps reassembling (retransmissions, order), a stage of at most lua_desegment_max bytes at a
    -- time, each a reassembly of its own: the plugin takes each stage whole
    local want = big.need < SPEC.lua_desegment_max and big.need or SPEC.lua_desegment_max
    if len < want and pinfo.can_desegment > 0 then
      pinfo.desegment_offset, pinfo.desegment_len = 0, want - len
      big.asked = true
      return len, true
    end
    local take = len < big.need and len or big.need
    big.need, big.segments, big.latest = big.need - take, big.segments + 1, number
    if big.kept then
      local parts = big.parts
      parts[#parts + 1] = tvb:raw(0, take)
      if #parts >= PIECES_PER_CHUNK then big.chunks[#big.chunks + 1] = tconcat(parts); big.parts = {} end
    end
    tcp_notes[number] = big
    if big.need == 0 then
      -- the call that completes it, told apart from other calls in the same frame when Wireshark dissects
      -- again (a reassembled stage before it, the rest of the segment after the PDU's end): where its tvb
      -- is in the frame (a reassembly is at 0) and its length
      side.big, big.last, big.last_take, big.last_off, big.last_len = nil, number, take, tvb:offset(), len
      ends, tcp_collecting = true, tcp_collecting - 1
      if big.kept then
        big.chunks[#big.chunks + 1] = tconcat(big.parts)
        big.data, big.parts, big.chunks = tconcat(big.chunks), nil, nil
        tcp_held = tcp_held - big.n
      else
        big.why = sfmt("a message of %d bytes spread over %d segments was not reassembled (frames %d-%d): %s",
                       big.n, big.segments, big.first, number, big.cause)
      end
    end
  end
  local take = ends and big.last_take or len
  if ends and big.data then
    local rtvb = ByteArray.new(big.data, true):tvb("Reassembled Godot message")
    dissect_pdu(rtvb, pinfo, tree)
  else
    collected_tree(tree, pinfo, take == len and tvb or tvb(0, take):tvb(), big, ends)
    if visited then show_never_completed(tree, tvb, big, number) end
  end
  return take
end

-- Connection ends. Wireshark calls no dissector for a segment without payload, so the plugin sees a FIN,
-- a RST or a new SYN on the same addresses and ports through the TCP tap -- on only while a long PDU is
-- being collected: a tap listener made at load would make tshark build every packet's tree. What the flow
-- held ends there (its bytes are released) and is reported at the next segment the plugin sees on that
-- side (a skipped run ends there too when the tap is on). Taps run in the first pass of Wireshark and of
-- one-pass tshark; the first pass of `tshark -2` runs none (there a stage that never comes still ends the
-- PDU, above, and a new connection on the same addresses and ports is seen by its TCP conversation, below).
local end_tap = nil -- (tap_upto: the last frame the tap looked at)
local REUSED = "a new connection (SYN) reused its addresses and ports"

local function end_side(side, why)
  local text
  if side.big then
    text = { drop_big(side, why) } -- (a table: a second pass shows it on the PDU's last segment instead)
  elseif side.lost then
    local lost = side.lost
    long_release(lost)
    text = sfmt("%d bytes skipped since frame %d: no plausible PDU before %s", lost.skipped + #lost.tail,
                lost.first, why)
  end
  side.lost = nil
  side.ended = text
end

local function tap_packet(pinfo, _, th)
  -- (a tap runs after its frame is dissected, when pinfo.visited is already set: the first pass is told by
  -- frame numbers that grow; a retap starts again at frame 1)
  local number = pinfo.number
  -- (and a frame before the last one the dissector saw in its first pass is a second pass: tshark -2 runs
  -- taps only then, when a connection's SYN would end what the first pass left open at the capture's end)
  if type(th) ~= "table" or number <= tap_upto or number < tcp_upto then return end
  tap_upto = number
  local flags = th.th_flags or 0
  local fin, syn, rst, ack = flags % 2 == 1, flags % 4 >= 2, flags % 8 >= 4, flags % 32 >= 16
  if not (fin or rst or (syn and not ack)) then return end
  local key, sender = conv_key(pinfo, "tcp")
  local conv = convs[key]
  if conv == nil then return end
  local why = rst and "the connection was reset (RST)" or syn and REUSED or "the connection was closed (FIN)"
  for who, side in pairs(conv.sides) do
    if (side.big or side.lost) and (not fin or rst or syn or who == sender) then
      end_side(side, why)
      conv.ended = true
    end
  end
end

local function watch_ends()
  if end_tap ~= nil then return end
  local ok, tap = pcall(Listener.new, "tcp")
  end_tap = ok and tap or false
  if ok then tap.packet = tap_packet end
end

-- the tap costs every TCP packet a call (~13 us): off again once nothing is collected (from a dissector
-- call, never from the tap's own callback, while Wireshark walks its listeners)
local function unwatch_ends()
  if end_tap and tcp_collecting <= 0 then
    end_tap:remove()
    end_tap = nil
  end
end

-- what ended on the conversation since the plugin last saw it (the tap), shown on this call, on either side:
-- a connection that ends with a FIN or RST may carry nothing more on the side that held the PDU
local function show_end(tvb, tree, conv, number, visited)
  local key = call_key(number, tvb, -1)
  local text
  if visited then
    text = end_notes[key]
    if type(text) == "table" then text = nil end -- (shown on the PDU's own last segment)
  else
    for _, s in pairs(conv.sides) do
      if s.ended then
        text, s.ended = s.ended, nil
        end_notes[key] = text
        if type(text) == "table" then text = text[1] end
        skipped_item(tree, tvb(0, 0), text)
      end
    end
    conv.ended, text = nil, nil
  end
  if text then skipped_item(tree, tvb(0, 0), text) end
end

-- A new connection on the same addresses and ports, seen without the tap (the first pass of `tshark -2` runs
-- none; and the tap is off while a skipped run holds only short candidates): Wireshark's TCP starts a new
-- conversation at a SYN that reuses a 4-tuple (packet-tcp.c, TA_PORTS_REUSED), and TCP tries a conversation's
-- own dissector before its port table and its heuristics. So when a side starts to hold something across
-- segments (a skipped run, a collected PDU) the plugin makes itself the dissector of that TCP conversation
-- (pinfo.conversation, once per conversation); a later call that comes through the port table (pinfo.match_uint
-- is then the port it matched, not TCP's own match value) or through the heuristic is in another TCP
-- conversation: what the old connection held ends there, as the tap would end it, and is never completed with
-- the new connection's bytes. A read of pinfo.match_uint per call while something is held; nothing otherwise.
-- conv.watch: true once claimed, false when a port equals TCP's own match value (the two paths look alike:
-- not watched), nil otherwise
local TCP_MATCH = 6 -- pinfo.match_uint while TCP itself runs: the IP protocol number that chose it

-- a side starts to hold something (first pass): claim this call's TCP conversation unless it is claimed (asked
-- each time: while the tap runs, the calls of a new connection are not looked at until it holds something)
local function tcp_watch(pinfo, conv)
  if conv.watch == false then return end
  local ports = conv.ports
  if ports == nil then
    local sport, dport = pinfo.src_port, pinfo.dst_port
    if sport == TCP_MATCH or dport == TCP_MATCH then conv.watch = false; return end
    ports = { sport, dport }
    conv.ports = ports
  end
  local via = pinfo.match_uint
  if via == ports[1] or via == ports[2] then pinfo.conversation = godot end
  conv.watch = true
end

-- first pass, a call on a watched conversation: `fresh` (the heuristic was asked, so TCP's conversation has no
-- dissector) or a call through the port table means another connection
local function tcp_same_connection(pinfo, conv, fresh)
  local held = false
  for _, s in pairs(conv.sides) do
    if s.lost or s.big then held = true; break end
  end
  if not held then conv.watch = nil; return end -- (watched again when something is held next)
  if not fresh then
    local via, ports = pinfo.match_uint, conv.ports
    fresh = via == ports[1] or via == ports[2]
  end
  if not fresh then return end
  for _, s in pairs(conv.sides) do
    if s.lost or s.big then end_side(s, REUSED) end
  end
  conv.ended, conv.watch = true, nil
end

-- Lost synchronisation: after an implausible length prefix (or a long PDU given up) the plugin skips to
-- the next plausible PDU as the Python reader does (pcap/framing.py, LengthPrefixFramer._resync): an offset
-- is a candidate when its length prefix is in range and aligned and its body starts with a type id below
-- the heuristic dialects' and a zero; the earliest candidate whose whole PDU reads to exactly its length
-- wins. Each offset is looked at once; a candidate whose PDU has not all arrived waits (at most
-- MAX_RESYNC_CANDIDATES of them, each at most LUA_RESYNC_MAX bytes, so at most that many bytes are held).
-- One expert item per skipped run (where it starts); the frames of the run show how many bytes so far,
-- the one that resynchronises how many in all.
local RESYNC_MAX, RESYNC_CANDIDATES = TR.LUA_RESYNC_MAX, TR.MAX_RESYNC_CANDIDATES
local CANDIDATE_AT -- a Lua pattern for the six bytes a candidate starts with (its prefix: aligned, < 2^24)
do
  local type_limit = 0
  for _, name in ipairs(TR.HEURISTIC_DIALECTS) do
    if DIALECTS[name] and DIALECTS[name].vmax > type_limit then type_limit = DIALECTS[name].vmax end
  end
  local function class(pred)
    local out = {}
    for b = 0, 255 do
      if pred(b) then out[#out + 1] = schar(b):match("%w") and schar(b) or ("%" .. schar(b)) end
    end
    return "[" .. tconcat(out) .. "]"
  end
  CANDIDATE_AT = class(function(b) return b % TR.BODY_ALIGN == 0 end) .. ".."
                 .. "%z" .. class(function(b) return b < type_limit end) .. "%z"
end

function new_lost(number, skipped)
  -- (no tap for a skipped run alone: it holds at most LUA_RESYNC_MAX bytes, and a new connection on the same
  -- addresses and ports ends it by its TCP conversation (tcp_same_connection); a tap listener costs Wireshark
  -- time on every TCP packet -- on only while a long candidate is collected, below)
  -- base: stream position of tail's first byte; scanned: positions below it were looked at; cands: waiting
  -- candidates { position, end } in position order; skipped: bytes given up before tail
  return { first = number, base = 0, tail = "", scanned = 0, cands = {}, skipped = skipped }
end

-- A candidate longer than LUA_RESYNC_MAX (a long PDU right after the run, as the reader finds it): one at a
-- time is collected by itself, in pieces (its bytes counted in tcp_held, within MAX_HELD_BYTES), and decided
-- when it has all arrived; like the reader's oldest candidate it is given up once MAX_RESYNC_CANDIDATES later
-- candidates wait behind it (a stream where every word claims a long PDU stays linear and holds little).
-- long: { pos, stop (stream positions), n (its bytes), parts, chunks, have, skipped (run bytes before it), later }
function long_release(lost)
  local long = lost.long
  if long == nil then return end
  lost.long, tcp_held, tcp_collecting = nil, tcp_held - long.n, tcp_collecting - 1
end

local function long_add(long, piece)
  local parts = long.parts
  parts[#parts + 1] = piece
  long.have = long.have + #piece
  if #parts >= PIECES_PER_CHUNK then long.chunks[#long.chunks + 1] = tconcat(parts); long.parts = {} end
end

local function long_bytes(long)
  long.chunks[#long.chunks + 1] = tconcat(long.parts)
  local data = tconcat(long.chunks)
  long.parts, long.chunks = {}, { data }
  return ssub(data, 1, long.n)
end

-- the first plausible PDU in tail .. data: its index in that window (1-based), or nil; or nil, nil, the long
-- candidate that completed plausible (its bytes in .data)
local function lost_scan(lost, data, first)
  local window = lost.tail .. data
  local wbase, wlen = lost.base, #lost.tail + #data
  local cands, kept = lost.cands, {}
  local found = nil
  for _, c in ipairs(cands) do -- waiting candidates, earliest first
    local p, stop = c[1] - wbase + 1, c[2] - wbase
    if found == nil and stop <= wlen then
      if plausible_in(ssub(window, p + 4, stop), stop - p - 3, first) then found = p end
    elseif found == nil then
      kept[#kept + 1] = c
    end
  end
  if found then long_release(lost); return found, window end
  cands = kept
  local long = lost.long
  if long then
    long_add(long, data)
    if long.have >= long.n then -- all of it: the earliest waiting candidate that is plausible wins
      local bytes = long_bytes(long)
      long_release(lost)
      if plausible_in(ssub(bytes, 5), long.n - 4, first) then
        long.data = bytes
        return nil, nil, long
      end
      long = nil
    end
  end
  local i = lost.scanned - wbase + 1
  while true do
    local p = sfind(window, CANDIDATE_AT, i)
    if p == nil then break end
    i = p + 1
    local b1, b2, b3 = sbyte(window, p, p + 2)
    local n = b1 + b2 * 256 + b3 * 65536
    if n >= TR.MIN_BODY then
      local stop = p + 3 + n
      if stop <= wlen then
        if plausible_in(ssub(window, p + 4, stop), n, first) then long_release(lost); return p, window end
      elseif n + 4 <= RESYNC_MAX then
        cands[#cands + 1] = { wbase + p - 1, wbase + stop }
        if #cands > RESYNC_CANDIDATES then table.remove(cands, 1) end
        if long then long.later = long.later + 1 end
      elseif long then
        long.later = long.later + 1
      elseif tcp_held + n + 4 <= SPEC.max_held_bytes then -- (else: counted as skipped, not collected)
        long = { pos = wbase + p - 1, stop = wbase + stop, n = n + 4, parts = {}, chunks = {}, have = 0,
                 skipped = lost.skipped + p - 1, later = 0 }
        long_add(long, ssub(window, p))
        lost.long, tcp_held, tcp_collecting = long, tcp_held + long.n, tcp_collecting + 1
        watch_ends()
      end
      if long and long.later + #cands > RESYNC_CANDIDATES then long_release(lost); long = nil end
    end
  end
  local scanned = wbase + wlen - 5 -- the last 5 offsets have fewer than 6 bytes: looked at again
  if scanned > lost.scanned then lost.scanned = scanned end
  lost.cands = cands
  local keep = cands[1] and cands[1][1] or lost.scanned -- stream position of the first byte still needed
  if keep > wbase + wlen then keep = wbase + wlen end
  if keep > wbase then
    lost.skipped = lost.skipped + (keep - wbase)
    lost.tail, lost.base = ssub(window, keep - wbase + 1), keep
  else
    lost.tail = window
  end
  return nil
end

local UNCONFIRMED = "no plausible PDU where this side's stream starts in the capture (joined part-way?): bytes "
                    .. "skipped up to the next plausible PDU"

-- a call while synchronisation is lost, from `start`: returns where PDUs start again in tvb (nil: all skipped)
local function tcp_lost(tvb, pinfo, tree, conv, side, start, number, visited)
  -- (a frame has at most one call that starts in a skipped run, at 0: the plugin asks for no reassembly
  -- while synchronisation is lost; such a call's note is the bytes skipped so far, a number)
  local key = start == 0 and number or call_key(number, tvb, start)
  local len = tvb:len()
  local note
  if visited then
    note = lost_notes[key]
    if note == nil then return nil end
  else
    local lost = side.lost
    local first = conv.verdict and conv.verdict.dialect
    if first ~= "godot4" and first ~= "godot3" then first = conv.plausible end
    local before = #lost.tail
    local data_at = lost.base + before -- stream position of this tvb's byte `start`
    local p, window, long = lost_scan(lost, start == 0 and tvb:raw() or tvb:raw(start), first)
    if long then -- a long candidate completed plausible: its bytes were collected, it ends in this tvb
      note = { first = lost.first, skipped = long.skipped, pdu = long.data, resume = start + long.stop - data_at }
      side.lost = nil
    elseif p then -- (p may be in the held bytes, before this tvb)
      local stop = p + 3 + (sbyte(window, p) + sbyte(window, p + 1) * 256 + sbyte(window, p + 2) * 65536)
      note = { first = lost.first, skipped = lost.skipped + p - 1 }
      if p > before then
        note.resume = start + p - 1 - before
      else
        note.pdu, note.resume = ssub(window, p, stop), start + stop - before
      end
      side.lost = nil
    end
    if side.lost == nil then
      side.synced = true
      if lost.unconfirmed and not lost.told and note.skipped > 0 then note.expert = UNCONFIRMED end
    elseif lost.unconfirmed and lost.long and lost.long.skipped == 0 then
      -- a long first PDU where the side's stream starts, being collected: shown as a collected PDU's segments
      note = { part = lost.long.n, from = lost.first }
    else
      note = lost.skipped + #lost.tail
      if lost.unconfirmed and not lost.told and lost.skipped > 0 and (lost.long == nil or lost.long.skipped > 0) then
        -- a side whose first bytes claimed a long PDU: nothing at its start is one (the item where that is
        -- known, once; an implausible prefix has its own where the run begins)
        lost.told = true
        note = { so_far = note, expert = UNCONFIRMED }
      end
    end
    lost_notes[key] = note
  end
  if type(note) == "table" and note.part then
    set_info(pinfo, sfmt("[part of a %d-byte message from frame %d]", note.part, note.from))
    return nil
  end
  if type(note) == "table" and note.so_far then
    skipped_item(tree, tvb(start, len - start), note.expert)
    note = note.so_far
  end
  if type(note) == "number" then
    local root = tree_of(tree):add(godot, tvb(start, len - start))
    root:set_text(sfmt("Godot Variant: %d bytes skipped so far (no plausible PDU yet)", note))
    set_info(pinfo, sfmt("[%d bytes skipped]", note))
    return nil
  end
  if note.skipped > 0 then -- (none: a PDU right where the run began)
    local upto = note.pdu and start or note.resume
    local root = tree_of(tree):add(godot, tvb(start, upto - start))
    root:set_text(sfmt("Godot Variant: %d bytes skipped since frame %d; resynchronised on the next plausible PDU",
                       note.skipped, note.first))
    set_info(pinfo, sfmt("%d bytes skipped", note.skipped))
    if note.expert then root:add_tvb_expert_info(E.skipped, tvb(start, upto - start), note.expert) end
  end
  if note.pdu then
    dissect_pdu(ByteArray.new(note.pdu, true):tvb("Reassembled Godot message"), pinfo, tree)
  end
  return note.resume
end

-- a PDU starting at `off` does not end in this tvb and is too long to hand to Wireshark's reassembly
local function tcp_collect(tvb, pinfo, tree, side, off, n, number, visited)
  local big
  if visited then
    big = tcp_starts[number]
    if big == nil then return end
  else
    local have = tvb:len() - off
    big = { n = n + 4, need = n + 4 - have, segments = 1, first = number, latest = number, kept = true, parts = {},
            chunks = {} }
    if tcp_held + big.n > SPEC.max_held_bytes then
      big.kept = false
      big.cause = sfmt("messages being collected hold %d bytes, the limit is %d (MAX_HELD_BYTES)", tcp_held,
                       SPEC.max_held_bytes)
    else
      tcp_held = tcp_held + big.n
      big.parts[1] = tvb:raw(off, have)
    end
    side.big, tcp_collecting = big, tcp_collecting + 1
    tcp_starts[number] = big
    watch_ends()
  end
  collected_tree(tree, pinfo, off == 0 and tvb or tvb(off):tvb(), big, false)
  if visited then show_never_completed(tree, tvb, big, number) end
end

-- u32 length-prefixed PDUs of one TCP segment (or of a reassembly Wireshark was asked for)
function tcp_pdus(tvb, pinfo, tree, conv)
  local number, visited = frame_of(pinfo)
  if not visited then
    -- (not while the tap runs: it saw the frame dissected before this one, so it sees a new SYN itself)
    if conv.watch and not (end_tap and tap_upto >= tcp_upto) then tcp_same_connection(pinfo, conv, false) end
    if number > tcp_upto then tcp_upto = number end
  end
  local side = side_of(conv, select(2, conv_of(pinfo, "tcp")))
  local len = tvb:len()
  local off = 0
  if conv.ended or visited then show_end(tvb, tree, conv, number, visited) end
  if end_tap and not visited then unwatch_ends() end
  local note = visited and tcp_notes[number]
  if note and note.last == number and tvb:offset() > note.last_off then
    note = nil -- the rest of the segment after the PDU this frame completed: new PDUs
  end
  if (side.big and not visited) or note then
    local asked
    off, asked = tcp_continue(tvb, pinfo, tree, side, number, visited)
    if asked then return end
  end
  if visited and lost_notes[off == 0 and number or call_key(number, tvb, off)] or not visited and side.lost then
    off = tcp_lost(tvb, pinfo, tree, conv, side, off, number, visited)
    if off == nil then return end
  end
  local can = pinfo.can_desegment > 0 -- 0: TCP reassembly is off (or this is no TCP payload)
  while off < len do
    local avail = len - off
    if avail < 4 and can then -- the prefix continues in the next segment (as tcp_dissect_pdus asks)
      pinfo.desegment_offset, pinfo.desegment_len = off, DESEGMENT_ONE_MORE_SEGMENT
      return
    end
    if avail < 4 or not can then -- no reassembly: each PDU as far as this segment has it
      dissect_pdu(tvb(off):tvb(), pinfo, tree)
      local n = avail >= 4 and tvb(off, 4):le_uint() or 0
      if avail < 4 or n > SPEC.max_pdu or avail < n + 4 then return end
      off = off + n + 4
      goto continue
    end
    local n = tvb(off, 4):le_uint()
    if n > SPEC.max_pdu then -- synchronisation lost: one expert item, then on to the next plausible PDU
      local text = sfmt("length %d is implausible (more than %d): bytes skipped up to the next plausible PDU", n,
                        SPEC.max_pdu)
      local root = tree_of(tree):add(godot, tvb(off, 4))
      root:set_text("Godot Variant: " .. text)
      root:add_le(F.pdu_len, tvb(off, 4))
      root:add_tvb_expert_info(E.skipped, tvb(off, 4), text)
      if not visited then -- (the prefix is skipped too)
        side.lost = new_lost(number, 4)
        tcp_watch(pinfo, conv)
      end
      off = tcp_lost(tvb, pinfo, tree, conv, side, off + 4, number, visited)
      if off == nil then return end
      goto continue
    end
    if avail >= n + 4 then
      dissect_pdu(tvb(off, n + 4):tvb(), pinfo, tree)
      off = off + n + 4
    elseif n + 4 - avail <= SPEC.lua_desegment_max then
      pinfo.desegment_offset, pinfo.desegment_len = off, n + 4 - avail
      side.synced = true
      return
    elseif not side.synced and not visited or visited and lost_notes[off == 0 and number or call_key(number, tvb, off)] then
      -- the first bytes of a side claim a long PDU: a stream the capture joined part-way (the reader, which
      -- sees no SYN before them, resynchronises from its first byte; the plugin cannot see the SYN) or a long
      -- first message. Resynchronise from here: a plausible long PDU is collected and decoded as a candidate
      if not visited then
        side.lost = new_lost(number, 0)
        side.lost.unconfirmed = true
        tcp_watch(pinfo, conv)
      end
      off = tcp_lost(tvb, pinfo, tree, conv, side, off, number, visited)
      if off == nil then return end
      goto continue
    else
      if not visited then tcp_watch(pinfo, conv) end
      tcp_collect(tvb, pinfo, tree, side, off, n, number, visited)
      return
    end
    side.synced = true
    ::continue::
  end
end

local http = nil

local function dissect_tcp(tvb, pinfo, tree)
  local conv = conv_of(pinfo, "tcp")
  if conv.kind == nil then
    if pinfo.can_desegment > 0 and may_be_http(tvb) then -- decided on the first bytes with the next segment's
      pinfo.desegment_offset, pinfo.desegment_len = 0, DESEGMENT_ONE_MORE_SEGMENT
      return
    end
    if looks_http(tvb) then
      conv.kind = "http"
    elseif known("debugger", pinfo) then
      conv.kind = "debugger"
    else
      conv.kind = "stream"
    end
  end
  if conv.kind == "http" then
    http = http or Dissector.get("http")
    -- a Dissector:call that throws (a malformed HTTP or WebSocket stream) would be a Lua error: say it instead
    local ok, used = pcall(http.call, http, tvb, pinfo, tree)
    if ok then return used end
    tree_of(tree):add(godot, tvb()):add_tvb_expert_info(E.skipped, tvb(),
      sfmt("%d bytes of an HTTP/WebSocket stream Wireshark's http dissector rejected: %s", tvb:len(), tostring(used)))
    return tvb:len()
  end
  if tvb:len() < tvb:reported_len() then
    -- the capture's snap length cut this segment: its stream cannot be followed
    tree:add(godot, tvb()):add_tvb_expert_info(E.partial, tvb(), sfmt("segment cut short by the capture: %d of %d bytes",
                                                                     tvb:len(), tvb:reported_len()))
    return tvb:reported_len()
  end
  tcp_pdus(tvb, pinfo, tree, conv)
  return tvb:len()
end

function godot.dissector(tvb, pinfo, tree)
  enter(tree)
  if pinfo.port_type == 3 then
    local conv = conv_of(pinfo, "udp")
    if not conv.heuristic and not select(2, frame_of(pinfo)) and not known("udp", pinfo) then
      conv.by_port = true -- Decode As: every datagram is a Godot message
    end
    return dissect_udp(tvb, pinfo, tree)
  end
  return dissect_tcp(tvb, pinfo, tree)
end

local function heur_udp(tvb, pinfo, tree)
  enter(tree)
  if not P.heuristics then return false end
  local len = tvb:len()
  if len < 4 or len % 4 ~= 0 then return false end
  if conv_of(pinfo, "udp", true) == nil then
    -- a flow with no conversation kept: none is made for a datagram no dialect reads (a flood of other
    -- UDP flows kept one each, ~2 KB with its dialect guess); the frame's "not Godot" is kept, as
    -- dissect_udp keeps it, so that a later pass answers the same
    local n, visited = frame_of(pinfo)
    if frames[n] == false then return false end
    if not plausible_in(tvb:raw(), len, nil) then
      if not visited then frames[n] = false end
      return false
    end
  end
  local conv = conv_of(pinfo, "udp")
  conv.heuristic = true
  if dissect_udp(tvb, pinfo, tree) == 0 then return false end
  pinfo.conversation = godot
  return true
end

local function heur_tcp(tvb, pinfo, tree)
  enter(tree)
  if not P.heuristics then return false end
  local avail = tvb:len()
  if avail < 4 or looks_http(tvb) then return false end
  local n = tvb(0, 4):le_uint()
  if n < TR.MIN_BODY or n > SPEC.max_pdu or n % TR.BODY_ALIGN ~= 0 then return false end
  if avail >= n + 4 then
    -- the Python reader's rule: the first PDU of the flow reads to exactly its length
    if not plausible_in(tvb:raw(4, n), n, nil) then return false end
  else
    -- the first PDU continues in later segments (Godot 3 sends the length prefix on its own):
    -- its header must at least name a type; ask TCP for the rest and decide on the whole PDU
    if avail >= 5 then
      local id, any = tvb(4, 1):uint(), false
      for _, d in ipairs(DIALECT_LIST) do if id < d.vmax then any = true end end
      if not any then return false end
    end
    if avail >= 6 and tvb(5, 1):uint() ~= 0 then return false end
    -- a guess on a length prefix alone: Wireshark's reassembly costs time per segment it holds, so
    -- it is asked for a small PDU only (a trickle of 1-byte segments after a huge claim stays linear);
    -- a flow with a bigger first PDU is recognised at a later PDU that arrives whole
    if n > SPEC.max_guessed_pdu then return false end
    pinfo.desegment_offset = 0
    pinfo.desegment_len = n + 4 - avail
    return true
  end
  local conv = conv_of(pinfo, "tcp")
  conv.kind = conv.kind or "stream"
  pinfo.conversation = godot
  if conv.watch and not select(2, frame_of(pinfo)) then tcp_same_connection(pinfo, conv, true) end
  dissect_tcp(tvb, pinfo, tree)
  return true
end

-- WebSocket: one binary message, one Variant (text messages are left to the websocket dissector)
-- A WebSocket text message (opcode 1) is left to the websocket dissector. Its heuristic list gets
-- text and binary messages alike and Lua cannot see the opcode without a Field extractor, which
-- would make tshark build a tree for every packet (and cost the plugin most of its speed without
-- -V); so text is told by its bytes: printable UTF-8 with no control characters, which no Variant
-- is (a Variant's header has zero flag bytes) and no multiplayer packet is (ids, commands).
local function looks_like_text(raw)
  if #raw == 0 or sfind(raw, "[%z\1-\8\11\12\14-\31\127]") then return false end
  return valid_strict(raw)
end

local function heur_ws(tvb, pinfo, tree)
  enter(tree)
  if not P.heuristics then return false end
  local len = tvb:len()
  local raw = tvb:raw()
  if looks_like_text(raw) then return false end
  local number, visited = frame_of(pinfo)
  local key = "w" .. number .. ":" .. len .. ":" .. ssub(raw, 1, 16) .. ssub(raw, -16)
  if frames[key] == false then return false end -- not a Godot message on the first pass
  local conv, sender = conv_of(pinfo, "ws", true)
  if conv == nil or not conv.confirmed then
    -- (a message before the one that confirms the conversation stays the WebSocket dissector's in every
    -- pass, as in the first; no conversation is kept for a message no dialect reads)
    if not plausible_in(raw, len, nil) then
      if not visited then frames[key] = false end
      return false
    end
    conv, sender = conv_of(pinfo, "ws")
    conv.confirmed = true
  end
  message(tvb, pinfo, tree, conv, sender, raw, 0, key, false, false)
  return true
end

----------------------------------------------------------------------------------------------------
-- Registration
----------------------------------------------------------------------------------------------------

local registered = { udp = "", tcp = "", debugger = "" }

-- the port preferences into udp.port/tcp.port (only our own entries move: Decode As stays)
local function register_ports()
  local tables = { udp = DissectorTable.get("udp.port"), tcp = DissectorTable.get("tcp.port") }
  tables.debugger = tables.tcp
  for name, t in pairs(tables) do
    if registered[name] ~= "" then t:remove(registered[name], godot) end
  end
  for name, t in pairs(tables) do
    local want = tostring(godot.prefs[name == "debugger" and "debugger_ports" or (name .. "_ports")] or "")
    if want ~= "" then t:add(want, godot) end
    registered[name] = want
    PORTS[name] = parse_range(want)
  end
end

function godot.prefs_changed()
  read_prefs()
  register_ports()
end

function godot.init()
  read_prefs()
  reset_state()
  info_last = { number = -1, visited = false, text = "" }
end

read_prefs()
register_ports()
DissectorTable.get("udp.port"):add_for_decode_as(godot)
DissectorTable.get("tcp.port"):add_for_decode_as(godot)
godot:register_heuristic("udp", heur_udp)
godot:register_heuristic("tcp", heur_tcp)
godot:register_heuristic("ws", heur_ws)
