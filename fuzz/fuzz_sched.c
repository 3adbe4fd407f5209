/* fuzz_sched.c — the scheduling core (src/sched) driven through sched.h by operations decoded
 * from the input: a core for any policy (carma with its parts on or off, and other tunables
 * within their bounds), a few GPUs of varying memory, then submissions, placement passes with
 * random views, processes seen, endings (done, failed, cancelled, out of memory with or without
 * a peak), cancels while queued, restores, reorders, time advancing and explanations.
 *
 * Only what sched.h allows a driver is fed to it (running tasks end, time never goes back,
 * fractions in 0..1 or NaN, free <= total memory; what it documents as errors, such as a GPU
 * restored twice, must be refused), so a crash, a sanitizer report, a failed
 * assert(sched_check) (the target is built with assertions on) or one of the checks here and in
 * fuzz_sched.h is the core's. The checks, after every operation:
 * every task is in exactly one of queued / running / ended as the driver saw it, the queues'
 * lengths and contents match, each GPU's ledger counts the tasks running on it and its grace
 * state is held only by one of them; each decision places a queued task on as many distinct,
 * existing GPUs as it asked, that were available when grace applies, within the policy's caps;
 * an explanation that says "starting" is followed by a placement. A finding's operations:
 * FUZZ_SCHED_TRACE=1 build-fuzz/fuzz/fuzz_sched FILE. */
#include "fuzz_sched.h"

static void op_submit(world *w, bool recovery)
{
    int i = pick_task(w, FRESH, false);
    if (i < 0)
        i = pick_task(w, ENDED, false);
    if (i < 0)
        return;
    task_from(w, i);
    carma_err err;
    int rc = recovery ? sched_submit_recovery(w->s, &w->t[i], &err)
                      : sched_submit(w->s, &w->t[i], &err);
    TRACE("submit%s %d\n", recovery ? "_recovery" : "", i + 1);
    CHECK(rc == 0); /* a valid task is always taken */
    w->st[i] = recovery ? IN_RECOVERY : IN_MAIN;
}

/* Invalid submissions are refused and change nothing. */
static void op_submit_invalid(world *w)
{
    int i = pick_task(w, FRESH, false);
    if (i < 0)
        return;
    task_from(w, i);
    sched_task *t = &w->t[i];
    uint8_t how = u8(&w->r) % 4;
    if (how == 0)
        t->ngpus = w->ngpus + 1;
    else if (how == 1)
        t->ngpus = 0;
    else if (how == 2)
        t->profiled_util = 1.5;
    else
        t->lucid_class = 3;
    carma_err err;
    CHECK(sched_submit(w->s, t, &err) == -1);
    CHECK(t->where == SCHED_NOWHERE);
    int held = pick_task(w, IN_MAIN, true); /* an already queued task cannot be again */
    if (held >= 0)
        CHECK(sched_submit(w->s, &w->t[held], &err) == -1);
}

