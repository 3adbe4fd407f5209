/* dcgm.c — DCGM through dlopen: the node's nv-hostengine, else an embedded one (see dcgm.h). */
#include "gpu/dcgm.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "gpu/dcgm_api.h"
#include "util/clock.h"
#include "util/rng.h"
#include "util/strutil.h"

/* "carma-" HOST "-" PID "-" NONCE "-prof" and the NUL fit in DCGM_NAME_CAP, and that in DCGM's
 * names (dcgm.h) */
_Static_assert(6 + DCGM_NAME_HOST_MAX + 1 + 20 + 1 + 16 + 5 + 1 <= DCGM_NAME_CAP,
               "carma's DCGM names fit their buffer");
_Static_assert(DCGM_NAME_CAP <= DCGM_MAX_STR_LENGTH, "DCGM keeps names in DCGM_MAX_STR_LENGTH");

/* One field group and its watch. */
typedef struct dcgm_watch {
    dcgmFieldGrp_t fg;
    bool created, watched;
} dcgm_watch;

struct dcgm_reader {
    void *dl;
    char path[256];
    /* connected: d->h is a connection to the host engine; started: d->h is this process's
     * embedded engine; never both */
    bool inited, connected, started, have_group;
    dcgmHandle_t h;
    dcgmGpuGrp_t group;
    /* NVML index, power and energy apart from the profiling fields: a host engine undoes the
     * whole watch of a field group when its profiling part fails (another process holds the
     * profiling counters), and power and energy must survive that. */
    dcgm_watch base, prof;
    char address[256];    /* the host engine's, as configured: "127.0.0.1", "unix://PATH" */
    double next_probe;    /* embedded: clock_mono_s() from which a host engine is looked for */
    bool refusal_logged;  /* a host engine answered a probe and refused: said once */
    char name[DCGM_NAME_CAP], prof_name[DCGM_NAME_CAP];
    char status[DCGM_STATUS_MAX];
    dcgm_init_fn init, shutdown;
    dcgm_start_embedded_fn start_embedded;
    dcgm_stop_embedded_fn stop_embedded;
    dcgm_connect_v2_fn connect_v2;
    dcgm_disconnect_fn disconnect;
    dcgm_group_create_fn group_create;
    dcgm_group_destroy_fn group_destroy;
    dcgm_field_group_create_fn field_group_create;
    dcgm_field_group_destroy_fn field_group_destroy;
    dcgm_watch_fields_fn watch_fields;
    dcgm_get_latest_values_fn get_latest_values;
    dcgm_error_string_fn error_string;
};

static const char *const default_libraries[] = {"libdcgm.so.4", "libdcgm.so.3", NULL};

static dcgm_log_fn log_fn;

void dcgm_set_log(dcgm_log_fn log)
{
    log_fn = log;
}

static void dcgm_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void dcgm_log(const char *fmt, ...)
{
    if (!log_fn)
        return;
    char msg[DCGM_STATUS_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(msg);
}

static const char *dcgm_strerror(const dcgm_reader *d, dcgmReturn_t rc)
{
    const char *s = d->error_string ? d->error_string(rc) : NULL;
    if (s)
        return s;
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "DCGM error %d", rc);
    return buf;
}

/* Loads the first library that opens; the error lists every one tried. */
static int load_library(dcgm_reader *d, carma_err *err)
{
    const char *env = getenv(DCGM_LIBRARY_ENV);
    const char *const only_env[] = {env, NULL};
    const char *const *names = env && *env ? only_env : default_libraries;
    if (names == only_env && library_path_check(env, err))
        return carma_err_prefix(err, "cannot load DCGM ($%s)", DCGM_LIBRARY_ENV);
    char why[CARMA_ERR_MAX] = "";
    for (int i = 0; names[i]; i++) {
        d->dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (d->dl) {
            snprintf(d->path, sizeof d->path, "%s", names[i]);
            return 0;
        }
        const char *e = dlerror();
        size_t used = strlen(why);
        snprintf(why + used, sizeof why - used, "%s%s", used ? "; " : "", e ? e : names[i]);
    }
    return carma_err_set(err, "cannot load DCGM (%s)", why);
}

