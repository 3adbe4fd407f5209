/* fake_dcgm.c — a fake libdcgm.so.4 for tests of carma's DCGM reader: embedded mode or a
 * connection to a "host engine", one default group, field groups, watches, latest values through
 * the enumeration callback. It checks the call order a real host engine needs (init, start or
 * connect, group, field group, watch, read), and it calls back as DCGM's own
 * helperGetLatestValues does: once per value (numValues 1), GPU by GPU, field by field in the
 * field group's order, stopping when the callback returns nonzero. Status codes are
 * dcgm_structs.h's.
 *
 * $FAKE_DCGM_VALUES: GPUs separated by ';', each "gpuId:nvmlIndex:smact:smocc:drama:W:mJ",
 * "na" for a blank value (the field's blank sentinel is returned), e.g. "7:1:0.5:0.25:na:300:42".
 * $FAKE_DCGM_FAIL: the name of one entry point that returns an error.
 * $FAKE_DCGM_HOSTENGINE: the address a host engine answers at (dcgmConnect_v2's ipAddress, e.g.
 *     "127.0.0.1"); unset, no host engine answers (DCGM_ST_CONNECTION_NOT_VALID). Unset or
 *     changed while connected, the engine has stopped: every call on that connection fails with
 *     DCGM_ST_CONNECTION_NOT_VALID from then on, even once an engine answers there again.
 * $FAKE_DCGM_HOSTENGINE_AFTER=N: that host engine starts later: the first N dcgmConnect_v2
 *     calls to its address find none. The fake counts the variable down at each (it rewrites
 *     it), so the count goes on across a dlclose and a new dlopen of the library.
 * $FAKE_DCGM_PROF_LOCKED=1: watching a field group that holds a profiling field fails with
 *     DCGM_ST_PROFILING_LIBRARY_ERROR, as when another process holds the profiling counters, and,
 *     as nv-hostengine does, the whole field group is left unwatched.
 * Engines: the embedded one and the host engine each have their own group and field groups (a
 * handle sees only its engine's); dcgmStopEmbedded drops the embedded engine's, and
 * dcgmDisconnect this connection's (persistAfterDisconnect 0). Profiling counters are not
 * shared between engines: once the embedded engine has watched a profiling field, the host
 * engine's profiling watches fail the same way as under FAKE_DCGM_PROF_LOCKED until
 * dcgmStopEmbedded.
 * $FAKE_DCGM_NAMES_IN_USE: field-group names, separated by ',', other clients of the host engine
 *     already hold (connected mode only); DCGM refuses a duplicate with DCGM_ST_DUPLICATE_KEY.
 * $FAKE_DCGM_LOG: a file the fake appends one line per call to, for tests to inspect. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* dcgm_structs.h, dcgmReturn_enum */
#define ST_OK 0
#define ST_BADPARAM (-1)
#define ST_UNINITIALIZED (-10)
#define ST_VER_MISMATCH (-12)
#define ST_NOT_WATCHED (-16)
#define ST_CONNECTION_NOT_VALID (-21)
#define ST_MAX_LIMIT (-24)
#define ST_DUPLICATE_KEY (-26)
#define ST_PROFILING_NOT_SUPPORTED (-36)
#define ST_PROFILING_LIBRARY_ERROR (-37)
#define INT64_BLANK 0x7ffffffffffffff0LL
#define FP64_BLANK 140737488355328.0

#define EMBEDDED_HANDLE ((uintptr_t)0x5eed)
#define CONNECTED_HANDLE ((uintptr_t)0xc0ee)
#define GROUP_ID ((uintptr_t)11)
#define FIRST_FIELD_GROUP ((uintptr_t)22)
#define MAX_FIELD_GROUPS 4
#define MAX_FIELDS 16

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

/* dcgmConnectV2Params_v2 */
typedef struct connect_params {
    unsigned version, persistAfterDisconnect, timeoutMs, addressIsUnixSocket;
} connect_params;
#define CONNECT_PARAMS_V1 (8u | 1u << 24)
#define CONNECT_PARAMS_V2 ((unsigned)sizeof(connect_params) | 2u << 24)