/* Explains every queued task, then places as long as something fits with these views. */
static void op_pass(world *w)
{
    TRACE("pass at %g\n", w->now);
    views_from(w);
    bool starting = false;
    int head = -1;
    const sched_task *h = sched_recovery_head(w->s) ? sched_recovery_head(w->s)
                                                    : sched_main_head(w->s);
    sched_reason head_why = {0};
    for (int i = 0; i < MAX_TASKS; i++) {
        sched_reason why;
        sched_explain(w->s, &w->t[i], w->v, w->now, &why);
        bool queued = w->st[i] == IN_MAIN || w->st[i] == IN_RECOVERY;
        CHECK((why.kind == SCHED_REASON_NONE) == !queued);
        sched_reason again; /* it changed nothing it judges by */
        sched_explain(w->s, &w->t[i], w->v, w->now, &again);
        CHECK(again.kind == why.kind && again.gpu == why.gpu && again.task == why.task &&
              again.have == why.have && again.passed == why.passed &&
              (again.until == why.until || (isnan(again.until) && isnan(why.until))));
        if (queued)
            TRACE("  explain %d: %s gpu %d have %d need %llu most %llu task %llu until %g "
                  "passed %d\n", i + 1, sched_reason_name(why.kind), why.gpu, why.have,
                  (unsigned long long)why.need_mib, (unsigned long long)why.most_mib,
                  (unsigned long long)why.task, why.until, why.passed);
        if (!queued)
            continue;
        CHECK(why.kind > SCHED_REASON_NONE && why.kind < SCHED_REASON_COUNT);
        CHECK(why.kind != SCHED_REASON_NO_SAMPLE && why.kind != SCHED_REASON_HELD &&
              why.kind != SCHED_REASON_DEPENDENCY && why.kind != SCHED_REASON_STATE_SPACE);
        CHECK(why.gpu >= -1 && why.gpu < w->ngpus && why.ngpus == w->t[i].ngpus);
        CHECK(why.passed >= 0 && why.passed <= w->cfg.backfill_max_skips);
        starting |= why.kind == SCHED_REASON_STARTING;
        if (&w->t[i] == h) {
            head = i;
            head_why = why;
        }
    }
    sched_gpu_needs needs = {0};
    if (h)
        needs = sched_head_needs(w->s, h);
    for (int n = 0; n < 2 * MAX_TASKS; n++) {
        gpu_grace before[MAX_GPUS];
        sched_gpu_load load[MAX_GPUS];
        sched_advance(w->s, w->now); /* as sched_next does first: the states it judges by */
        for (int g = 0; g < w->ngpus; g++) {
            before[g] = sched_gpu_grace(w->s, g);
            load[g] = sched_gpu_ledger(w->s, g);
        }
        sched_decision d;
        bool placed = sched_next(w->s, w->now, w->v, &d);
        if (placed) {
            TRACE("  placed %llu rule %d recovery %d requirement %llu on",
                  (unsigned long long)d.task->id, d.rule, d.from_recovery,
                  (unsigned long long)d.requirement_mib);
            for (int k = 0; k < d.ngpus; k++)
                TRACE(" %d", d.gpus[k]);
            TRACE("\n");
        }
        if (n == 0) {
            /* "starting": nothing holds it back, this pass starts it (for the strict FIFO
             * policies, the head exactly when it is starting) */
            if (starting)
                CHECK(placed);
            if (w->cfg.policy != POLICY_CARMA && head >= 0)
                CHECK((head_why.kind == SCHED_REASON_STARTING) == (placed && d.task == h));
            /* the needs are a superset of what takes the head (carma: any task) */
            if (placed && h && (d.task == h || w->cfg.policy == POLICY_CARMA)) {
                for (int k = 0; k < d.ngpus; k++) {
                    int g = d.gpus[k];
                    if (needs.grace_blocks)
                        CHECK(before[g].state == GPU_AVAILABLE);
                    if (!needs.collocates)
                        CHECK(w->v[g].idle);
                    uint64_t avail = 0;
                    if (needs.filtered && d.rule == PLACE_POLICY)
                        CHECK(sched_available_mib(&w->cfg, &w->v[g], &avail) &&
                              avail >= needs.min_mib &&
                              (!needs.gate || sched_gate_passes(&w->cfg, &w->v[g])));
                }
            }
        }
        if (!placed)
            break;
        int attempts = d.task->attempts;
        check_decision(w, &d, before, load);
        CHECK(attempts >= 1);
        check_world(w);
    }
}

static void op_seen(world *w)
{
    int i = pick_task(w, RUNNING, false);
    if (i < 0)
        return;
    sched_task *t = &w->t[i];
    uint8_t b = u8(&w->r);
    int g = b & 0x80 ? (int)(b % (w->ngpus + 2)) - 1 : t->gpus[b % t->ngpus];
    TRACE("seen %d on %d at %g\n", i + 1, g, w->now);
    sched_process_seen(w->s, t, g, w->now);
}

static void op_end(world *w)
{
    int i = pick_task(w, RUNNING, false);
    if (i < 0)
        return;
    sched_task *t = &w->t[i];
    uint8_t b = u8(&w->r);
    int cap = t->max_retries >= 0 ? t->max_retries : w->cfg.retry_cap;
    bool retries_left = (t->attempts > 0 ? t->attempts - 1 : 0) < cap;
    sched_end e;
    if (b % 6 < 3) {
        e = sched_task_ended(w->s, t, (task_outcome)(b % 6 == 0 ? TASK_DONE
                                                     : b % 6 == 1 ? TASK_FAILED
                                                                  : TASK_CANCELLED), w->now);
        CHECK(e == SCHED_END_FINAL);
    } else {
        sched_oom_seen seen = {.peak_known = b % 6 == 5, .peak_mib = mib_from(&w->r)};
        e = b % 6 == 3 ? sched_task_ended(w->s, t, TASK_OOM, w->now)
                       : sched_task_oom(w->s, t, &seen, w->now);
        if (e == SCHED_END_NEVER_FITS)
            CHECK(w->cfg.policy == POLICY_CARMA && w->cfg.carma_oom_learning &&
                  t->learned_known);
        else
            CHECK(e == (retries_left ? SCHED_END_RETRY : SCHED_END_FINAL));
    }
    TRACE("end %d (%d) at %g: %d\n", i + 1, b % 6, w->now, e);
    CHECK(e == SCHED_END_RETRY ? t->where == SCHED_IN_RECOVERY : t->where == SCHED_NOWHERE);
    w->st[i] = e == SCHED_END_RETRY ? IN_RECOVERY : ENDED;
}

