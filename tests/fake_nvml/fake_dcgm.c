/* fake_dcgm.c — a fake libdcgm.so.4 for tests of carma's DCGM reader: embedded mode, one default
 * group, one field group, watches, latest values through the enumeration callback. It checks the
 * call order a real host engine needs (init, start, group, field group, watch, read), and it
 * calls back as DCGM's own helperGetLatestValues does: once per value (numValues 1), GPU by GPU,
 * field by field in the field group's order, stopping when the callback returns nonzero.
 *
 * $FAKE_DCGM_VALUES: GPUs separated by ';', each "gpuId:nvmlIndex:smact:smocc:drama:W:mJ",
 * "na" for a blank value (the field's blank sentinel is returned), e.g. "7:1:0.5:0.25:na:300:42".
 * $FAKE_DCGM_FAIL: the name of one entry point that returns an error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#define ST_OK 0
#define ST_BADPARAM (-1)
#define ST_UNINITIALIZED (-3)
#define ST_NOT_WATCHED (-15)
#define ST_PROFILING_NOT_SUPPORTED (-36)
#define INT64_BLANK 0x7ffffffffffffff0LL
#define FP64_BLANK 140737488355328.0

typedef struct field_value {
    unsigned version;
    unsigned short fieldId, fieldType;
    int status;
    int64_t ts;
    union {
        int64_t i64;
        double dbl;
        char str[256];
        char blob[4096];
    } value;
} field_value;

typedef int (*enum_cb)(unsigned gpuId, field_value *values, int n, void *user);

static int inited, started, have_group, watching;
static unsigned short fields[16];
static int nfields;

static int failing(const char *fn)
{
    const char *f = getenv("FAKE_DCGM_FAIL");
    return f && !strcmp(f, fn);
}

#define FAIL_IF_SCRIPTED()                                                                    \
    do {                                                                                      \
        if (failing(__func__))                                                                \
            return ST_PROFILING_NOT_SUPPORTED;                                                \
    } while (0)

EXPORT const char *errorString(int rc)
{
    return rc == ST_PROFILING_NOT_SUPPORTED ? "Profiling is not supported for this group"
         : rc == ST_NOT_WATCHED ? "Field is not being watched" : "fake DCGM error";
}

EXPORT int dcgmInit(void)
{
    FAIL_IF_SCRIPTED();
    inited = 1;
    return ST_OK;
}

EXPORT int dcgmShutdown(void)
{
    inited = started = have_group = watching = 0;
    return ST_OK;
}

EXPORT int dcgmStartEmbedded(int mode, uintptr_t *h)
{
    FAIL_IF_SCRIPTED();
    if (!inited)
        return ST_UNINITIALIZED;
    if (mode != 1 && mode != 2)
        return ST_BADPARAM;
    started = 1;
    *h = 0x5eed;
    return ST_OK;
}

EXPORT int dcgmStopEmbedded(uintptr_t h)
{
    if (h != 0x5eed || !started)
        return ST_BADPARAM;
    started = 0;
    return ST_OK;
}

EXPORT int dcgmGroupCreate(uintptr_t h, int type, const char *name, uintptr_t *group)
{
    FAIL_IF_SCRIPTED();
    if (h != 0x5eed || !started || type != 0 || !name)
        return ST_BADPARAM;
    have_group = 1;
    *group = 11;
    return ST_OK;
}

EXPORT int dcgmGroupDestroy(uintptr_t h, uintptr_t group)
{
    (void)h;
    return group == 11 ? (have_group = 0, ST_OK) : ST_BADPARAM;
}

EXPORT int dcgmFieldGroupCreate(uintptr_t h, int n, unsigned short *ids, const char *name,
                                uintptr_t *fg)
{
    FAIL_IF_SCRIPTED();
    if (h != 0x5eed || n < 1 || n > 16 || !ids || !name)
        return ST_BADPARAM;
    memcpy(fields, ids, (size_t)n * sizeof *ids);
    nfields = n;
    *fg = 22;
    return ST_OK;
}

EXPORT int dcgmFieldGroupDestroy(uintptr_t h, uintptr_t fg)
{
    (void)h;
    return fg == 22 ? (nfields = 0, ST_OK) : ST_BADPARAM;
}

EXPORT int dcgmWatchFields(uintptr_t h, uintptr_t group, uintptr_t fg, long long freq_us,
                           double keep_s, int keep_samples)
{
    FAIL_IF_SCRIPTED();
    if (h != 0x5eed || group != 11 || fg != 22 || freq_us <= 0 || keep_s <= 0 || keep_samples < 1)
        return ST_BADPARAM;
    watching = 1;
    return ST_OK;
}

static void set_value(field_value *v, unsigned short id, const char *text)
{
    memset(v, 0, sizeof *v);
    v->version = (unsigned)sizeof *v | 1u << 24;
    v->fieldId = id;
    int is_int = id == 52 || id == 156;
    v->fieldType = is_int ? 'i' : 'd';
    int na = !text || !strcmp(text, "na");
    if (is_int)
        v->value.i64 = na ? INT64_BLANK : strtoll(text, NULL, 10);
    else
        v->value.dbl = na ? FP64_BLANK : strtod(text, NULL);
}

EXPORT int dcgmGetLatestValues(uintptr_t h, uintptr_t group, uintptr_t fg, enum_cb cb, void *user)
{
    FAIL_IF_SCRIPTED();
    if (h != 0x5eed || group != 11 || fg != 22 || !cb)
        return ST_BADPARAM;
    if (!watching)
        return ST_NOT_WATCHED;
    const char *spec = getenv("FAKE_DCGM_VALUES");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "");
    char *save = NULL;
    for (char *gpu = strtok_r(buf, ";", &save); gpu; gpu = strtok_r(NULL, ";", &save)) {
        char *part[7] = {0}, *s2 = NULL;
        int k = 0;
        for (char *p = strtok_r(gpu, ":", &s2); p && k < 7; p = strtok_r(NULL, ":", &s2))
            part[k++] = p;
        if (k != 7)
            continue;
        for (int i = 0; i < nfields; i++) {
            const char *text = fields[i] == 52     ? part[1]
                               : fields[i] == 1002 ? part[2]
                               : fields[i] == 1003 ? part[3]
                               : fields[i] == 1005 ? part[4]
                               : fields[i] == 155  ? part[5]
                               : fields[i] == 156  ? part[6]
                                                   : NULL;
            field_value v;
            set_value(&v, fields[i], text);
            if (cb((unsigned)strtoul(part[0], NULL, 10), &v, 1, user))
                return ST_OK; /* the caller asked to stop: DCGM still reports success */
        }
    }
    return ST_OK;
}
