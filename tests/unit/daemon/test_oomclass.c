/* test_oomclass.c — exit classification: exit 0 is done whatever was printed; a non-zero exit
 * or a signal is out-of-memory only with a framework's OOM message in the stderr tail; what
 * PyTorch's message says the attempt needed. */
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
    assert_int_equal(classify(EXIT0, true, "CUDA out of memory"), TASK_CANCELLED); /* not a crash */
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

static void cancel_wins_over_everything(void **state)
{
    (void)state;
    assert_int_equal(classify(KILLED, true, "CUDA out of memory"), TASK_CANCELLED);
    assert_int_equal(classify((exit_status){false, 0, 15}, true, ""), TASK_CANCELLED);
    /* a script that saved a checkpoint on SIGTERM and exited 0 did not finish its work */
    assert_int_equal(classify(EXIT0, true, ""), TASK_CANCELLED);
    assert_int_equal(classify(EXIT0, false, "CUDA out of memory"), TASK_DONE);
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

static bool demand(const char *text, uint64_t *mib)
{
    return oom_demand_mib(text, strlen(text), mib);
}

/* What PyTorch's messages say the crashed attempt needed: held + asked (2.1 on), reserved +
 * asked (before), asked alone; the largest of several ranks'; nothing without a message. */
static void demand_from_pytorch_messages(void **state)
{
    (void)state;
    uint64_t mib = 0;
    assert_true(demand("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.15 GiB. "
                       "GPU 0 has a total capacity of 39.56 GiB of which 6.80 GiB is free. "
                       "Including non-PyTorch memory, this process has 36.61 GiB memory in use. "
                       "Of the allocated memory 31.66 GiB is allocated by PyTorch, and 4.11 GiB "
                       "is reserved by PyTorch but unallocated.\n", &mib));
    assert_int_equal(mib, 40715); /* (36.61 + 3.15) GiB = 40714.24 MiB, rounded up */
    /* another process listed first is not this one */
    assert_true(demand("CUDA out of memory. Tried to allocate 876.00 MiB. GPU 0 has a total "
                       "capacity of 23.68 GiB of which 251.06 MiB is free. Process 2612630 has "
                       "458.00 MiB memory in use. Including non-PyTorch memory, this process has "
                       "22.98 GiB memory in use. Of the allocated memory", &mib));
    assert_int_equal(mib, 24408); /* 22.98 GiB = 23531.52 MiB, + 876 */
    assert_true(demand("RuntimeError: CUDA out of memory. Tried to allocate 36.00 MiB (GPU 0; "
                       "7.93 GiB total capacity; 130.35 MiB already allocated; 47.06 MiB free; "
                       "188.00 MiB reserved in total by PyTorch) If reserved memory is >> "
                       "allocated memory try setting max_split_size_mb", &mib));
    assert_int_equal(mib, 224);
    assert_true(demand("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512 bytes. "
                       "GPU 1 has a total capacity of 40.00 GiB of which 0 bytes is free.", &mib));
    assert_int_equal(mib, 1);
    assert_true(demand("[rank0] Tried to allocate 2.00 GiB. ... this process has 30.00 GiB memory "
                       "in use.\n[rank1] Tried to allocate 20.00 MiB. ... this process has 39.00 "
                       "GiB memory in use.\n", &mib));
    assert_int_equal(mib, 39956); /* rank 1: 39936 + 20; rank 0: 32768 */
    mib = 7;
    assert_false(demand("CUDNN_STATUS_ALLOC_FAILED", &mib));
    assert_false(demand("Tried to allocate lots of memory", &mib));
    assert_false(oom_demand_mib(NULL, 0, &mib));
    assert_int_equal(mib, 7);
    /* the length bounds the text: a message cut off before its size is no figure */
    static const char cut[] = "Tried to allocate 2.00 GiB";
    assert_false(oom_demand_mib(cut, strlen("Tried to allocate 2.00 G"), &mib));
    assert_true(oom_demand_mib(cut, strlen(cut), &mib));
    assert_int_equal(mib, 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_framework_message_is_oom_on_failure),
        cmocka_unit_test(exit_zero_is_never_a_crash),
        cmocka_unit_test(other_failures_are_final),
        cmocka_unit_test(cancel_wins_over_everything),
        cmocka_unit_test(marker_search_respects_the_length),
        cmocka_unit_test(demand_from_pytorch_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