typedef int (*enum_cb)(unsigned gpuId, field_value *values, int n, void *user);

typedef struct field_group {
    int used, watched, nfields;
    uintptr_t engine; /* EMBEDDED_HANDLE or CONNECTED_HANDLE */
    unsigned short fields[MAX_FIELDS];
    char name[256];
} field_group;

static int inited, started, connected, lost;
static uintptr_t group_engine; /* the engine holding the group; 0: none */
static int embedded_holds_prof; /* the embedded engine watched a profiling field */
static char connected_to[256];
static field_group fgs[MAX_FIELD_GROUPS];

static void log_call(const char *fmt, ...)
{
    const char *path = getenv("FAKE_DCGM_LOG");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

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

/* The host engine of this connection stopped: the connection is gone for good. */
static int connection_lost(uintptr_t h)
{
    if (!connected || h != CONNECTED_HANDLE)
        return 0;
    const char *he = getenv("FAKE_DCGM_HOSTENGINE");
    if (!he || strcmp(he, connected_to))
        lost = 1;
    return lost;
}

#define FAIL_IF_LOST(h)                                                                       \
    do {                                                                                      \
        if (connection_lost(h))                                                               \
            return ST_CONNECTION_NOT_VALID;                                                   \
    } while (0)

static int valid_handle(uintptr_t h)
{
    return (started && h == EMBEDDED_HANDLE) || (connected && h == CONNECTED_HANDLE);
}

/* Field group fg of the engine of handle h. */
static field_group *field_group_of(uintptr_t h, uintptr_t fg)
{
    if (fg < FIRST_FIELD_GROUP || fg >= FIRST_FIELD_GROUP + MAX_FIELD_GROUPS)
        return NULL;
    field_group *g = &fgs[fg - FIRST_FIELD_GROUP];
    return g->used && g->engine == h ? g : NULL;
}

/* An engine stopped or a connection went: what it held goes with it. */
static void drop_objects_of(uintptr_t engine)
{
    for (int i = 0; i < MAX_FIELD_GROUPS; i++)
        if (fgs[i].engine == engine)
            fgs[i].used = 0;
    if (group_engine == engine)
        group_engine = 0;
}

EXPORT const char *errorString(int rc)
{
    switch (rc) {
    case ST_PROFILING_NOT_SUPPORTED: return "Profiling is not supported for this group";
    case ST_PROFILING_LIBRARY_ERROR: return "The profiling library returned an unrecoverable error";
    case ST_NOT_WATCHED: return "Field is not being watched";
    case ST_CONNECTION_NOT_VALID: return "The connection to the host engine is not valid";
    case ST_DUPLICATE_KEY: return "Duplicate key";
    case ST_UNINITIALIZED: return "Uninitialized";
    default: return "fake DCGM error";
    }
}

EXPORT int dcgmInit(void)
{
    FAIL_IF_SCRIPTED();
    inited = 1;
    return ST_OK;
}

EXPORT int dcgmShutdown(void)
{
    log_call("dcgmShutdown");
    inited = started = connected = lost = embedded_holds_prof = 0;
    group_engine = 0;
    memset(fgs, 0, sizeof fgs);
    return ST_OK;
}

EXPORT int dcgmStartEmbedded(int mode, uintptr_t *h)
{
    FAIL_IF_SCRIPTED();
    if (!inited)
        return ST_UNINITIALIZED;
    if (mode != 1 && mode != 2)
        return ST_BADPARAM;
    log_call("dcgmStartEmbedded");
    started = 1;
    *h = EMBEDDED_HANDLE;
    return ST_OK;
}

EXPORT int dcgmStopEmbedded(uintptr_t h)
{
    if (!inited)
        return ST_UNINITIALIZED;
    if (h != EMBEDDED_HANDLE || !started)
        return ST_BADPARAM;
    log_call("dcgmStopEmbedded");
    started = 0;
    embedded_holds_prof = 0;
    drop_objects_of(EMBEDDED_HANDLE);
    return ST_OK;
}

EXPORT int dcgmConnect_v2(const char *address, connect_params *p, uintptr_t *h)
{
    FAIL_IF_SCRIPTED();
    if (!address || !*address || !p || !h)
        return ST_BADPARAM;
    if (!inited)
        return ST_UNINITIALIZED;
    if (p->version != CONNECT_PARAMS_V2 && p->version != CONNECT_PARAMS_V1)
        return ST_VER_MISMATCH;
    int v2 = p->version == CONNECT_PARAMS_V2;
    const char *he = getenv("FAKE_DCGM_HOSTENGINE");
    int answers = he && *he && !strcmp(he, address);
    const char *after = getenv("FAKE_DCGM_HOSTENGINE_AFTER");
    long not_yet = answers && after ? strtol(after, NULL, 10) : 0;
    if (not_yet > 0) { /* not started yet: one attempt fewer to go */
        char left[32];
        snprintf(left, sizeof left, "%ld", not_yet - 1);
        setenv("FAKE_DCGM_HOSTENGINE_AFTER", left, 1);
        answers = 0;
    }
    log_call("dcgmConnect_v2 %s persist=%u timeoutMs=%u unix=%u -> %s", address,
             p->persistAfterDisconnect, v2 ? p->timeoutMs : 0, v2 ? p->addressIsUnixSocket : 0,
             answers ? "connected" : "no host engine");
    if (!answers)
        return ST_CONNECTION_NOT_VALID;
    connected = 1;
    lost = 0;
    snprintf(connected_to, sizeof connected_to, "%s", address);
    *h = CONNECTED_HANDLE;
    return ST_OK;
}

EXPORT int dcgmDisconnect(uintptr_t h)
{
    if (!inited)
        return ST_UNINITIALIZED;
    if (h != CONNECTED_HANDLE || !connected)
        return ST_BADPARAM;
    log_call("dcgmDisconnect");
    connected = 0;
    drop_objects_of(CONNECTED_HANDLE);
    return ST_OK;
}

EXPORT int dcgmGroupCreate(uintptr_t h, int type, const char *name, uintptr_t *group)
{
    FAIL_IF_SCRIPTED();
    FAIL_IF_LOST(h);
    if (!valid_handle(h) || type != 0 || !name)
        return ST_BADPARAM;
    log_call("dcgmGroupCreate %s", name);
    group_engine = h;
    *group = GROUP_ID;
    return ST_OK;
}

EXPORT int dcgmGroupDestroy(uintptr_t h, uintptr_t group)
{
    FAIL_IF_LOST(h);
    if (!valid_handle(h) || group != GROUP_ID || group_engine != h)
        return ST_BADPARAM;
    log_call("dcgmGroupDestroy");
    group_engine = 0;
    return ST_OK;
}

/* Names are per engine; on a host engine other clients' field groups share one namespace with
 * ours. */
static int name_in_use(uintptr_t h, const char *name)
{
    for (int i = 0; i < MAX_FIELD_GROUPS; i++)
        if (fgs[i].used && fgs[i].engine == h && !strcmp(fgs[i].name, name))
            return 1;
    const char *others = h == CONNECTED_HANDLE ? getenv("FAKE_DCGM_NAMES_IN_USE") : NULL;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", others ? others : "");
    char *save = NULL;
    for (char *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save))
        if (!strcmp(n, name))
            return 1;
    return 0;
}

