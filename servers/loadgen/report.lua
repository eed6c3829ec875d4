-- loadlab's wrk report: done() writes one JSON document with the summary,
-- errors by kind and the latency percentile spectrum on a dense grid
-- (0.1-percent steps to 99, then finer steps through 99.999).
-- Debian's wrk 4.1.0 does not expose its per-microsecond histogram to Lua
-- (latency[i] gives back the key), so the dense spectrum stands in for it:
-- each percentile() call scans only the min..max range, so a thousand calls
-- take milliseconds. Loaded by every wrk script the harness uses (wrk takes
-- one -s).

local report_path = os.getenv("WRK_REPORT") or "/out/wrk.json"

local function spectrum_grid()
  local grid = {}
  for tenth = 1, 990 do grid[#grid + 1] = tenth / 10 end              -- 0.1 .. 99.0
  for step = 1, 90 do grid[#grid + 1] = 99 + step / 100 end           -- 99.01 .. 99.90
  for step = 1, 90 do grid[#grid + 1] = 99.9 + step / 1000 end        -- 99.901 .. 99.990
  for step = 1, 9 do grid[#grid + 1] = 99.99 + step / 1000 end        -- 99.991 .. 99.999
  -- not 100: wrk answers 0 there; latency.max is the maximum
  return grid
end

local function number(value)
  if value ~= value or value == math.huge or value == -math.huge then
    return "null"
  end
  if value == math.floor(value) and math.abs(value) < 2^53 then
    return string.format("%d", value)
  end
  return string.format("%.17g", value)
end

function done(summary, latency, requests)
  local parts = {}
  local function add(text) parts[#parts + 1] = text end
  add('{"format":"loadlab-wrk-report/1"')
  add(',"duration_us":' .. number(summary.duration))
  add(',"requests":' .. number(summary.requests))
  add(',"bytes":' .. number(summary.bytes))
  local errors = summary.errors
  add(',"errors":{"connect":' .. number(errors.connect) .. ',"read":' .. number(errors.read)
      .. ',"write":' .. number(errors.write) .. ',"status":' .. number(errors.status)
      .. ',"timeout":' .. number(errors.timeout) .. '}')
  add(',"latency_us":{"min":' .. number(latency.min) .. ',"max":' .. number(latency.max)
      .. ',"mean":' .. number(latency.mean) .. ',"stdev":' .. number(latency.stdev) .. '}')
  -- [percentile, latency_us] pairs; percentiles as %.3f so keys are exact.
  add(',"spectrum_us":[')
  for index, p in ipairs(spectrum_grid()) do
    if index > 1 then add(',') end
    add('[' .. string.format("%.3f", p) .. ',' .. number(latency:percentile(p)) .. ']')
  end
  add(']}')
  local temporary = report_path .. ".tmp"
  local file = assert(io.open(temporary, "w"))
  file:write(table.concat(parts))
  file:close()
  assert(os.rename(temporary, report_path))
end
