/* gnuplot_run.c — `carma simulate --plot` on disk: writes the data files and scripts into the
 * plot directory's private staging directory (util/safefs.h) and runs gnuplot on each script
 * there (fork + execv, no shell) for the PNGs, which sim_plot_render then moves into place. */
#include "sim/gnuplot_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PLOT_ERR_TAIL 2048 /* bytes of gnuplot's stderr kept for the error message */

static int path_in_dir(char *out, size_t size, const char *dir, const char *name,
                       carma_err *err)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size)
        return carma_err_set(err, "--plot %s: path too long", dir);
    return 0;
}

/* The first executable `prog` on PATH, as an absolute path (gnuplot runs in DIR). */
int find_in_path(const char *prog, char *out, size_t size)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *s = path;;) {
        const char *e = strchr(s, ':');
        int n = e ? (int)(e - s) : (int)strlen(s);
        char cand[PLOT_PATH_MAX];
        int w = snprintf(cand, sizeof cand, "%.*s%s%s", n, s, n ? "/" : "", prog);
        struct stat st;
        if (w > 0 && (size_t)w < sizeof cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
            access(cand, X_OK) == 0 && realpath(cand, out) && strlen(out) < size)
            return 0;
        if (!e)
            return -1;
        s = e + 1;
    }
}

int write_file(safefs_stage *st, const plot_file *pf, carma_err *err)
{
    FILE *f = safefs_stage_fopen(st, pf->name, err);
    if (!f)
        return -1;
    errno = 0;
    int e = fwrite(pf->text, 1, pf->len, f) != pf->len || ferror(f) ? (errno ? errno : EIO) : 0;
    if (!e && (fflush(f) || fsync(fileno(f)))) /* on disk before the commit */
        e = errno ? errno : EIO;
    if (fclose(f) && !e)
        e = errno ? errno : EIO;
    if (e) /* a full disk, a file size limit: said */
        return carma_err_set(err, "%s/%s: write failed: %s", st->path, pf->name, strerror(e));
    return 0;
}

/* The last non-empty line of gnuplot's stderr, for the error message. */
static const char *last_line(char *text)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
        text[--n] = '\0';
    char *nl = strrchr(text, '\n');
    return nl ? nl + 1 : text;
}

/* Runs `gnuplot SCRIPT` in the staging directory: the script and its data were written there,
 * where nobody else can swap them, and the image it draws lands there. */
int run_gnuplot(const sim_plot *p, safefs_stage *st, const plot_image *im, carma_err *err)
{
    char script[PLOT_PATH_MAX]; /* for messages: where the script will be */
    if (path_in_dir(script, sizeof script, p->dir, im->script, err))
        return -1;
    const char *gnuplot = p->gnuplot;
    char *argv[] = {(char *)gnuplot, (char *)im->script, NULL};
    int errp[2] = {-1, -1}, report[2] = {-1, -1};
    if (pipe2(errp, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
        carma_err_set(err, "cannot run gnuplot on %s: %s", script, strerror(errno));
        goto fail;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        carma_err_set(err, "cannot run gnuplot on %s: %s", script, strerror(errno));
        goto fail;
    }
    if (pid == 0) { /* child: stdin/stdout on /dev/null, stderr to the pipe, in the stage */
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
        }
        dup2(errp[1], STDERR_FILENO);
        if (fchdir(st->fd) == 0)
            execv(gnuplot, argv);
        int e = errno;
        ssize_t w = write(report[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(errp[1]);
    close(report[1]);
    errp[1] = report[1] = -1;
    char tail[PLOT_ERR_TAIL + 1];
    size_t ntail = 0;
    for (;;) {
        char chunk[PLOT_ERR_TAIL / 2];
        ssize_t got = read(errp[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t g = (size_t)got;
        if (ntail + g > PLOT_ERR_TAIL) { /* keep the newest bytes */
            size_t drop = ntail + g - PLOT_ERR_TAIL;
            memmove(tail, tail + drop, ntail - drop);
            ntail -= drop;
        }
        memcpy(tail + ntail, chunk, g);
        ntail += g;
    }
    tail[ntail] = '\0';
    int exec_errno = 0;
    ssize_t rep;
    while ((rep = read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    struct stat sb;
    if (rep == (ssize_t)sizeof exec_errno) {
        if (exec_errno == ENOENT)
            carma_err_set(err, NEEDS_GNUPLOT);
        else
            carma_err_set(err, "cannot run %s in %s: %s", gnuplot, p->dir, strerror(exec_errno));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const char *why = last_line(tail);
        carma_err_set(err, "gnuplot failed on %s (%s %d)%s%s", script,
                      WIFEXITED(status) ? "exit status" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                      *why ? ": " : "", why);
    } else if (fstatat(st->fd, im->png, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISREG(sb.st_mode) ||
               sb.st_size == 0) {
        carma_err_set(err, "gnuplot wrote no image for %s", script);
    } else {
        close(errp[0]);
        close(report[0]);
        return 0;
    }
fail:
    for (int i = 0; i < 2; i++) {
        if (errp[i] >= 0)
            close(errp[i]);
        if (report[i] >= 0)
            close(report[i]);
    }
    return -1; /* what gnuplot left in the stage goes with it */
}