EXPORT int dcgmFieldGroupCreate(uintptr_t h, int n, unsigned short *ids, const char *name,
                                uintptr_t *fg)
{
    FAIL_IF_SCRIPTED();
    FAIL_IF_LOST(h);
    if (!valid_handle(h) || n < 1 || n > MAX_FIELDS || !ids || !name || !fg)
        return ST_BADPARAM;
    int dup = name_in_use(h, name);
    log_call("dcgmFieldGroupCreate %s n=%d%s", name, n, dup ? " -> duplicate" : "");
    if (dup)
        return ST_DUPLICATE_KEY;
    for (int i = 0; i < MAX_FIELD_GROUPS; i++) {
        field_group *g = &fgs[i];
        if (g->used)
            continue;
        memset(g, 0, sizeof *g);
        g->used = 1;
        g->engine = h;
        g->nfields = n;
        memcpy(g->fields, ids, (size_t)n * sizeof *ids);
        snprintf(g->name, sizeof g->name, "%s", name);
        *fg = FIRST_FIELD_GROUP + (uintptr_t)i;
        return ST_OK;
    }
    return ST_MAX_LIMIT;
}

EXPORT int dcgmFieldGroupDestroy(uintptr_t h, uintptr_t fg)
{
    FAIL_IF_LOST(h);
    field_group *g = field_group_of(h, fg);
    if (!valid_handle(h) || !g)
        return ST_BADPARAM;
    log_call("dcgmFieldGroupDestroy %s", g->name);
    g->used = 0;
    return ST_OK;
}

