/* test_sched_light_load.c — at a light load sched_next costs what the placement needs, not a
 * pass over every GPU: with an idle GPU at the front, every policy but carma (whose backfill and
 * out-of-memory learning weigh every GPU) reads that GPU's view alone. The views past the first
 * page are made unreadable, so a read of all of them (a copy of each GPU's memory at every call
 * made a 1000-GPU simulation 1.5 times slower at a light load) crashes the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sched_fixture.h"

#define NGPUS 4096

static void idle_front_gpu_reads_one_view(void **state)
{
    (void)state;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = NGPUS * sizeof(gpu_view);
    size_t len = (bytes + page - 1) / page * page;
    assert_true(page / sizeof(gpu_view) >= 1 && len > page);
    gpu_view *views = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                           0);
    assert_true(views != MAP_FAILED);
    for (int g = 0; g < NGPUS; g++)
        views[g] = busy_gpu(0, 1.0, 1.0, 1.0);
    views[0] = idle_gpu();
    assert_int_equal(mprotect((char *)views + page, len - page, PROT_NONE), 0);
    for (policy_id p = 0; p < POLICY_COUNT; p++) {
        if (p == POLICY_CARMA)
            continue;
        sched *s = make_sched(p, NGPUS);
        assert_non_null(s);
        sched_task t;
        sched_task_init(&t);
        t.id = 1;
        t.ngpus = 1;
        mem_figures_set(&t.mem, MEM_ORACLE, 10 * GB);
        assert_int_equal(sched_submit(s, &t, NULL), 0);
        sched_decision d;
        assert_true(sched_next(s, 0.0, views, &d));
        assert_ptr_equal(d.task, &t);
        assert_int_equal(d.gpus[0], 0);
        sched_task_ended(s, &t, TASK_DONE, 1.0);
        sched_destroy(s);
    }
    munmap(views, len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_front_gpu_reads_one_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
