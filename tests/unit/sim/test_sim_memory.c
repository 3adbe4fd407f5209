/* test_sim_memory.c — the simulator's memory follows the jobs in the system, not the trace: a
 * long trace at a light load holds a core task (sched_task, over 600 bytes) only for the few
 * jobs queued or running. One per trace job made a 100,000-job run at Philly's rate peak at
 * 121 MiB instead of about 55. The heap in use is read (glibc's mallinfo2) while the run goes,
 * from its progress callback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_SEEN 0 /* the sanitizer's allocator is not glibc's: mallinfo2 does not see it */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_SEEN 0
#endif
#endif
#ifndef HEAP_SEEN
#define HEAP_SEEN 1
#endif

#define NJOBS 20000

static size_t heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

static void note_peak(size_t done, size_t total, void *user)
{
    (void)done;
    (void)total;
    size_t *peak = user, now = heap_in_use();
    if (now > *peak)
        *peak = now;
}

static void light_load_holds_tasks_for_jobs_in_the_system(void **state)
{
    (void)state;
    sim_setup s;
    memset(&s, 0, sizeof s);
    sched_config_defaults(&s.sched);
    s.sched.policy = POLICY_ORACLE_MAGM;
    sim_params_defaults(&s.params);
    int n;
    carma_err err;
    assert_int_equal(gpu_spec_parse("A100-40GB", NULL, &n, &s.gpu, &err), 0);
    s.ngpus = 4;
    sim_job_spec *jobs = calloc(NJOBS, sizeof *jobs);
    assert_non_null(jobs);
    for (size_t i = 0; i < NJOBS; i++) { /* one 10 s job every 100 s: at most one at a time */
        sim_job_spec *j = &jobs[i];
        j->name = "job";
        j->submit_s = 100.0 * (double)i;
        j->ngpus = 1;
        j->early_mib = j->peak_mib = 4096;
        mem_figures_set(&j->mem, MEM_ORACLE, 4096);
        j->runtime_s = 10;
        j->startup_s = NAN;
        j->util = NAN;
        j->lucid_class = -1;
        j->smact = 0.3;
        j->smocc = j->drama = 0.1;
    }
    size_t before = heap_in_use(), peak = before;
    s.progress = note_peak;
    s.progress_user = &peak;
    sim_result r;
    assert_int_equal(sim_run(&s, jobs, NJOBS, &r, &err), 0);
    assert_int_equal(r.summary.completed, NJOBS);
    sim_result_free(&r);
    free(jobs);
    if (HEAP_SEEN) {
        double per_job = (double)(peak - before) / NJOBS;
        print_message("heap per trace job during the run: %.0f bytes (a core task: %zu)\n",
                      per_job, sizeof(sched_task));
        assert_true(per_job > 0 && per_job < (double)sizeof(sched_task));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(light_load_holds_tasks_for_jobs_in_the_system),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
