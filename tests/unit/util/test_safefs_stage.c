/* test_safefs_stage.c — a set of output files written into a directory all together
 * (safefs_stage_*): the files appear only on commit, a symlink at a final name is replaced and
 * not followed, a failed commit restores what it replaced, and nothing of the staging (nor a
 * target directory it made) is left. And a private file's intruder named (safefs_type_name). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/safefs.h"

typedef struct fixture {
    char root[64];   /* a fresh directory */
    char target[96]; /* root/out */
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    snprintf(fx->root, sizeof fx->root, "/tmp/carma_stage_XXXXXX");
    if (!fx || !mkdtemp(fx->root))
        return -1;
    snprintf(fx->target, sizeof fx->target, "%s/out", fx->root);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->root);
    int rc = system(cmd);
    free(fx);
    return rc;
}

static void put(safefs_stage *st, const char *name, const char *text)
{
    carma_err err = {{0}};
    FILE *f = safefs_stage_fopen(st, name, &err);
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The file's first line ("" when absent). */
static const char *slurp(const char *dir, const char *name)
{
    static char buf[64];
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
    }
    return buf;
}

static int entries(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "exit $(ls -A '%s' | wc -l)", dir);
    return WEXITSTATUS(system(cmd));
}

static void test_commit_moves_all(void **state)
{
    fixture *fx = *state;
    carma_err err = {{0}};
    safefs_stage st;
    assert_int_equal(safefs_stage_open(&st, "--out", fx->target, &err), 0);
    char precious[128], link[128];
    snprintf(precious, sizeof precious, "%s/precious", fx->root);
    snprintf(link, sizeof link, "%s/b", fx->target);
    FILE *f = fopen(precious, "w");
    fputs("precious", f);
    fclose(f);
    assert_int_equal(symlink("../precious", link), 0);
    put(&st, "a", "new a");
    put(&st, "b", "new b");
    assert_string_equal(slurp(fx->target, "a"), ""); /* not before the commit */
    const char *names[] = {"a", "b"};
    assert_int_equal(safefs_stage_commit(&st, names, 2, &err), 0);
    safefs_stage_close(&st);
    assert_string_equal(slurp(fx->target, "a"), "new a");
    assert_string_equal(slurp(fx->target, "b"), "new b");
    assert_string_equal(slurp(fx->root, "precious"), "precious");
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISREG(sb.st_mode)); /* the symlink itself was replaced */
    assert_int_equal(entries(fx->target), 2);
}

static void test_failed_commit_restores(void **state)
{
    fixture *fx = *state;
    carma_err err = {{0}};
    safefs_stage st;
    assert_int_equal(mkdir(fx->target, 0755), 0);
    char old[128];
    snprintf(old, sizeof old, "%s/a", fx->target);
    FILE *f = fopen(old, "w");
    fputs("old a", f);
    fclose(f);
    assert_int_equal(safefs_stage_open(&st, "--out", fx->target, &err), 0);
    put(&st, "a", "new a");
    put(&st, "c", "new c");
    /* "missing" was never staged: its move fails after a and c moved; both are taken back */
    const char *names[] = {"a", "c", "missing"};
    assert_int_equal(safefs_stage_commit(&st, names, 3, &err), -1);
    assert_non_null(strstr(err.msg, "out/missing"));
    safefs_stage_close(&st);
    assert_string_equal(slurp(fx->target, "a"), "old a");
    assert_int_equal(entries(fx->target), 1); /* no c, no staging directory */
}

static void test_directory_refused_before_moving(void **state)
{
    fixture *fx = *state;
    carma_err err = {{0}};
    safefs_stage st;
    assert_int_equal(safefs_stage_open(&st, "--out", fx->target, &err), 0);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/b", fx->target);
    assert_int_equal(mkdir(dir, 0755), 0);
    put(&st, "a", "new a");
    put(&st, "b", "new b");
    const char *names[] = {"a", "b"};
    assert_int_equal(safefs_stage_commit(&st, names, 2, &err), -1);
    assert_non_null(strstr(err.msg, "out/b: Is a directory"));
    safefs_stage_close(&st);
    assert_string_equal(slurp(fx->target, "a"), "");
    assert_int_equal(entries(fx->target), 1);
}

static void test_uncommitted_leaves_no_target(void **state)
{
    fixture *fx = *state;
    carma_err err = {{0}};
    safefs_stage st;
    assert_int_equal(safefs_stage_open(&st, "--plot", fx->target, &err), 0);
    put(&st, "a", "new a");
    safefs_stage_close(&st);
    assert_int_equal(access(fx->target, F_OK), -1); /* it made the directory: gone again */
    char file[128];
    snprintf(file, sizeof file, "%s/file", fx->root);
    fclose(fopen(file, "w"));
    assert_int_equal(safefs_stage_open(&st, "--plot", file, &err), -1);
    assert_non_null(strstr(err.msg, "--plot"));
    assert_non_null(strstr(err.msg, "exists and is not a directory"));
    safefs_stage_close(&st); /* harmless after a failed open */
}

/* safefs_private_file names what is in a private file's place (it called a directory a
 * "special file") */
static void test_private_file_names_the_intruder(void **state)
{
    fixture *fx = *state;
    carma_err err = {{0}};
    char path[128];
    snprintf(path, sizeof path, "%s/db", fx->root);
    assert_int_equal(mkdir(path, 0700), 0);
    int dfd = open(fx->root, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    assert_int_equal(safefs_private_file(dfd, "db", path, &err), -1);
    assert_non_null(strstr(err.msg, "(a directory)"));
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(safefs_private_file(dfd, "db", path, &err), -1);
    assert_non_null(strstr(err.msg, "(a named pipe)"));
    close(dfd);
    assert_string_equal(safefs_type_name(S_IFSOCK), "socket");
    assert_string_equal(safefs_type_name(S_IFLNK), "symbolic link");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_moves_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_commit_restores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_refused_before_moving, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uncommitted_leaves_no_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_private_file_names_the_intruder, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