static void op_cancel(world *w)
{
    int i = pick_task(w, IN_MAIN, true);
    if (i < 0)
        return;
    TRACE("cancel %d\n", i + 1);
    CHECK(sched_remove_queued(w->s, &w->t[i]));
    w->st[i] = ENDED;
    int j = pick_task(w, RUNNING, false); /* running or ended tasks are not queued */
    if (j < 0)
        j = pick_task(w, ENDED, false);
    if (j >= 0)
        CHECK(!sched_remove_queued(w->s, &w->t[j]));
}

static void op_restore(world *w)
{
    int i = pick_task(w, FRESH, false);
    if (i < 0)
        i = pick_task(w, ENDED, false);
    if (i < 0)
        return;
    task_from(w, i);
    sched_task *t = &w->t[i];
    int perm[MAX_GPUS], gpus[SCHED_MAX_TASK_GPUS];
    for (int g = 0; g < w->ngpus; g++)
        perm[g] = g;
    for (int k = 0; k < t->ngpus; k++) { /* distinct GPUs, drawn from the input */
        int j = k + u8(&w->r) % (w->ngpus - k), x = perm[k];
        perm[k] = perm[j];
        perm[j] = x;
        gpus[k] = perm[k];
    }
    uint8_t b = u8(&w->r);
    gpu_grace_state state = (gpu_grace_state)(b % 3);
    double seen_at = w->now - (double)(b >> 2);
    TRACE("restore %d state %d seen_at %g on", i + 1, state, seen_at);
    for (int k = 0; k < t->ngpus; k++)
        TRACE(" %d", gpus[k]);
    TRACE("\n");
    carma_err err;
    if (b & 2 && t->ngpus > 1) { /* a GPU twice, or one that does not exist: refused */
        int k = 1 + b % (t->ngpus - 1), was = gpus[k];
        gpus[k] = b & 1 ? gpus[0] : w->ngpus;
        CHECK(sched_restore_running(w->s, t, gpus, t->ngpus, state, seen_at, &err) == -1);
        CHECK(t->where == SCHED_NOWHERE);
        check_world(w);
        gpus[k] = was;
    }
    CHECK(sched_restore_running(w->s, t, gpus, t->ngpus, state, seen_at, &err) == 0);
    w->st[i] = RUNNING;
}

/* The driver may change a task's figures while the core holds it (the core fixed a running
 * task's charge when placing it). */
static void op_refigure(world *w)
{
    int i = pick_task(w, RUNNING, u8(&w->r) & 1);
    if (i < 0)
        return;
    sched_task *t = &w->t[i];
    mem_source src = (mem_source)(u8(&w->r) % MEM_SOURCE_COUNT);
    mem_figures_set(&t->mem, src, mib_from(&w->r));
    t->solo_smact = frac_or_nan(&w->r);
    t->profiled_util = frac_or_nan(&w->r);
    t->lucid_class = u8(&w->r) % 4 - 1;
    TRACE("refigure %d: %s=%llu smact %g util %g class %d\n", i + 1,
          mem_source_estimator_name(src), (unsigned long long)t->mem.mib[src], t->solo_smact,
          t->profiled_util, t->lucid_class);
    if (w->st[i] != RUNNING && (u8(&w->r) & 1)) { /* an identical task's crash teaches it */
        uint64_t had = t->learned_known ? t->learned_mib : 0, mib = mib_from(&w->r);
        sched_task_learn(w->s, t, mib);
        TRACE("learn %d: %llu\n", i + 1, (unsigned long long)mib);
        CHECK(t->learned_known && t->learned_mib == (mib > had ? mib : had));
    }
}

/* What the policy places a task with agrees with what it says of its figures. */
static void op_figure(world *w)
{
    int i = u8(&w->r) % MAX_TASKS;
    if (w->st[i] == FRESH)
        return;
    const sched_task *t = &w->t[i];
    uint64_t req = 0, fig = 0;
    mem_source src = MEM_ORACLE, psrc = MEM_ORACLE;
    bool learned = false;
    bool has_req = sched_task_requirement(&w->cfg, t, &req);
    bool has_fig = sched_task_figure(&w->cfg, t, &fig, &src, &learned);
    sched_figure kind = sched_policy_figure(&w->cfg, &psrc);
    if (kind != SCHED_FIGURE_TASK)
        CHECK(!has_fig && has_req);
    else
        CHECK(has_fig == has_req && (!has_fig || fig == req));
    CHECK(!learned || (w->cfg.policy == POLICY_CARMA && t->learned_known));
    if (w->cfg.policy != POLICY_CARMA && has_fig)
        CHECK(src == psrc);
}

