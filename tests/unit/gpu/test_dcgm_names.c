/* test_dcgm_names.c — the names of carma's group and field groups on a shared DCGM host engine
 * (dcgm_object_name): "carma-HOST-PID-NONCE", the host name cleaned and cut, always within
 * DCGM's limit (dcgm_structs.h: char [DCGM_MAX_STR_LENGTH], the NUL included) with "-prof"
 * added. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gpu/dcgm.h"
#include "gpu/dcgm_api.h"

static void plain_host_pid_and_nonce(void **state)
{
    (void)state;
    char name[DCGM_NAME_CAP];
    dcgm_object_name(name, "gpu-node07.cluster", 4242, 0x00c0ffee12345678ull);
    assert_string_equal(name, "carma-gpu-node07.cluster-4242-00c0ffee12345678");
    dcgm_object_name(name, "n1", 1, 0); /* pid 1 in a container: the nonce still has 16 digits */
    assert_string_equal(name, "carma-n1-1-0000000000000000");
}

/* A host name is written as it is only with letters, digits, '.', '-' and '_'; none gives
 * "unknown". */
static void odd_or_missing_host_names(void **state)
{
    (void)state;
    char name[DCGM_NAME_CAP];
    dcgm_object_name(name, "a b/c\n\xc3\xa9", 7, 1);
    assert_string_equal(name, "carma-a_b_c___-7-0000000000000001");
    dcgm_object_name(name, "", 7, 1);
    assert_string_equal(name, "carma-unknown-7-0000000000000001");
    dcgm_object_name(name, NULL, 7, 1);
    assert_string_equal(name, "carma-unknown-7-0000000000000001");
}

/* The longest name there can be (a host name over 64 characters, the widest pid) still takes
 * "-prof" within DCGM's DCGM_MAX_STR_LENGTH, and within carma's buffer. */
static void longest_name_fits_dcgm(void **state)
{
    (void)state;
    char host[300];
    memset(host, 'h', sizeof host - 1);
    host[sizeof host - 1] = '\0';
    char name[DCGM_NAME_CAP];
    dcgm_object_name(name, host, LONG_MIN, UINT64_MAX);
    char expect[DCGM_NAME_CAP];
    snprintf(expect, sizeof expect, "carma-%.*s-%ld-ffffffffffffffff", DCGM_NAME_HOST_MAX, host,
             LONG_MIN);
    assert_string_equal(name, expect);
    size_t with_prof = strlen(name) + strlen("-prof");
    assert_int_equal(with_prof, 113);
    assert_true(with_prof < DCGM_NAME_CAP);
    assert_true(with_prof < DCGM_MAX_STR_LENGTH); /* room for the NUL */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_host_pid_and_nonce),
        cmocka_unit_test(odd_or_missing_host_names),
        cmocka_unit_test(longest_name_fits_dcgm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
