/* procs.c — task process trees from /proc and their GPU usage (see procs.h). */
#include "gpu/procs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/mps.h"
#include "util/array.h"

void pid_set_free(pid_set *s)
{
    free(s->pids);
    memset(s, 0, sizeof *s);
}

bool pid_set_has(const pid_set *s, pid_t pid)
{
    for (int i = 0; i < s->n; i++)
        if (s->pids[i] == pid)
            return true;
    return false;
}

static int pid_set_add(pid_set *s, pid_t pid)
{
    if (pid_set_has(s, pid))
        return 0;
    pid_t *p = array_grow(s->pids, &s->cap, (size_t)s->n + 1, sizeof *p, 32);
    if (!p)
        return -1;
    s->pids = p;
    s->pids[s->n++] = pid;
    return 0;
}

/* Parses /proc/PID/stat: "pid (comm) state ppid pgrp session ...". comm may hold spaces and
 * parentheses, so the fields start after the last ')'. */
static bool read_stat(const char *proc_root, pid_t pid, proc_entry *e)
{
    char path[512], buf[1024];
    snprintf(path, sizeof path, "%s/%d/stat", proc_root, (int)pid);
    /* open/read rather than stdio: one scan a tick reads every process's stat */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false; /* it exited meanwhile */
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0)
        return false;
    buf[len] = '\0';
    char *close = strrchr(buf, ')');
    char state;
    int ppid, pgrp, sid;
    if (!close || sscanf(close + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
        return false;
    e->pid = pid;
    e->ppid = ppid;
    e->pgrp = pgrp;
    e->sid = sid;
    return true;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

int proc_table_scan(const char *proc_root, proc_table *t, carma_err *err)
{
    t->e = NULL;
    t->n = 0;
    DIR *d = opendir(proc_root);
    if (!d)
        return carma_err_set(err, "cannot read %s: %s", proc_root, strerror(errno));
    proc_entry *list = NULL;
    int len = 0;
    size_t cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!all_digits(de->d_name))
            continue;
        proc_entry e;
        if (!read_stat(proc_root, (pid_t)atol(de->d_name), &e))
            continue;
        proc_entry *p = array_grow(list, &cap, (size_t)len + 1, sizeof *p, 256);
        if (!p) {
            free(list);
            closedir(d);
            return carma_err_set(err, "out of memory");
        }
        list = p;
        list[len++] = e;
    }
    closedir(d);
    t->e = list;
    t->n = len;
    return 0;
}

static bool table_has(const proc_entry *e, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (e[i].pid == pid)
            return true;
    return false;
}

int proc_table_scan_pids(const char *proc_root, const pid_t *pids, int n, proc_table *t,
                         carma_err *err)
{
    t->e = NULL;
    t->n = 0;
    size_t cap = 0;
    for (int i = 0; i < n; i++) {
        /* up the parent chain until init, or a process already read */
        for (pid_t pid = pids[i]; pid > 1 && !table_has(t->e, t->n, pid);) {
            proc_entry e;
            if (!read_stat(proc_root, pid, &e))
                break;
            proc_entry *grown = array_grow(t->e, &cap, (size_t)t->n + 1, sizeof *grown, 64);
            if (!grown) {
                proc_table_free(t);
                return carma_err_set(err, "out of memory");
            }
            t->e = grown;
            t->e[t->n++] = e;
            pid = e.ppid;
        }
    }
    return 0;
}

bool proc_table_has(const proc_table *t, pid_t pid)
{
    return table_has(t->e, t->n, pid);
}

void proc_table_free(proc_table *t)
{
    free(t->e);
    t->e = NULL;
    t->n = 0;
}

int proc_table_task_tree(const proc_table *t, pid_t root, pid_set *out, carma_err *err)
{
    out->n = 0;
    const proc_entry *all = t->e;
    int n = t->n, rc = 0;
    /* A process group or session whose id is root's pid was created by root (setpgid,
     * setsid); its members belong to the task even after root exits. */
    for (int i = 0; i < n && !rc; i++)
        if (all[i].pid == root || all[i].pgrp == root || all[i].sid == root)
            rc = pid_set_add(out, all[i].pid);
    /* descendants: repeat until no new child is found */
    bool grew = true;
    while (grew && !rc) {
        grew = false;
        for (int i = 0; i < n && !rc; i++)
            if (!pid_set_has(out, all[i].pid) &&
                (all[i].ppid == root || pid_set_has(out, all[i].ppid))) {
                rc = pid_set_add(out, all[i].pid);
                grew = true;
            }
    }
    return rc ? carma_err_set(err, "out of memory") : 0;
}

int proc_task_tree(const char *proc_root, pid_t root, pid_set *out, carma_err *err)
{
    proc_table t;
    if (proc_table_scan(proc_root, &t, err))
        return -1;
    int rc = proc_table_task_tree(&t, root, out, err);
    proc_table_free(&t);
    return rc;
}

void proc_match_task(const pid_set *pids, const gpu_reading *readings, int n,
                     task_gpu_usage *out)
{
    memset(out, 0, sizeof *out);
    out->total_known = true;
    for (int g = 0; g < n; g++) {
        const gpu_reading *r = &readings[g];
        if (!r->procs_known)
            continue;
        uint64_t sum = 0;
        bool known = true, found = false;
        for (int i = 0; i < r->nprocs; i++) {
            if (!pid_set_has(pids, r->procs[i].pid))
                continue;
            found = true;
            out->nprocs++;
            if (r->procs[i].used_known)
                sum += r->procs[i].used_mib;
            else
                known = false;
        }
        if (!found || out->ngpus >= PROC_MAX_GPUS)
            continue;
        out->gpus[out->ngpus] = r->index;
        out->used_mib[out->ngpus] = sum;
        out->used_known[out->ngpus] = known;
        out->ngpus++;
        out->total_mib += sum;
        out->total_known &= known;
    }
    if (out->ngpus == 0)
        out->total_known = false; /* nothing seen: no figure */
}

bool gpu_reading_only(const gpu_reading *r, const pid_set *pids, const proc_table *live,
                      const char *proc_root)
{
    if (!r->procs_known)
        return false;
    for (int i = 0; i < r->nprocs; i++) {
        pid_t pid = r->procs[i].pid;
        if (!(pids && pid_set_has(pids, pid)) && !(live && !proc_table_has(live, pid)) &&
            !mps_is_server_process(proc_root, pid))
            return false;
    }
    return true;
}

bool gpu_reading_idle(const gpu_reading *r, const char *proc_root)
{
    return gpu_reading_only(r, NULL, NULL, proc_root);
}