#define RESOLVE(field, sym)                                                                   \
    do {                                                                                      \
        void *p_ = dlsym(d->dl, sym);                                                         \
        memcpy(&d->field, &p_, sizeof d->field);                                              \
        if (!p_ && !missing)                                                                  \
            missing = sym;                                                                    \
    } while (0)

static int resolve(dcgm_reader *d, carma_err *err)
{
    const char *missing = NULL;
    RESOLVE(init, "dcgmInit");
    RESOLVE(shutdown, "dcgmShutdown");
    RESOLVE(start_embedded, "dcgmStartEmbedded");
    RESOLVE(stop_embedded, "dcgmStopEmbedded");
    RESOLVE(connect_v2, "dcgmConnect_v2");
    RESOLVE(disconnect, "dcgmDisconnect");
    RESOLVE(group_create, "dcgmGroupCreate");
    RESOLVE(group_destroy, "dcgmGroupDestroy");
    RESOLVE(field_group_create, "dcgmFieldGroupCreate");
    RESOLVE(field_group_destroy, "dcgmFieldGroupDestroy");
    RESOLVE(watch_fields, "dcgmWatchFields");
    RESOLVE(get_latest_values, "dcgmGetLatestValues");
    const char *optional_missing = missing;
    missing = NULL;
    RESOLVE(error_string, "errorString");
    if (optional_missing)
        return carma_err_set(err, "DCGM library %s lacks %s", d->path, optional_missing);
    return 0;
}

/* Creates the field group `name` of `ids` and watches it on every GPU: every second, keeping a
 * few samples (the daemon reads about that often). */
static int watch_fields(dcgm_reader *d, dcgm_watch *w, const unsigned short *ids, int n,
                        const char *name, carma_err *err)
{
    dcgmReturn_t rc = d->field_group_create(d->h, n, ids, name, &w->fg);
    if (rc != DCGM_ST_OK)
        return carma_err_set(err, "dcgmFieldGroupCreate failed in %s: %s", d->path,
                             dcgm_strerror(d, rc));
    w->created = true;
    rc = d->watch_fields(d->h, d->group, w->fg, 1000000LL, 10.0, 4);
    if (rc != DCGM_ST_OK)
        return carma_err_set(err, "dcgmWatchFields failed in %s: %s", d->path,
                             dcgm_strerror(d, rc));
    w->watched = true;
    return 0;
}

/* carma's group and its two watched field groups on the engine of d->h. A failed profiling
 * watch is no failure: *prof_note says why, empty when they are watched. What was created is
 * marked in d for tear_down_watches, also after a failure. */
static int set_up_watches(dcgm_reader *d, char *prof_note, size_t cap, carma_err *err)
{
    prof_note[0] = '\0';
    dcgmReturn_t rc = d->group_create(d->h, DCGM_GROUP_DEFAULT, d->name, &d->group);
    if (rc != DCGM_ST_OK)
        return carma_err_set(err, "dcgmGroupCreate failed in %s: %s", d->path,
                             dcgm_strerror(d, rc));
    d->have_group = true;
    static const unsigned short base[] = {DCGM_FI_DEV_NVML_INDEX, DCGM_FI_DEV_POWER_USAGE,
                                          DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION};
    static const unsigned short prof[] = {DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_SM_OCCUPANCY,
                                          DCGM_FI_PROF_DRAM_ACTIVE};
    if (watch_fields(d, &d->base, base, 3, d->name, err))
        return -1;
    carma_err perr;
    if (watch_fields(d, &d->prof, prof, 3, d->prof_name, &perr))
        snprintf(prof_note, cap,
                 "; profiling fields not watched (%s): SM activity unknown without GPM", perr.msg);
    return 0;
}

/* Undoes set_up_watches on the engine of d->h. */
static void tear_down_watches(dcgm_reader *d)
{
    if (d->prof.created)
        d->field_group_destroy(d->h, d->prof.fg);
    if (d->base.created)
        d->field_group_destroy(d->h, d->base.fg);
    if (d->have_group)
        d->group_destroy(d->h, d->group);
    d->prof = d->base = (dcgm_watch){0, false, false};
    d->have_group = false;
}

