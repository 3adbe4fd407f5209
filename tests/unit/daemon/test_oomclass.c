/* test_oomclass.c — exit classification: exit 0 is done whatever was printed; a non-zero exit
 * or a signal is out-of-memory only with a framework's OOM message in the stderr tail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "daemon/oomclass.h"

static const exit_status EXIT0 = {true, 0, 0}, EXIT1 = {true, 1, 0}, KILLED = {false, 0, 9};

static task_outcome classify(exit_status st, bool cancelled, const char *tail)
{
    return oom_classify(st, cancelled, tail, tail ? strlen(tail) : 0);
}

/* One real line per framework, as each prints it. */
static const char *const oom_lines[] = {
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a "
    "total capacity of 39.39 GiB of which 1.20 GiB is free.",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB",
    "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
    "reported",
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
    "cudaErrorMemoryAllocation: out of memory",
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
    "allocate 17179869184 bytes.",
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor "
    "with shape[32,3,224,224]",
    "2024-01-01 W tensorflow/core/common_runtime/bfc_allocator.cc] RESOURCE_EXHAUSTED: failed",
    "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
};

static void every_framework_message_is_oom_on_failure(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof oom_lines / sizeof oom_lines[0]; i++) {
        char tail[1024];
        snprintf(tail, sizeof tail, "Traceback (most recent call last):\n  File \"x.py\"\n%s\n",
                 oom_lines[i]);
        assert_int_equal(classify(EXIT1, false, tail), TASK_OOM);
        assert_int_equal(classify(KILLED, false, tail), TASK_OOM); /* e.g. an abort() after it */
        assert_non_null(oom_marker_in(tail, strlen(tail)));
    }
}

static void exit_zero_is_never_a_crash(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof oom_lines / sizeof oom_lines[0]; i++)
        assert_int_equal(classify(EXIT0, false, oom_lines[i]), TASK_DONE);
    assert_int_equal(classify(EXIT0, false, ""), TASK_DONE);
    assert_int_equal(classify(EXIT0, true, "CUDA out of memory"), TASK_DONE);
}

static void other_failures_are_final(void **state)
{
    (void)state;
    assert_int_equal(classify(EXIT1, false, "ValueError: bad input"), TASK_FAILED);
    assert_int_equal(classify(EXIT1, false, NULL), TASK_FAILED);
    assert_int_equal(classify((exit_status){true, 137, 0}, false, ""), TASK_FAILED);
    assert_int_equal(classify(KILLED, false, "Killed"), TASK_FAILED);
    /* Words that merely look like OOM (paths, host memory, lowercase) are not GPU OOMs. */
    assert_int_equal(classify(EXIT1, false, "/data/OOM_runs/x.py: error"), TASK_FAILED);
    assert_int_equal(classify(EXIT1, false, "MemoryError"), TASK_FAILED);
    assert_int_equal(classify(EXIT1, false, "cuda out of memory"), TASK_FAILED);
    assert_int_equal(classify(EXIT1, false, "MPS backend out of memory"), TASK_FAILED);
}

static void cancel_wins_over_failure_but_not_over_success(void **state)
{
    (void)state;
    assert_int_equal(classify(KILLED, true, "CUDA out of memory"), TASK_CANCELLED);
    assert_int_equal(classify((exit_status){false, 0, 15}, true, ""), TASK_CANCELLED);
    assert_int_equal(classify(EXIT0, true, ""), TASK_DONE);
}

static void marker_search_respects_the_length(void **state)
{
    (void)state;
    const char *t = "xxCUDA out of memory";
    assert_null(oom_marker_in(t, 10)); /* the marker lies beyond len */
    assert_non_null(oom_marker_in(t, strlen(t)));
    assert_null(oom_marker_in(NULL, 5));
    char bin[64] = "abc\0def CUBLAS_STATUS_ALLOC_FAILED"; /* NUL inside the tail */
    assert_non_null(oom_marker_in(bin, 8 + strlen("CUBLAS_STATUS_ALLOC_FAILED")));
    assert_string_equal(task_outcome_name(TASK_OOM), "oom");
    assert_string_equal(task_outcome_name(TASK_CANCELLED), "cancelled");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_framework_message_is_oom_on_failure),
        cmocka_unit_test(exit_zero_is_never_a_crash),
        cmocka_unit_test(other_failures_are_final),
        cmocka_unit_test(cancel_wins_over_failure_but_not_over_success),
        cmocka_unit_test(marker_search_respects_the_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