/* dcgm_fields.h: the profiling (DCP) fields are numbered from 1001 */
static int is_profiling_field(unsigned short id)
{
    return id >= 1001 && id < 1100;
}

EXPORT int dcgmWatchFields(uintptr_t h, uintptr_t group, uintptr_t fg, long long freq_us,
                           double keep_s, int keep_samples)
{
    FAIL_IF_SCRIPTED();
    FAIL_IF_LOST(h);
    field_group *g = field_group_of(h, fg);
    if (!valid_handle(h) || group != GROUP_ID || group_engine != h || !g || freq_us <= 0 ||
        keep_s <= 0 || keep_samples < 1)
        return ST_BADPARAM;
    const char *locked = getenv("FAKE_DCGM_PROF_LOCKED");
    int prof = 0;
    for (int i = 0; i < g->nfields; i++)
        prof |= is_profiling_field(g->fields[i]);
    int fails = prof && locked && !strcmp(locked, "1");
    int held = prof && !fails && h == CONNECTED_HANDLE && embedded_holds_prof;
    log_call("dcgmWatchFields %s%s", g->name,
             fails  ? " -> profiling locked"
             : held ? " -> profiling held by the embedded engine"
                    : "");
    if (fails || held)
        return ST_PROFILING_LIBRARY_ERROR; /* and every watch of this field group is undone */
    g->watched = 1;
    if (prof && h == EMBEDDED_HANDLE)
        embedded_holds_prof = 1;
    return ST_OK;
}

static void set_value(field_value *v, unsigned short id, const char *text, int watched)
{
    memset(v, 0, sizeof *v);
    v->version = (unsigned)sizeof *v | 1u << 24;
    v->fieldId = id;
    v->status = watched ? ST_OK : ST_NOT_WATCHED;
    int is_int = id == 52 || id == 156;
    v->fieldType = is_int ? 'i' : 'd';
    int na = !watched || !text || !strcmp(text, "na");
    if (is_int)
        v->value.i64 = na ? INT64_BLANK : strtoll(text, NULL, 10);
    else
        v->value.dbl = na ? FP64_BLANK : strtod(text, NULL);
}

EXPORT int dcgmGetLatestValues(uintptr_t h, uintptr_t group, uintptr_t fg, enum_cb cb, void *user)
{
    FAIL_IF_SCRIPTED();
    FAIL_IF_LOST(h);
    field_group *g = field_group_of(h, fg);
    if (!valid_handle(h) || group != GROUP_ID || group_engine != h || !g || !cb)
        return ST_BADPARAM;
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
        for (int i = 0; i < g->nfields; i++) {
            unsigned short id = g->fields[i];
            const char *text = id == 52     ? part[1]
                               : id == 1002 ? part[2]
                               : id == 1003 ? part[3]
                               : id == 1005 ? part[4]
                               : id == 155  ? part[5]
                               : id == 156  ? part[6]
                                            : NULL;
            field_value v;
            set_value(&v, id, text, g->watched); /* per value, as DCGM reports NOT_WATCHED */
            if (cb((unsigned)strtoul(part[0], NULL, 10), &v, 1, user))
                return ST_OK; /* the caller asked to stop: DCGM still reports success */
        }
    }
    return ST_OK;
}