void dcgm_object_name(char out[DCGM_NAME_CAP], const char *host, long pid, uint64_t nonce)
{
    char h[DCGM_NAME_HOST_MAX + 1];
    size_t n = 0;
    for (; host && host[n] && n < DCGM_NAME_HOST_MAX; n++) {
        char c = host[n];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '-' || c == '_';
        h[n] = plain ? c : '_';
    }
    h[n] = '\0';
    snprintf(out, DCGM_NAME_CAP, "carma-%s-%ld-%016llx", n ? h : "unknown", pid,
             (unsigned long long)nonce);
}

/* 64 random bits; from the clocks where the kernel gives none, which still differ between two
 * daemons started apart. */
static uint64_t name_nonce(void)
{
    uint64_t x;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) == (ssize_t)sizeof x)
        return x;
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    uint64_t state = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    state ^= ((uint64_t)mono.tv_nsec << 32) ^ (uint64_t)getpid();
    return rng_next(&state);
}

/* dcgmConnect_v2 to d->address, waiting at most timeout_ms. persistAfterDisconnect 0: what
 * carma set up goes away with its connection, even if carma dies. */
static dcgmReturn_t connect_hostengine(dcgm_reader *d, unsigned timeout_ms, dcgmHandle_t *h)
{
    size_t prefix = strlen(DCGM_UNIX_SOCKET_PREFIX);
    bool unix_socket = !strncmp(d->address, DCGM_UNIX_SOCKET_PREFIX, prefix);
    dcgmConnectV2Params_v2 params = {dcgmConnectV2Params_version2, 0, timeout_ms, unix_socket};
    return d->connect_v2(unix_socket ? d->address + prefix : d->address, &params, h);
}

/* Connects to the node's host engine ($CARMA_DCGM_HOSTENGINE, else nv-hostengine's default
 * address), else starts one embedded in this process when none answers. NVIDIA supports one
 * host engine per node, and the profiling counters cannot be shared between processes: next to
 * nvidia-dcgm or dcgm-exporter an embedded engine's profiling watch fails. `mode` gets which
 * was used, for dcgm_reader_status. */
static int start_host_engine(dcgm_reader *d, char *mode, size_t cap, carma_err *err)
{
    /* the timeout is short because DCGM keeps retrying a refused connection until it ends (0
     * would mean 5 s) and a local host engine answers at once */
    dcgmReturn_t rc = connect_hostengine(d, DCGM_CONNECT_TIMEOUT_MS, &d->h);
    if (rc == DCGM_ST_OK) {
        d->connected = true;
        snprintf(mode, cap, "DCGM via nv-hostengine at %s", d->address);
        return 0;
    }
    if (rc != DCGM_ST_CONNECTION_NOT_VALID) /* a host engine answered, and refused */
        return carma_err_set(err, "dcgmConnect_v2 to %s failed in %s: %s", d->address, d->path,
                             dcgm_strerror(d, rc));
    rc = d->start_embedded(DCGM_OPERATION_MODE_AUTO, &d->h);
    if (rc != DCGM_ST_OK)
        return carma_err_set(err, "no nv-hostengine at %s, and dcgmStartEmbedded failed in %s: %s",
                             d->address, d->path, dcgm_strerror(d, rc));
    d->started = true;
    d->next_probe = clock_mono_s() + DCGM_RETRY_S;
    snprintf(mode, cap, "DCGM embedded (no nv-hostengine at %s)", d->address);
    return 0;
}

