-- job_submit.lua — carma's Slurm job_submit plugin script (JobSubmitPlugins=lua; install as
-- job_submit.lua next to slurm.conf; docs/slurm.md). GPUs are shared by memory: one shard is
-- SHARD_MIB of a GPU. This script
--   * turns carma_spank's --gpu-mem figure (CARMA_GPU_MEM_MIB in the job's SPANK environment)
--     into --gres=shard:N, N = ceil(MiB / SHARD_MIB), in place of any gpu or shard request;
--   * refuses a shard request no GPU can hold (more than SHARDS_PER_GPU): Slurm would accept
--     it and leave it pending for ever, ahead of later jobs;
--   * rewrites a whole-GPU request, --gres=gpu:1, to all the shards of one GPU, so that it
--     cannot be given a GPU whose shards other jobs hold (Slurm gives gpu and shard requests
--     from separate counts);
--   * gives a request for several whole GPUs (gpu:2 and up) a node of its own (exclusive), the
--     only way Slurm keeps shard jobs off GPUs it holds; set WHOLE_GPU_MAX = 1 to refuse them.
-- GPU requests through --gpus, --gpus-per-task and --gpus-per-socket are refused with the
-- --gres form to use, at submission and in updates: this script could not keep them off shared
-- GPUs. Any error in this script refuses the job (Slurm would accept it unchecked).