static void op_move(world *w)
{
    int i = pick_task(w, IN_MAIN, false), j = pick_task(w, IN_MAIN, true);
    if (i < 0)
        return;
    sched_task *before = j >= 0 && u8(&w->r) & 1 ? &w->t[j] : NULL;
    bool ok = sched_move_before(w->s, &w->t[i], before);
    TRACE("move %d before %d: %d\n", i + 1, before ? j + 1 : 0, ok);
    CHECK(ok == (before != &w->t[i] && (!before || w->st[j] == IN_MAIN)));
}

static void op_time(world *w)
{
    static const double steps[] = {0, 1e-3, 1, 29.999, 30, 30.001, 600, 86400};
    uint8_t b = u8(&w->r);
    double dt = b < 128 ? steps[b % 8] : (double)u16(&w->r) / 8.0;
    if (b & 0x40)
        dt += w->cfg.grace_s;
    w->now += dt;
    TRACE("time %g%s\n", w->now, b & 0x20 ? " (advance)" : "");
    if (b & 0x20)
        sched_advance(w->s, w->now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static world w;
    if (tracing < 0)
        tracing = getenv("FUZZ_SCHED_TRACE") != NULL;
    memset(&w, 0, sizeof w);
    w.r = (reader){data, size};
    config_from(&w);
    w.ngpus = 1 + u8(&w.r) % MAX_GPUS;
    for (int g = 0; g < w.ngpus; g++)
        w.total[g] = gpu_sizes[u8(&w.r) % 8];
    uint8_t t0 = u8(&w.r);
    w.now = t0 < 128 ? 0 : t0 < 192 ? 1e6 : (double)t0 * 1e4;
    TRACE("gpus %d:", w.ngpus);
    for (int g = 0; g < w.ngpus; g++)
        TRACE(" %llu", (unsigned long long)w.total[g]);
    TRACE(" at %g\n", w.now);
    carma_err err;
    w.s = sched_create(&w.cfg, w.ngpus, &err);
    CHECK(w.s);
    for (int n = 0; n < MAX_OPS && w.r.n; n++) {
        uint8_t op = u8(&w.r);
        switch (op % 16) {
        case 0: case 1: case 2: op_submit(&w, false); break;
        case 3: op_submit(&w, true); break;
        case 4: case 5: case 6: op_pass(&w); break;
        case 7: op_seen(&w); break;
        case 8: case 9: op_end(&w); break;
        case 10: op_cancel(&w); break;
        case 11: op_restore(&w); break;
        case 12: op_time(&w); break;
        case 13: op_refigure(&w); break;
        case 14: op_move(&w); break;
        default:
            if (op & 0x20) {
                op_figure(&w);
            } else if (op & 0x10) {
                TRACE("see_gpus\n");
                views_from(&w);
                sched_see_gpus(w.s, w.v);
                /* what the daemon ends, as each pass starts: only learned, queued tasks */
                for (sched_task *t; (t = sched_take_never_fits(w.s, w.v)) != NULL;) {
                    int i = (int)(t - w.t);
                    TRACE("never fits %d\n", i + 1);
                    CHECK(t->learned_known && (w.st[i] == IN_MAIN || w.st[i] == IN_RECOVERY));
                    w.st[i] = ENDED;
                }
            } else {
                op_submit_invalid(&w);
            }
            break;
        }
        check_world(&w);
    }
    /* Drain: every task ends or leaves the queue; the core is then empty. */
    for (int i = 0; i < MAX_TASKS; i++) {
        if (w.st[i] == RUNNING)
            CHECK(sched_task_ended(w.s, &w.t[i], TASK_DONE, w.now) == SCHED_END_FINAL);
        else if (w.st[i] == IN_MAIN || w.st[i] == IN_RECOVERY)
            CHECK(sched_remove_queued(w.s, &w.t[i]));
        if (w.st[i] != FRESH)
            w.st[i] = ENDED;
        check_world(&w);
    }
    CHECK(!sched_main_head(w.s) && !sched_recovery_head(w.s) && sched_check(w.s));
    for (int g = 0; g < w.ngpus; g++) {
        sched_gpu_load L = sched_gpu_ledger(w.s, g);
        CHECK(L.ntasks == 0 && L.commit_mib == 0 && L.oracle_mib == 0 && L.class_sum == 0);
        CHECK(sched_gpu_grace(w.s, g).state == GPU_AVAILABLE);
    }
    sched_destroy(w.s);
    return 0;
}