int dcgm_reader_open(dcgm_reader **out, carma_err *err)
{
    *out = NULL;
    dcgm_reader *d = calloc(1, sizeof *d);
    if (!d)
        return carma_err_set(err, "out of memory");
    const char *env = getenv(DCGM_HOSTENGINE_ENV);
    const char *address = env && *env ? env : DCGM_HOSTENGINE_ADDRESS;
    if (strlen(address) >= sizeof d->address) {
        free(d);
        return carma_err_set(err, "$%s is longer than %zu characters", DCGM_HOSTENGINE_ENV,
                             sizeof d->address - 1);
    }
    snprintf(d->address, sizeof d->address, "%s", address);
    /* A host engine is shared: other clients' field groups, other carmas' among them (in other
     * containers too), live in the same namespace, and dcgmFieldGroupCreate refuses a name in
     * use (dcgm.h, DCGM_NAME_CAP). The same names serve on the host engine after a move. */
    char host[256] = "";
    if (gethostname(host, sizeof host))
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    dcgm_object_name(d->name, host, (long)getpid(), name_nonce());
    size_t len = strlen(d->name); /* at most 108 (dcgm_object_name): "-prof" fits */
    memcpy(d->prof_name, d->name, len);
    memcpy(d->prof_name + len, "-prof", sizeof "-prof");
    if (load_library(d, err) || resolve(d, err)) {
        dcgm_reader_close(d);
        return -1;
    }
    dcgmReturn_t rc = d->init();
    if (rc != DCGM_ST_OK) {
        carma_err_set(err, "dcgmInit failed in %s: %s", d->path, dcgm_strerror(d, rc));
        dcgm_reader_close(d);
        return -1;
    }
    d->inited = true;
    char mode[sizeof d->address + 64], prof_note[CARMA_ERR_MAX + 96]; /* the address fits */
    if (start_host_engine(d, mode, sizeof mode, err) ||
        set_up_watches(d, prof_note, sizeof prof_note, err)) {
        dcgm_reader_close(d);
        return -1;
    }
    snprintf(d->status, sizeof d->status, "%s%s", mode, prof_note);
    *out = d;
    return 0;
}

/* On the embedded engine, once DCGM_RETRY_S has passed: does a host engine answer at
 * d->address now (nvidia-dcgm or dcgm-exporter started after carma, as after a reboot)? NVIDIA
 * supports one host engine per node and the profiling counters are not shared between engines,
 * so carma moves over: it removes its watches from the embedded engine, stops it
 * (dcgmStopEmbedded, which frees the counters), and sets its watches up again on the connection.
 * Returns 0 when carma stays on the embedded engine, and its readings go on: no host engine
 * answers (DCGM_ST_CONNECTION_NOT_VALID), or one answers and refuses the connection (said once
 * in the log; tried again each DCGM_RETRY_S). Returns 1 when it moved: this sample reads
 * nothing (the new watches have no sample yet), the next ones read the host engine. Returns -1
 * when it moved but the group or the base watch could not be set up on the host engine: the
 * reader is then connected to the host engine with its embedded engine stopped and its watches
 * partly set up, reads nothing, and is left for dcgm_reader_close, as after any failed read (the
 * nvml backend closes it, keeps DCGM's readings unknown, and opens DCGM again DCGM_RETRY_S
 * later, which connects to the host engine when it still answers). The probe waits
 * DCGM_PROBE_TIMEOUT_MS at most. */
static int move_when_hostengine_answers(dcgm_reader *d, double now, carma_err *err)
{
    d->next_probe = now + DCGM_RETRY_S;
    dcgmHandle_t he;
    dcgmReturn_t rc = connect_hostengine(d, DCGM_PROBE_TIMEOUT_MS, &he);
    if (rc == DCGM_ST_CONNECTION_NOT_VALID)
        return 0;
    if (rc != DCGM_ST_OK) {
        if (!d->refusal_logged)
            dcgm_log("DCGM: nv-hostengine at %s answers but refused carma's connection (%s); "
                     "staying on the embedded engine, trying again every %.0f s",
                     d->address, dcgm_strerror(d, rc), DCGM_RETRY_S);
        d->refusal_logged = true;
        return 0;
    }
    tear_down_watches(d);
    d->stop_embedded(d->h);
    d->started = false;
    d->h = he;
    d->connected = true;
    char prof_note[CARMA_ERR_MAX + 96];
    carma_err serr;
    if (set_up_watches(d, prof_note, sizeof prof_note, &serr)) {
        dcgm_log("DCGM: nv-hostengine at %s now answers; moved from the embedded engine, but %s: "
                 "DCGM readings unknown, trying again in %.0f s",
                 d->address, serr.msg, DCGM_RETRY_S);
        return carma_err_set(err, "nv-hostengine at %s now answers; moved from the embedded "
                             "engine, but %s", d->address, serr.msg);
    }
    snprintf(d->status, sizeof d->status,
             "DCGM via nv-hostengine at %s (moved from the embedded engine)%s", d->address,
             prof_note);
    dcgm_log("DCGM: nv-hostengine at %s now answers; moved from the embedded engine%s",
             d->address, prof_note);
    return 1;
}

const char *dcgm_reader_status(const dcgm_reader *d)
{
    return d->status;
}

