-- Pipelined requests: each connection sends PIPELINE_DEPTH requests back to
-- back before reading, so one loadgen core can drive servers faster than it
-- could one request at a time (docs/architecture.md, "The loadgen's ceiling").
dofile("/opt/loadlab/report.lua")

local depth = tonumber(os.getenv("PIPELINE_DEPTH") or "16")
local batch

function init(args)
  local one = wrk.format(nil, wrk.path)
  batch = string.rep(one, depth)
end

function request()
  return batch
end
