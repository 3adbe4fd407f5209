/* taskload.c — dispatch on the task file's extension (see taskload.h). */
#include "task/taskload.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "task/rad.h"
#include "task/taskfile.h"

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), m = strlen(ext);
    return n > m && !strcasecmp(path + n - m, ext);
}

/* A relative workdir is the task file's: DIR/workdir for the file DIR/NAME, so that a task
 * file and the scripts beside it run the same from wherever it is submitted. */
static int resolve_workdir(const char *path, task_spec *t, carma_err *err)
{
    if (!t->workdir || t->workdir[0] == '/')
        return 0;
    const char *slash = strrchr(path, '/');
    if (!slash)
        return 0; /* the file is in the current directory: so is its workdir */
    int dirlen = (int)(slash - path);
    size_t cap = (size_t)dirlen + strlen(t->workdir) + 2;
    char *joined = malloc(cap);
    if (!joined)
        return carma_err_set(err, "out of memory");
    snprintf(joined, cap, "%.*s/%s", dirlen, path, t->workdir);
    free(t->workdir);
    t->workdir = joined;
    return 0;
}

bool task_file_name(const char *path)
{
    return has_ext(path, ".rad") || has_ext(path, ".yaml") || has_ext(path, ".yml");
}

int task_load_file(const char *path, task_spec *out, carma_err *err)
{
    int rc;
    if (has_ext(path, ".rad"))
        rc = rad_load(path, out, err);
    else if (has_ext(path, ".yaml") || has_ext(path, ".yml"))
        rc = taskfile_load(path, out, err);
    else {
        task_spec_init(out);
        return carma_err_set(err,
                             "%s: unknown task file type (expected a CARMA .rad file or a "
                             ".yaml/.yml task file)",
                             path);
    }
    return rc ? rc : resolve_workdir(path, out, err);
}
