/* print.c — GPU readings as text or JSON (see print.h). */
#include "gpu/print.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "util/strutil.h"

/* The backend keeps the energy counter in mJ, as NVML and DCGM give it and the Prometheus
 * endpoint exports it (dcgm-exporter's unit); carma's own outputs, this one and `carma
 * simulate`'s, give energy in J. */
static double energy_j(const gpu_reading *r)
{
    return r->energy_mj / 1000.0;
}

static void print_fraction(FILE *out, const char *label, double v)
{
    if (isnan(v))
        fprintf(out, " %s unknown", label);
    else
        fprintf(out, " %s %.3f", label, v);
}

static void print_text(FILE *out, const gpu_reading *r)
{
    /* the driver's (or a library's) words: no escape sequence reaches the terminal */
    char *name = str_escape_controls(r->name), *uuid = str_escape_controls(r->uuid);
    fprintf(out, "gpu %d  %s  %s\n", r->index, name && *name ? name : "(name unknown)",
            uuid && *uuid ? uuid : "(uuid unknown)");
    free(name);
    free(uuid);
    /* MIG mode: CUDA sees only the GPU's instances, never the whole GPU carma would place on */
    if (r->mig == GPU_MIG_ON)
        fprintf(out, "  MIG       enabled: CUDA runs only on its MIG instances, so the carma "
                     "daemon (whole GPUs) places nothing here\n");
    else
        fprintf(out, "  MIG       %s\n", r->mig == GPU_MIG_OFF ? "off" : "unknown");
    if (r->mem_known)
        fprintf(out, "  memory    %llu / %llu MiB used, %llu MiB free\n",
                (unsigned long long)r->used_mib, (unsigned long long)r->total_mib,
                (unsigned long long)r->free_mib);
    else
        fprintf(out, "  memory    unknown\n");
    if (isnan(r->util_gpu))
        fprintf(out, "  util      unknown\n");
    else
        fprintf(out, "  util      %.2f (nvml)\n", r->util_gpu);
    fprintf(out, "  activity ");
    print_fraction(out, "smact", r->smact);
    print_fraction(out, "smocc", r->smocc);
    print_fraction(out, "drama", r->drama);
    fprintf(out, "  (%s)\n", metric_source_name(r->src_activity));
    fprintf(out, "  power     ");
    if (isnan(r->power_w))
        fprintf(out, "unknown");
    else
        fprintf(out, "%.1f W", r->power_w);
    if (isnan(r->energy_mj))
        fprintf(out, ", energy unknown");
    else
        fprintf(out, ", energy %.1f J", energy_j(r));
    fprintf(out, "  (%s)\n", metric_source_name(r->src_power));
    if (!r->procs_known) {
        fprintf(out, "  processes unknown\n");
        return;
    }
    fprintf(out, "  processes %d", r->nprocs);
    for (int i = 0; i < r->nprocs; i++) {
        if (r->procs[i].used_known)
            fprintf(out, "%s pid %d %llu MiB", i ? "," : ":", (int)r->procs[i].pid,
                    (unsigned long long)r->procs[i].used_mib);
        else
            fprintf(out, "%s pid %d memory unknown", i ? "," : ":", (int)r->procs[i].pid);
    }
    fprintf(out, "\n");
}

static json_t *real_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

json_t *gpu_text_json(const char *s)
{
    json_t *j = *s ? json_string(s) : NULL;
    return j ? j : json_null();
}

static json_t *source_or_null(metric_source s)
{
    return s == SRC_UNKNOWN ? json_null() : json_string(metric_source_name(s));
}

static json_t *reading_json(const gpu_reading *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(r->index));
    json_object_set_new(o, "minor", r->minor >= 0 ? json_integer(r->minor) : json_null());
    json_object_set_new(o, "uuid", gpu_text_json(r->uuid));
    json_object_set_new(o, "name", gpu_text_json(r->name));
    json_object_set_new(o, "mig", r->mig == GPU_MIG_UNKNOWN ? json_null()
                                                             : json_boolean(r->mig == GPU_MIG_ON));
    json_t *mem = json_null();
    if (r->mem_known) {
        mem = json_object();
        json_object_set_new(mem, "total_mib", json_integer((json_int_t)r->total_mib));
        json_object_set_new(mem, "used_mib", json_integer((json_int_t)r->used_mib));
        json_object_set_new(mem, "free_mib", json_integer((json_int_t)r->free_mib));
    }
    json_object_set_new(o, "memory", mem);
    json_object_set_new(o, "util_gpu", real_or_null(r->util_gpu));
    json_object_set_new(o, "smact", real_or_null(r->smact));
    json_object_set_new(o, "smocc", real_or_null(r->smocc));
    json_object_set_new(o, "drama", real_or_null(r->drama));
    json_object_set_new(o, "activity_source", source_or_null(r->src_activity));
    json_object_set_new(o, "power_w", real_or_null(r->power_w));
    json_object_set_new(o, "energy_j", real_or_null(energy_j(r)));
    json_object_set_new(o, "power_source", source_or_null(r->src_power));
    json_t *procs = json_null();
    if (r->procs_known) {
        procs = json_array();
        for (int i = 0; i < r->nprocs; i++) {
            json_t *p = json_object();
            json_object_set_new(p, "pid", json_integer(r->procs[i].pid));
            json_object_set_new(p, "used_mib", r->procs[i].used_known
                                                   ? json_integer((json_int_t)r->procs[i].used_mib)
                                                   : json_null());
            json_array_append_new(procs, p);
        }
    }
    json_object_set_new(o, "processes", procs);
    return o;
}

int gpu_print_readings(FILE *out, const gpu_reading *r, int n, bool json)
{
    if (json) {
        json_t *a = json_array();
        for (int i = 0; i < n; i++)
            json_array_append_new(a, reading_json(&r[i]));
        /* 15 significant digits (DBL_DIG) print any value of up to 15 digits as it was read:
         * an energy counter of up to 10^12 J to the mJ, and 0.405 as 0.405 */
        int rc = json_dumpf(a, out, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        json_decref(a);
        if (rc || fputc('\n', out) == EOF)
            return -1;
    } else {
        for (int i = 0; i < n; i++)
            print_text(out, &r[i]);
    }
    return ferror(out) ? -1 : 0;
}
