-- ENet datagram decompressors that Wireshark's Lua 5.2 can run: pure arithmetic ports of
-- godot_dissect/enet/rangecoder.py (ENet's range coder) and godot_dissect/enet/fastlz.py (FastLZ),
-- with their constants from MP_SPEC.codecs. zlib and zstd would need a C library Wireshark does not
-- give Lua: datagrams of those hosts stay shown as compressed.
-- MP.decompress(name, data, limit) -> bytes, or nil, offset, reason (offset into `data`).
-- @MP_SPEC@
local RC = MP_SPEC.codecs.range_coder
local TOP, BOTTOM, M32, M16 = RC.TOP, RC.BOTTOM, 4294967296, 65536
local SYM_DELTA, SYM_MIN, ESC_MIN = RC.CONTEXT_SYMBOL_DELTA, RC.CONTEXT_SYMBOL_MINIMUM, RC.CONTEXT_ESCAPE_MINIMUM
local SUB_ORDER, SUB_SYM_DELTA, SUB_ESC_DELTA = RC.SUBCONTEXT_ORDER, RC.SUBCONTEXT_SYMBOL_DELTA, RC.SUBCONTEXT_ESCAPE_DELTA
local CAPACITY, MAX_NORMALISE = RC.SYMBOL_CAPACITY, RC.MAX_NORMALISE
local bxor = bit32.bxor
local unpack_bytes = table.unpack
local floor_ = math.floor

local CFAIL = {}
local cerr = {}
local function cfail(off, reason) cerr.off, cerr.reason = off, reason; error(CFAIL, 0) end

-- the symbol table: one array per ENetSymbol field, 0-based symbol numbers
local function new_model()
  return { value = {}, count = {}, under = {}, left = {}, right = {}, symbols = {}, escapes = {}, total = {},
           parent = {}, next = 0 }
end

local function create(m, value, count)
  local i = m.next
  if i >= CAPACITY then cfail(0, "symbol table overflow") end
  m.next = i + 1
  m.value[i], m.count[i], m.under[i] = value % 256, count % 256, count % M16
  m.left[i], m.right[i], m.symbols[i], m.escapes[i], m.total[i], m.parent[i] = 0, 0, 0, 0, 0, 0
  return i
end

local function create_context(m, escapes, minimum)
  local i = create(m, 0, 0)
  m.escapes[i] = escapes
  m.total[i] = (escapes + 256 * minimum) % M16
  m.symbols[i] = 0
  return i
end

-- enet_symbol_rescale, iterative (no recursion limit)
local function rescale_tree(m, start)
  local count, under, left, right = m.count, m.under, m.left, m.right
  local stack, sp = {}, 0
  local node, total = start, 0
  while true do
    count[node] = count[node] - floor_(count[node] / 2)
    under[node] = count[node]
    if left[node] ~= 0 then
      sp = sp + 1; stack[sp] = { node, total }
      node, total = node + left[node], 0
    else
      while true do
        total = (total + under[node]) % M16
        if right[node] ~= 0 then node = node + right[node]; break end
        if sp == 0 then return total end
        local up = stack[sp]; stack[sp] = nil; sp = sp - 1
        under[up[1]] = (under[up[1]] + total) % M16
        node, total = up[1], up[2]
      end
    end
  end
end

local function rescale(m, ctx, minimum)
  m.total[ctx] = m.symbols[ctx] ~= 0 and rescale_tree(m, ctx + m.symbols[ctx]) or 0
  m.escapes[ctx] = m.escapes[ctx] - floor_(m.escapes[ctx] / 2)
  m.total[ctx] = (m.total[ctx] + m.escapes[ctx] + 256 * minimum) % M16
end

-- ENET_CONTEXT_ENCODE: find or add value; symbol, under, count
local function encode_symbol(m, ctx, value, update, minimum)
  local under_, count_ = value * minimum, minimum
  if m.symbols[ctx] == 0 then
    local s = create(m, value, update)
    m.symbols[ctx] = s - ctx
    return s, under_ % M16, count_
  end
  local node = ctx + m.symbols[ctx]
  while true do
    local nv = m.value[node]
    if value < nv then
      m.under[node] = (m.under[node] + update) % M16
      if m.left[node] ~= 0 then node = node + m.left[node]
      else
        local s = create(m, value, update)
        m.left[node] = s - node
        return s, under_ % M16, count_ % M16
      end
    elseif value > nv then
      under_ = under_ + m.under[node]
      if m.right[node] ~= 0 then node = node + m.right[node]
      else
        local s = create(m, value, update)
        m.right[node] = s - node
        return s, under_ % M16, count_ % M16
      end
    else
      count_ = count_ + m.count[node]
      under_ = under_ + m.under[node] - m.count[node]
      m.under[node] = (m.under[node] + update) % M16
      m.count[node] = (m.count[node] + update) % 256
      return node, under_ % M16, count_ % M16
    end
  end
end

-- ENET_CONTEXT_TRY_DECODE (minimum 0): symbol, value, under, count
local function try_decode(m, ctx, code, pos)
  local under_ = 0
  if m.symbols[ctx] == 0 then cfail(pos, "code in an empty context") end
  local node = ctx + m.symbols[ctx]
  while true do
    local after = (under_ + m.under[node]) % M16
    local before = m.count[node]
    if code >= after then
      under_ = (under_ + m.under[node]) % M16
      if m.right[node] == 0 then cfail(pos, "code past the last symbol of a context") end
      node = node + m.right[node]
    elseif code < after - before then
      m.under[node] = (m.under[node] + SUB_SYM_DELTA) % M16
      if m.left[node] == 0 then cfail(pos, "code before the first symbol of a context") end
      node = node + m.left[node]
    else
      m.under[node] = (m.under[node] + SUB_SYM_DELTA) % M16
      local count = m.count[node]
      m.count[node] = (m.count[node] + SUB_SYM_DELTA) % 256
      return node, m.value[node], (after - before) % M16, count
    end
  end
end

-- ENET_CONTEXT_ROOT_DECODE (minimum 1): finds or creates the symbol
local function root_decode(m, ctx, code)
  local minimum, update = SYM_MIN, SYM_DELTA
  local under_ = 0
  if m.symbols[ctx] == 0 then
    local value = floor_(code / minimum) % 256
    under_ = code - code % minimum
    local s = create(m, value, update)
    m.symbols[ctx] = s - ctx
    return s, value, under_ % M16, minimum
  end
  local node = ctx + m.symbols[ctx]
  while true do
    local after = (under_ + m.under[node] + (m.value[node] + 1) * minimum) % M16
    local before = (m.count[node] + minimum) % M16
    if code >= after then
      under_ = (under_ + m.under[node]) % M16
      if m.right[node] ~= 0 then node = node + m.right[node]
      else
        local value = (m.value[node] + 1 + floor_((code - after) / minimum)) % 256
        under_ = code - (code - after) % minimum
        local s = create(m, value, update)
        m.right[node] = s - node
        return s, value, under_ % M16, minimum
      end
    elseif code < after - before then
      m.under[node] = (m.under[node] + update) % M16
      if m.left[node] ~= 0 then node = node + m.left[node]
      else
        local value = (m.value[node] - 1 - floor_((after - before - code - 1) / minimum)) % 256
        under_ = code - (after - before - code - 1) % minimum
        local s = create(m, value, update)
        m.left[node] = s - node
        return s, value, under_ % M16, minimum
      end
    else
      local count = (minimum + m.count[node]) % M16
      m.under[node] = (m.under[node] + update) % M16
      m.count[node] = (m.count[node] + update) % 256
      return node, m.value[node], (after - before) % M16, count
    end
  end
end

-- enet_range_coder_decompress
local function range_decompress(data, limit)
  if #data == 0 then cfail(0, "empty input") end
  local m = new_model()
  local out, n = {}, 0
  local pos, stop = 0, #data
  local low, code_reg, rng = 0, 0, M32 - 1
  for _, shift in ipairs({ 24, 16, 8, 0 }) do
    if pos < stop then code_reg = code_reg + sbyte(data, pos + 1) * 2 ^ shift; pos = pos + 1 end
  end
  local root = create_context(m, ESC_MIN, SYM_MIN)
  local predicted, order = 0, 0

  local function read(total)
    rng = floor_(rng / total)
    if rng == 0 then cfail(pos, "coder range collapsed to 0 (ENet would divide by zero)") end
    return floor_(((code_reg - low) % M32) / rng) % M16
  end
  local function decode(under, count)
    low = (low + under * rng) % M32
    rng = (rng * count) % M32
    for _ = 1, MAX_NORMALISE do
      if rng == 0 then break end
      if bxor(low, (low + rng) % M32) >= TOP then
        if rng >= BOTTOM then return end
        rng = (-low) % BOTTOM
      end
      code_reg = (code_reg * 256) % M32
      if pos < stop then code_reg = code_reg + sbyte(data, pos + 1); pos = pos + 1 end
      rng = (rng * 256) % M32
      low = (low * 256) % M32
    end
    cfail(pos, "coder range degenerate (ENet would loop forever)")
  end

  while true do
    local value, bottom = 0, 0
    local parent_ref = -1 -- still the local `predicted`
    local sub = predicted
    local found = false
    while sub ~= root do
      local esc = m.escapes[sub]
      if esc <= 0 or esc >= m.total[sub] then
        sub = m.parent[sub]
      else
        local code = read(m.total[sub])
        if code < esc then
          decode(0, esc)
          sub = m.parent[sub]
        else
          code = code - esc
          local symbol, v, under, count = try_decode(m, sub, code, pos)
          value, bottom = v, symbol
          decode((esc + under) % M16, count)
          m.total[sub] = (m.total[sub] + SUB_SYM_DELTA) % M16
          if count > 0xFF - 2 * SUB_SYM_DELTA or m.total[sub] > BOTTOM - 0x100 then rescale(m, sub, 0) end
          found = true
          break
        end
      end
    end
    if not found then
      local code = read(m.total[root])
      local esc = m.escapes[root]
      if code < esc then
        decode(0, esc)
        break -- end of stream
      end
      code = code - esc
      local symbol, v, under, count = root_decode(m, root, code)
      value, bottom = v, symbol
      decode((esc + under) % M16, count)
      m.total[root] = (m.total[root] + SYM_DELTA) % M16
      if count > 0xFF - 2 * SYM_DELTA + SYM_MIN or m.total[root] > BOTTOM - 0x100 then rescale(m, root, SYM_MIN) end
    end
    -- patchContexts: teach the skipped lower-order contexts the symbol
    local patch = predicted
    while patch ~= sub do
      local s, _, cnt = encode_symbol(m, patch, value, SUB_SYM_DELTA, 0)
      if parent_ref == -1 then predicted = s else m.parent[parent_ref] = s end
      parent_ref = s
      if cnt <= 0 then
        m.escapes[patch] = (m.escapes[patch] + SUB_ESC_DELTA) % M16
        m.total[patch] = (m.total[patch] + SUB_ESC_DELTA) % M16
      end
      m.total[patch] = (m.total[patch] + SUB_SYM_DELTA) % M16
      if cnt > 0xFF - 2 * SUB_SYM_DELTA or m.total[patch] > BOTTOM - 0x100 then rescale(m, patch, 0) end
      patch = m.parent[patch]
    end
    if parent_ref == -1 then predicted = bottom else m.parent[parent_ref] = bottom end
    if n >= limit then cfail(pos, sfmt("decompressed data exceeds %d bytes", limit)) end
    n = n + 1
    out[n] = value
    if order >= SUB_ORDER then predicted = m.parent[predicted] else order = order + 1 end
    if m.next >= CAPACITY - SUB_ORDER then -- ENET_RANGE_CODER_FREE_SYMBOLS
      m.next = 0
      root = create_context(m, ESC_MIN, SYM_MIN)
      predicted, order = 0, 0
    end
  end
  local chunks = {}
  for i = 1, n, 4096 do chunks[#chunks + 1] = schar(unpack_bytes(out, i, math.min(i + 4095, n))) end
  return tconcat(chunks)
end

-- fastlz_decompress(input, length, output, maxout = limit); level in the top 3 bits of byte 0
local FL = MP_SPEC.codecs.fastlz
local function fastlz_decompress(data, limit)
  local stop = #data
  if stop == 0 then cfail(0, "empty input") end
  local b = function(i) return sbyte(data, i + 1) end
  local level = floor_(b(0) / 32) + 1
  if level ~= 1 and level ~= 2 then cfail(0, sfmt("unknown FastLZ level %d", level)) end
  local out, n = {}, 0
  local ip = 1
  local ctrl = b(0) % 32
  while true do
    if ctrl >= 32 then
      local length = floor_(ctrl / 32) - 1
      local ofs = (ctrl % 32) * 256
      local ref = n - ofs - 1
      if level == 1 then
        if length == 6 then
          if ip > stop - 2 then cfail(ip, "match length runs past the input") end
          length = length + b(ip); ip = ip + 1
        end
        if ip >= stop then cfail(ip, "match distance runs past the input") end
        ref = ref - b(ip); ip = ip + 1
      else
        if length == 6 then
          repeat
            if ip > stop - 2 then cfail(ip, "match length runs past the input") end
            local code = b(ip); ip = ip + 1
            length = length + code
          until code ~= 255
        end
        if ip >= stop then cfail(ip, "match distance runs past the input") end
        local code = b(ip); ip = ip + 1
        ref = ref - code
        if code == 255 and ofs == 31 * 256 then -- 16-bit far distance
          if not (ip < stop - 2) then cfail(ip, "far distance runs past the input") end
          ofs = b(ip) * 256 + b(ip + 1)
          ip = ip + 2
          ref = n - ofs - FL.MAX_L2_DISTANCE - 1
        end
      end
      length = length + 3
      if n + length > limit then cfail(ip, sfmt("output exceeds %d bytes", limit)) end
      if ref < 0 then cfail(ip, sfmt("match refers %d bytes before the start of the output", -ref)) end
      for i = 0, length - 1 do n = n + 1; out[n] = out[ref + i + 1] end -- may overlap what it writes
    else
      ctrl = ctrl + 1
      if n + ctrl > limit then cfail(ip, sfmt("output exceeds %d bytes", limit)) end
      if ip + ctrl > stop then cfail(ip, sfmt("literal run of %d bytes runs past the input", ctrl)) end
      for i = 0, ctrl - 1 do n = n + 1; out[n] = b(ip + i) end
      ip = ip + ctrl
    end
    if (level == 1 and ip > stop - 2) or (level == 2 and ip >= stop) then break end
    ctrl = b(ip); ip = ip + 1
  end
  local chunks = {}
  for i = 1, n, 4096 do chunks[#chunks + 1] = schar(unpack_bytes(out, i, math.min(i + 4095, n))) end
  return tconcat(chunks)
end

local CODECS = { range_coder = range_decompress, fastlz = fastlz_decompress }

MP.decompress = function(name, data, limit)
  local fn = CODECS[name]
  if fn == nil then return nil, 0, name .. " cannot be decoded in Wireshark's Lua (no zlib/zstd library)" end
  local ok, out = pcall(fn, data, limit)
  if not ok then
    if out ~= CFAIL then error(out, 0) end
    return nil, cerr.off, cerr.reason
  end
  if out == "" then return nil, 0, "decodes to nothing (ENet drops the datagram)" end
  return out
end
MP.codecs = CODECS