-- Settings: match gres.conf (each GPU's Count of shards) and carma_spank's shard_mib.
local SHARDS_PER_GPU = 40
local SHARD_MIB = 1024
-- The most whole GPUs a job may ask for (given an exclusive node); 1 refuses gpu:2 and up.
local WHOLE_GPU_MAX = 8

-- Slurm's log_user formats its first argument (string.format): text holding a user's words
-- (a script's name with a %, a gres type) must be an argument, never the format, or the
-- call raises an error.
local function msg(text)
   slurm.log_user("%s", "carma: " .. text)
end

-- For job modifications: Slurm 22.05's scontrol update shows only "Unspecified error", so the
-- reason also goes to slurmctld's log.
local function modify_refused(job_id, text)
   msg(text)
   slurm.log_info("carma: update of job %d refused: %s", job_id, text)
   return slurm.ERROR
end

-- The figure carma_spank passed, or nil; an error text when it is not a sane MiB count or when
-- carma_spank could not make one (CARMA_GPU_MEM_ERROR: an `optional` SPANK plugin cannot stop
-- the submission itself).
local function gpu_mem_mib(job_desc)
   local env = job_desc.spank_job_env
   if env == nil then
      return nil
   end
   for _, kv in pairs(env) do
      local e = string.match(kv, "^CARMA_GPU_MEM_ERROR=(.*)$")
      if e ~= nil then
         return nil, "--gpu-mem: " .. e
      end
      local v = string.match(kv, "^CARMA_GPU_MEM_MIB=(.*)$")
      if v ~= nil then
         local n = tonumber(v)
         if n == nil or n < 1 or n > 1048576 or n ~= math.floor(n) then
            return nil, "--gpu-mem figure '" .. v .. "' is not a MiB count"
         end
         return n
      end
   end
   return nil
end

-- A gres count as Slurm reads it: digits with an optional k, m, g, t or p (times 1024 each),
-- or nil. Slurm also takes forms this script would misread (1k, +50): they are refused.
local SUFFIX = { k = 1, m = 2, g = 3, t = 4, p = 5 }
local function gres_count(s)
   local digits, suffix = string.match(s, "^(%d+)(%a?)$")
   if digits == nil or (suffix ~= "" and SUFFIX[string.lower(suffix)] == nil) then
      return nil
   end
   local n = tonumber(digits) * 1024 ^ (SUFFIX[string.lower(suffix)] or 0)
   if n > 1e9 then
      return nil
   end
   return n
end

-- Splits a tres_per_node string ("gres:gpu:1,gres:shard:3", "gres:gpu:a100:2") into the
-- entries for gpu and shard (counts summed) and the other entries, kept as they are; or nil
-- and the gpu or shard entry whose count cannot be read (a count begins with a digit or a
-- sign, a type does not).
local function parse_gres(s)
   local r = { gpu = 0, shard = 0, other = {} }
   if s == nil or s == "" then
      return r
   end
   for entry in string.gmatch(s, "[^,]+") do
      local body = string.gsub(entry, "^gres[:/]", "")
      local name = string.match(body, "^([^:]+)")
      local last = string.match(body, ":([^:]*)$")
      if name == "gpu" or name == "shard" then
         local count = 1
         if last ~= nil and string.match(last, "^[%d+-]") then
            count = gres_count(last)
            if count == nil then
               return nil, entry
            end
         end
         r[name] = r[name] + count
      else
         table.insert(r.other, entry)
      end
   end
   return r
end

local function with_shards(g, n)
   local parts = {}
   for _, e in ipairs(g.other) do
      table.insert(parts, e)
   end
   table.insert(parts, "gres:shard:" .. n)
   return table.concat(parts, ",")
end

local function too_big(what, shards)
   msg(string.format("%s needs %d shards of %d MiB, but a GPU here has %d (%d MiB): "
                     .. "no GPU can ever hold it", what, shards, SHARD_MIB, SHARDS_PER_GPU,
                     SHARDS_PER_GPU * SHARD_MIB))
   return slurm.ERROR
end

-- The job's GPU request through --gpus, --gpus-per-task or --gpus-per-socket (the fields
-- tres_per_job, tres_per_task, tres_per_socket), or nil: this script cannot keep them off
-- shared GPUs.
local function other_gpu_request(job_desc)
   for _, field in ipairs({ "tres_per_job", "tres_per_task", "tres_per_socket" }) do
      local v = job_desc[field]
      if v ~= nil and (string.find(v, "gpu") or string.find(v, "shard")) then
         return v
      end
   end
   return nil
end

local function bad_count(entry)
   return "cannot read the count of '" .. entry .. "': give a plain number (gpu:2, shard:10)"
end

local function job_submit(job_desc, submit_uid)
   local gpus = other_gpu_request(job_desc)
   if gpus ~= nil then
      msg("ask for GPUs with --gres=gpu:N, --gres=shard:N or --gpu-mem=SIZE here, not "
          .. "--gpus, --gpus-per-task or --gpus-per-socket (" .. gpus .. ")")
      return slurm.ERROR
   end
   local g, unread = parse_gres(job_desc.tres_per_node)
   if g == nil then
      msg(bad_count(unread))
      return slurm.ERROR
   end
   local mib, bad = gpu_mem_mib(job_desc)
   if bad ~= nil then
      msg(bad)
      return slurm.ERROR
   end
   if mib ~= nil then
      local shards = math.ceil(mib / SHARD_MIB)
      if shards > SHARDS_PER_GPU then
         return too_big(string.format("--gpu-mem of %d MiB", mib), shards)
      end
      if g.gpu > 0 or g.shard > 0 then
         msg(string.format("--gpu-mem replaces the job's --gres request (%s) with shard:%d",
                           job_desc.tres_per_node, shards))
      end
      job_desc.tres_per_node = with_shards(g, shards)
      slurm.log_info("carma: job of uid %d: --gpu-mem %d MiB -> shard:%d", submit_uid, mib,
                     shards)
      return slurm.SUCCESS
   end
   if g.shard > 0 and g.gpu > 0 then
      msg("ask for either whole GPUs (--gres=gpu:N) or shards (--gres=shard:N), not both")
      return slurm.ERROR
   end
   if g.shard > SHARDS_PER_GPU then
      return too_big("--gres=shard:" .. g.shard, g.shard)
   end
   if g.gpu == 1 then
      job_desc.tres_per_node = with_shards(g, SHARDS_PER_GPU)
      msg(string.format("--gres=gpu:1 is served as shard:%d, a whole GPU no other job shares",
                        SHARDS_PER_GPU))
   elseif g.gpu > 1 then
      if g.gpu > WHOLE_GPU_MAX then
         msg(string.format("at most %d whole GPUs per job here (asked for %d)", WHOLE_GPU_MAX,
                           g.gpu))
         return slurm.ERROR
      end
      job_desc.shared = slurm.JOB_SHARED_NONE
      msg(string.format("--gres=gpu:%d gets a node of its own (--exclusive), so that no shard "
                        .. "job shares its GPUs", g.gpu))
   end
   return slurm.SUCCESS
end

-- scontrol update / job modification: a changed gres request is checked the same way, and
-- GPUs cannot come in through TresPerJob, TresPerTask or TresPerSocket (refused at
-- submission, they would be whole GPUs that shard jobs share).
local function job_modify(job_desc, job_rec)
   local gpus = other_gpu_request(job_desc)
   if gpus ~= nil then
      return modify_refused(job_rec.job_id, "GPUs are asked for with --gres here, not " .. gpus)
   end
   if job_desc.tres_per_node ~= nil then
      local g, unread = parse_gres(job_desc.tres_per_node)
      if g == nil then
         return modify_refused(job_rec.job_id, bad_count(unread))
      end
      if g.shard > SHARDS_PER_GPU then
         return modify_refused(job_rec.job_id, string.format(
            "shard:%d needs %d shards, but a GPU here has %d", g.shard, g.shard, SHARDS_PER_GPU))
      end
      if g.gpu > 0 then
         return modify_refused(job_rec.job_id, "whole GPUs cannot be added to a job by a "
                               .. "modification here; submit it again")
      end
   end
   return slurm.SUCCESS
end

-- Slurm 22.05 accepts a job, unchanged, when this script raises an error: every check above
-- would be skipped. So an error refuses the job instead.
local function fail_closed(what, fn, ...)
   local ok, rc = pcall(fn, ...)
   if ok then
      return rc
   end
   slurm.log_error("carma: job_submit.lua failed in %s: %s", what, tostring(rc))
   msg("the job could not be checked (job_submit.lua: " .. tostring(rc) .. "); it is refused")
   return slurm.ERROR
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   return fail_closed("slurm_job_submit", job_submit, job_desc, submit_uid)
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return fail_closed("slurm_job_modify", job_modify, job_desc, job_rec)
end

return slurm.SUCCESS
