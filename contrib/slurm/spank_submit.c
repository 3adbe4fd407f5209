/* spank_submit.c — the submit side of carma's SPANK plugin (in srun, sbatch, salloc, as the
 * submitting user): --gpu-mem's figure, and for --gpu-mem=auto the job's command and carma's
 * estimate of it (`carma estimate --run --json -- COMMAND`, run with execv, never a shell).
 *
 * How the command is known: Slurm 22.05's srun, sbatch and salloc read their options with
 * getopt_long in "+" mode (stop at the first operand, argv left in order) and call the
 * init_post_opt hook right after the last pass over the command line, so getopt's optind is
 * then the index of the first operand in the program's argv, whose words /proc/self/cmdline
 * holds in that order. The words before it are options; sbatch's --wrap is found among them. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include "carma_spank.h"
#include "util/sigreset.h"
#include "util/strutil.h"

/* The submitting program's command line is bounded by the kernel (ARG_MAX); this is more than
 * any real one and keeps a corrupt read bounded. */
#define CMDLINE_MAX (2u << 20)
/* carma estimate --json prints a small object; more than this is not its reply. */
#define ESTIMATE_OUT_MAX 65536

void cspank_free_argv(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

/* argv words w[from..to) as a new NULL-terminated heap array (NULL when out of memory). */
static char **copy_words(char *const *w, int from, int to)
{
    char **out = calloc((size_t)(to - from) + 1, sizeof *out);
    if (!out)
        return NULL;
    for (int i = from; i < to; i++)
        if (!(out[i - from] = str_dup(w[i]))) {
            cspank_free_argv(out);
            return NULL;
        }
    return out;
}

/* This process's argv from /proc/self/cmdline: *words points into *buf. */
static int read_cmdline(char **buf, char ***words, int *n, carma_err *err)
{
    size_t len;
    carma_err why;
    *buf = read_file("/proc/self/cmdline", &len, &why);
    if (!*buf)
        return carma_err_set(err, "cannot read %s", why.msg);
    if (len == 0 || len > CMDLINE_MAX || (*buf)[len - 1] != '\0') {
        free(*buf);
        return carma_err_set(err, "unexpected /proc/self/cmdline");
    }
    int count = 0;
    for (size_t i = 0; i < len; i++)
        count += (*buf)[i] == '\0';
    *words = calloc((size_t)count + 1, sizeof **words);
    if (!*words) {
        free(*buf);
        return carma_err_set(err, "out of memory");
    }
    char *p = *buf;
    for (int i = 0; i < count; i++) {
        (*words)[i] = p;
        p += strlen(p) + 1;
    }
    *n = count;
    return 0;
}

/* sbatch --wrap's string among the option words w[1..end), or NULL. */
static const char *find_wrap(char *const *w, int end)
{
    const char *wrap = NULL;
    for (int i = 1; i < end; i++) {
        if (!strncmp(w[i], "--wrap=", 7))
            wrap = w[i] + 7;
        else if (!strcmp(w[i], "--wrap") && i + 1 < end)
            wrap = w[++i];
    }
    return wrap;
}

/* --wrap's command as words: quotes and variables as sh would take them, but with no command
 * substitution and no shell operators (wordexp refuses | ; & < > and newlines). */
static int split_wrap(const char *wrap, char ***argv, carma_err *err)
{
    wordexp_t we;
    int rc = wordexp(wrap, &we, WRDE_NOCMD);
    if (rc) {
        if (rc == WRDE_BADCHAR || rc == WRDE_CMDSUB || rc == WRDE_SYNTAX)
            return carma_err_set(err, "auto: --wrap must be one plain command (python3 train.py "
                                      "...) to be estimated: no ; | & < > or $(...)");
        return carma_err_set(err, "auto: cannot split --wrap's command into words");
    }
    if (we.we_wordc == 0) {
        wordfree(&we);
        return carma_err_set(err, "auto: --wrap has no command");
    }
    *argv = copy_words(we.we_wordv, 0, (int)we.we_wordc);
    wordfree(&we);
    return *argv ? 0 : carma_err_set(err, "out of memory");
}

/* True when the file's first line is a #! line naming python. */
static bool is_python_script(const char *path)
{
    FILE *f = fopen_regular(path, NULL); /* a FIFO would block the job's submission */
    if (!f)
        return false;
    char line[256] = "";
    bool py = fgets(line, sizeof line, f) && !strncmp(line, "#!", 2) && strstr(line, "python");
    fclose(f);
    return py;
}

int cspank_job_command(char ***argv, carma_err *err)
{
    char *buf, **w;
    int n = 0;
    if (read_cmdline(&buf, &w, &n, err))
        return -1;
    int rc = -1;
    int first = optind; /* the first operand: see the comment at the top */
    const char *prog = strrchr(w[0], '/') ? strrchr(w[0], '/') + 1 : w[0];
    bool sbatch = !strcmp(program_invocation_short_name, "sbatch") || !strcmp(prog, "sbatch");
    if (first < 1 || first > n) {
        carma_err_set(err, "auto: cannot tell where %s's options end", prog);
        goto out;
    }
    for (int i = 1; i < n; i++)
        if (!strcmp(w[i], ":")) {
            carma_err_set(err, "auto: not for heterogeneous jobs; give each part a size");
            goto out;
        }
    if (!sbatch) {
        if (first == n) {
            carma_err_set(err, "auto: %s has no command to estimate", prog);
            goto out;
        }
        *argv = copy_words(w, first, n);
        rc = *argv ? 0 : carma_err_set(err, "out of memory");
        goto out;
    }
    const char *wrap = find_wrap(w, first);
    if (wrap && first == n) {
        rc = split_wrap(wrap, argv, err);
    } else if (first == n) {
        carma_err_set(err, "auto: a batch script read from standard input cannot be "
                           "estimated; name the script or use --wrap");
    } else if (!is_python_script(w[first])) {
        carma_err_set(err, "auto: %s is not a Python script (#! line naming python): carma "
                           "estimates a Python training command; use sbatch --wrap='python3 "
                           "train.py ...' or give a size, e.g. from `carma estimate --run -- "
                           "python3 train.py`", w[first]);
    } else {
        *argv = copy_words(w, first, n);
        rc = *argv ? 0 : carma_err_set(err, "out of memory");
    }
out:
    free(w);
    free(buf);
    return rc;
}

/* Reads the child's stdout (at most ESTIMATE_OUT_MAX bytes) into buf, NUL-terminated. */
static int read_bounded(int fd, char *buf, size_t cap, size_t *len)
{
    *len = 0;
    for (;;) {
        ssize_t r = read(fd, buf + *len, cap - 1 - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        *len += (size_t)r;
        if (*len == cap - 1)
            return -1; /* more than an estimate's reply */
    }
    buf[*len] = '\0';
    return 0;
}

/* Runs `CARMA estimate --run --json -- CMD...` as this process's user and reads "mib". */
static int run_estimate(const cspank_conf *c, char **cmd, uint64_t *mib, carma_err *err)
{
    int ncmd = 0;
    while (cmd[ncmd])
        ncmd++;
    char **av = calloc((size_t)ncmd + 6, sizeof *av);
    if (!av)
        return carma_err_set(err, "out of memory");
    const char *fixed[] = {"carma", "estimate", "--run", "--json", "--"};
    for (int i = 0; i < 5; i++)
        av[i] = (char *)fixed[i];
    for (int i = 0; i < ncmd; i++)
        av[5 + i] = cmd[i];
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC)) {
        free(av);
        return carma_err_set(err, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        free(av);
        return carma_err_set(err, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        /* stdout is the reply; the script's own output and carma's errors stay on the
         * user's stderr, where they explain a failure. */
        if (dup2(pfd[1], STDOUT_FILENO) < 0)
            _exit(127);
        /* srun blocks and ignores signals of its own; the estimate (and the timeout it puts on
         * the user's script) needs the ordinary ones. */
        sig_reset_all();
        execv(c->carma, av);
        fprintf(stderr, "carma_spank: cannot run %s: %s\n", c->carma, strerror(errno));
        _exit(127);
    }
    free(av);
    close(pfd[1]);
    static char out[ESTIMATE_OUT_MAX];
    size_t len;
    int rd = read_bounded(pfd[0], out, sizeof out, &len);
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return carma_err_set(err, "waiting for carma estimate: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return carma_err_set(err, "auto: `%s estimate --run` failed (%s %d; its messages are "
                                  "above); give a size instead", c->carma,
                             WIFEXITED(status) ? "exit" : "signal",
                             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    if (rd)
        return carma_err_set(err, "auto: carma estimate's output is not its reply");
    json_error_t jerr;
    json_t *j = json_loads(out, 0, &jerr);
    json_t *m = json_object_get(j, "mib");
    json_int_t v = json_is_integer(m) ? json_integer_value(m) : -1;
    json_decref(j);
    if (v < 1 || (uint64_t)v > CSPANK_MAX_MIB)
        return carma_err_set(err, "auto: carma estimate gave no usable figure");
    *mib = (uint64_t)v;
    return 0;
}

int cspank_submit_mib(const cspank_conf *c, const char *value, uint64_t *mib, carma_err *err)
{
    if (strcmp(value, "auto")) {
        if (parse_size_mib(value, mib) || *mib < 1 || *mib > CSPANK_MAX_MIB)
            return carma_err_set(err, "not a GPU memory size (10G, 8000M) nor auto");
        return 0;
    }
    /* The estimate runs the user's script: never with root's rights (a root submission
     * would run whatever the script names as root, outside any job). */
    if (geteuid() == 0 || getuid() == 0)
        return carma_err_set(err, "auto: the estimate runs your training script, which carma "
                                  "does not do as root; submit as the job's user or give a size");
    char **cmd = NULL;
    if (cspank_job_command(&cmd, err))
        return -1;
    int rc = run_estimate(c, cmd, mib, err);
    cspank_free_argv(cmd);
    return rc;
}