void dcgm_reader_close(dcgm_reader *d)
{
    if (!d)
        return;
    tear_down_watches(d);
    if (d->connected)
        d->disconnect(d->h);
    if (d->started)
        d->stop_embedded(d->h);
    if (d->inited)
        d->shutdown();
    if (d->dl)
        dlclose(d->dl);
    free(d);
}

/* One field value as a double, NaN when blank, failed or of an unexpected type. */
static double field_double(const dcgmFieldValue_v1 *v)
{
    if (v->status != DCGM_ST_OK)
        return NAN;
    if (v->fieldType == DCGM_FT_DOUBLE)
        return v->value.dbl >= DCGM_FP64_BLANK ? NAN : v->value.dbl;
    if (v->fieldType == DCGM_FT_INT64)
        return v->value.i64 >= DCGM_INT64_BLANK ? NAN : (double)v->value.i64;
    return NAN;
}

/* Real DCGM calls the enumeration callback once per value (numValues is 1, entity by entity,
 * field by field; dcgm_structs.h: "invoked one or more times per field ... it is up to the
 * callee to detect when the field id changes"), so values are gathered per DCGM GPU id across
 * calls and only mapped to NVML indices once the enumeration is over. */
typedef struct dcgm_entity_values {
    bool seen;
    double idx, smact, smocc, drama, power, energy;
} dcgm_entity_values;

typedef struct collect_ctx {
    dcgm_entity_values by_id[DCGM_MAX_NUM_DEVICES];
} collect_ctx;

static int collect_value(unsigned int gpu_id, dcgmFieldValue_v1 *values, int nvalues, void *user)
{
    collect_ctx *c = user;
    if (gpu_id >= DCGM_MAX_NUM_DEVICES)
        return 0; /* not a GPU id DCGM hands out: skip it, keep enumerating */
    dcgm_entity_values *e = &c->by_id[gpu_id];
    e->seen = true;
    for (int i = 0; i < nvalues; i++) {
        double x = field_double(&values[i]);
        switch (values[i].fieldId) {
        case DCGM_FI_DEV_NVML_INDEX: e->idx = x; break;
        case DCGM_FI_PROF_SM_ACTIVE: e->smact = x; break;
        case DCGM_FI_PROF_SM_OCCUPANCY: e->smocc = x; break;
        case DCGM_FI_PROF_DRAM_ACTIVE: e->drama = x; break;
        case DCGM_FI_DEV_POWER_USAGE: e->power = x; break;
        case DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION: e->energy = x; break;
        default: break;
        }
    }
    return 0;
}

int dcgm_reader_read(dcgm_reader *d, dcgm_gpu_values *vals, int n, carma_err *err)
{
    for (int i = 0; i < n; i++)
        vals[i] = (dcgm_gpu_values){false, NAN, NAN, NAN, NAN, NAN};
    collect_ctx c;
    for (int id = 0; id < DCGM_MAX_NUM_DEVICES; id++)
        c.by_id[id] = (dcgm_entity_values){false, NAN, NAN, NAN, NAN, NAN, NAN};
    if (d->started) {
        double now = clock_mono_s();
        if (now >= d->next_probe) {
            int moved = move_when_hostengine_answers(d, now, err);
            if (moved)
                return moved < 0 ? -1 : 0; /* unknown during the move, never zero */
        }
    }
    dcgmReturn_t rc = d->get_latest_values(d->h, d->group, d->base.fg, collect_value, &c);
    if (rc == DCGM_ST_OK && d->prof.watched)
        rc = d->get_latest_values(d->h, d->group, d->prof.fg, collect_value, &c);
    if (rc != DCGM_ST_OK)
        return carma_err_set(err, "dcgmGetLatestValues failed: %s", dcgm_strerror(d, rc));
    for (int id = 0; id < DCGM_MAX_NUM_DEVICES; id++) {
        const dcgm_entity_values *e = &c.by_id[id];
        if (!e->seen)
            continue;
        /* DCGM's GPU ids follow NVML order; field 52 says so explicitly when it is there */
        double index = isnan(e->idx) ? id : e->idx;
        if (!(index >= 0 && index < n))
            continue;
        vals[(int)index] =
            (dcgm_gpu_values){true, e->smact, e->smocc, e->drama, e->power, e->energy};
    }
    return 0;
}
