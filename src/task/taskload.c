/* taskload.c — dispatch on the task file's extension (see taskload.h). */
#include "task/taskload.h"

#include <strings.h>
#include <string.h>

#include "task/rad.h"
#include "task/taskfile.h"

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), m = strlen(ext);
    return n > m && !strcasecmp(path + n - m, ext);
}

int task_load_file(const char *path, task_spec *out, carma_err *err)
{
    if (has_ext(path, ".rad"))
        return rad_load(path, out, err);
    if (has_ext(path, ".yaml") || has_ext(path, ".yml"))
        return taskfile_load(path, out, err);
    task_spec_init(out);
    return carma_err_set(err,
                         "%s: unknown task file type (expected a CARMA .rad file or a .yaml/.yml "
                         "task file)",
                         path);
}
