-- wrk pipelining: each call of `request` hands wrk DEPTH requests at once (one write), and wrk
-- counts each of their responses, in order, as a completed request. Usage:
--   wrk -t1 -c16 -d5s -s bench/pipeline.lua http://127.0.0.1:PORT/ -- 16
-- (DEPTH defaults to 16, TechEmpower's plaintext depth). wrk's latency figures then time a whole
-- batch, from its write to the last response's arrival.

local batch

init = function(args)
  local depth = tonumber(args[1]) or 16
  local requests = {}
  for i = 1, depth do
    -- The request wrk would send by itself: its method, the URL's path, Host and the -H headers.
    requests[i] = wrk.format()
  end
  batch = table.concat(requests)
end

request = function()
  return batch
end
