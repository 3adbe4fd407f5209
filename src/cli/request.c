/* request.c — the common command line and the socket plumbing of the commands that talk to
 * the daemon (see request.h). */
#include "cli/request.h"

#include <assert.h>
#include <math.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/queue_args.h"
#include "daemon/connect.h"
#include "daemon/daemon.h"
#include "daemon/registry.h"
#include "util/clock.h"
#include "util/strutil.h"

enum { OPT_SOCKET = 0x100, OPT_JSON, OPT_CONFIG, OPT_SET };

static const struct option common_longopts[] = {
    {"help", no_argument, NULL, 'h'},
    {"socket", required_argument, NULL, OPT_SOCKET},
    {"json", no_argument, NULL, OPT_JSON},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"set", required_argument, NULL, OPT_SET},
};
#define NCOMMON (sizeof common_longopts / sizeof common_longopts[0])
_Static_assert(sizeof ((request_args *)0)->longopts ==
                   (REQUEST_MAX_OWN_OPTS + NCOMMON + 1) * sizeof(struct option),
               "request_args.longopts holds the own options, the common ones and the end");

int request_cmd_main(const char *name, const request_cmd *c, int argc, char **argv)
{
    request_args a = {.cmd = name, .argc = argc, .argv = argv, .usage = c->usage};
    /* getopt's string: '+' first when asked, ':' to tell a missing value from an unknown
     * option, the command's own letters, then h */
    const char *own = c->shortopts ? c->shortopts : "";
    bool stop = *own == '+';
    int len = snprintf(a.shortopts, sizeof a.shortopts, "%s:%sh", stop ? "+" : "", own + stop);
    assert(len > 0 && (size_t)len < sizeof a.shortopts);
    (void)len;
    size_t n = 0;
    for (const struct option *o = c->longopts; o && o->name && n < REQUEST_MAX_OWN_OPTS; o++)
        a.longopts[n++] = *o;
    assert(!c->longopts || !c->longopts[n].name); /* all of them fitted */
    memcpy(&a.longopts[n], common_longopts, sizeof common_longopts);
    memset(&a.longopts[n + NCOMMON], 0, sizeof a.longopts[0]);
    opterr = 0;
    optind = 0; /* not 1: getopt then starts afresh, '+' included, even after another parse */
    return c->run(&a);
}

int request_next_option(request_args *a)
{
    int opt;
    while ((opt = getopt_long(a->argc, a->argv, a->shortopts, a->longopts, NULL)) != -1) {
        a->arg = optarg;
        switch (opt) {
        case OPT_SOCKET:
            if ((a->status = cli_path_arg(a->cmd, "--socket", optarg)) != 0)
                return -1;
            a->opts.socket = optarg;
            continue;
        case OPT_JSON:
            a->opts.json = true;
            continue;
        case OPT_CONFIG:
            if ((a->status = cli_path_arg(a->cmd, "--config", optarg)) != 0)
                return -1;
            a->opts.config.path = optarg;
            continue;
        case OPT_SET:
            if ((a->status = cli_add_set(a->cmd, &a->opts.config, optarg)) != 0)
                return -1;
            continue;
        case 'h':
            fputs(a->usage, stdout);
            a->status = 0;
            return -1;
        case '?':
        case ':':
            a->status = cli_bad_option(a->cmd, a->argv, optopt, opt);
            return -1;
        default:
            return opt;
        }
    }
    a->arg = NULL;
    a->operands = optind;
    /* Read once, here: a wrong --config or --set is an error whatever names the socket,
     * before anything is done, and every later connection (retries, a follower's polls) takes
     * the config's socket from here rather than reading the file again. */
    carma_config cfg;
    carma_err err;
    int rc = cli_load_config(&cfg, &a->opts.config, &err);
    if (rc) {
        a->status = cli_config_fail(a->cmd, rc, &err);
        return -1;
    }
    snprintf(a->opts.config_socket, sizeof a->opts.config_socket, "%s", cfg.daemon.socket);
    return 0;
}

int request_no_operands(const request_args *a)
{
    if (a->operands < a->argc)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->argv[a->operands]);
    return 0;
}

int request_task_id(const request_args *a, const char *arg, long long *id)
{
    int64_t v;
    carma_err err;
    if (parse_task_id(arg, 1, &v, &err))
        return cli_usage_error(a->cmd, "%s", err.msg);
    *id = v;
    return 0;
}

int request_task_id_operand(const request_args *a, long long *id)
{
    if (a->operands + 1 != a->argc)
        return cli_usage_error(a->cmd, "expected one task id");
    return request_task_id(a, a->argv[a->operands], id);
}

int request_state_option(const request_args *a, const char *state)
{
    dstate s;
    if (dstate_from(state, &s) == 0)
        return 0;
    char names[128];
    size_t n = 0;
    for (int i = 0; i < DS_COUNT; i++)
        n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
                              i ? ", " : "", dstate_name((dstate)i));
    return cli_usage_error(a->cmd, "--state: expected one of %s; got '%s'", names, state);
}

int request_user_option(const request_args *a, const char *user, char *name, size_t cap)
{
    const struct passwd *pw = getpwnam(user); /* a name first: a user may be called 1000 */
    size_t ndigits = strspn(user, "0123456789");
    if (!pw && ndigits > 0 && ndigits == strlen(user) && ndigits <= 10) {
        unsigned long long uid = strtoull(user, NULL, 10);
        if (uid < (uid_t)-1 && !(pw = getpwuid((uid_t)uid))) {
            snprintf(name, cap, "%llu", uid);
            return 0;
        }
    }
    if (!pw)
        return cli_usage_error(a->cmd, "--user: no user named '%s'", user);
    if ((size_t)snprintf(name, cap, "%s", pw->pw_name) >= cap)
        return cli_usage_error(a->cmd, "--user: the user name of '%s' is too long", user);
    return 0;
}

int request_send(const request_args *a, json_t *req, json_t **reply)
{
    return request_send_retrying(a, req, 1, reply);
}

int request_connect(const request_args *a, carma_err *err)
{
    char paths[DAEMON_MAX_SOCKETS][CONFIG_STR_MAX];
    int npaths = daemon_client_sockets(a->opts.socket, a->opts.config_socket, paths);
    const char *tried[DAEMON_MAX_SOCKETS];
    for (int i = 0; i < npaths; i++)
        tried[i] = paths[i];
    return daemon_connect_first(tried, npaths, NULL, err);
}

int request_send_retrying(const request_args *a, json_t *req, int tries, json_t **reply)
{
    carma_err err;
    *reply = NULL;
    bool answered = false, unanswered = false;
    for (int t = 0; t < tries && !*reply && !answered; t++) {
        if (t > 0 && daemon_calls_interrupted())
            break; /* the command is stopping: a signal, not the daemon, ended the last try */
        if (t > 0) { /* 0.2 s, 0.4 s, ...: a restarting daemon, a full listen queue */
            struct timespec ts = {0, 200000000L * t};
            nanosleep(&ts, NULL);
        }
        int fd = request_connect(a, &err);
        if (fd < 0)
            continue;
        *reply = daemon_call_answered(fd, json_incref(req), &answered, &err);
        unanswered |= !*reply && !answered;
        close(fd);
    }
    json_decref(req);
    if (!*reply && !answered && unanswered && tries > 1) {
        /* sent, never answered: a daemon that stopped after taking it has it (a submission
         * sent again would make a second task) */
        char why[sizeof err.msg];
        snprintf(why, sizeof why, "%s", err.msg);
        carma_err_set(&err, "%s; the daemon may have taken it before it stopped: look with "
                      "`carma queue` before sending it again", why);
    }
    return *reply ? 0 : cli_fail(a->cmd, &err);
}

json_t *request_call_patient(const request_args *a, json_t *req, double deadline,
                             double patience_s, carma_err *err)
{
    double give_up = fmin(deadline, clock_mono_s() + patience_s);
    json_t *reply = NULL;
    for (bool said = false;;) {
        bool answered = false;
        int fd = request_connect(a, err);
        if (fd >= 0) {
            reply = daemon_call_within(fd, json_incref(req), deadline, SIZE_MAX, &answered, err);
            close(fd);
        }
        /* asked until give_up itself: a caller's deadline that ends the patience is then
         * seen to have passed (wait --timeout: 124, not a daemon that cannot be reached) */
        double now = clock_mono_s();
        if (reply || answered || now >= give_up || daemon_calls_interrupted())
            break;
        if (!said) {
            char *why = str_escape_controls(err->msg); /* it names the socket's path */
            fprintf(stderr, "carma %s: %s; asking again for up to %.0f s (a restart?)\n",
                    a->cmd, why ? why : "the daemon did not answer", give_up - clock_mono_s());
            free(why);
            said = true;
        }
        struct timespec ts = clock_interval(fmin(0.5, give_up - now));
        nanosleep(&ts, NULL);
    }
    json_decref(req);
    return reply;
}

int request_task_verb(request_args *a, const char *verb, long long *id, json_t **reply)
{
    *reply = NULL;
    *id = 0; /* set on every path (gcc -O3 cannot tell) */
    int rc;
    if (request_next_option(a) != 0) /* none of its own: --help or a usage error */
        return a->status;
    if ((rc = request_task_id_operand(a, id)) != 0)
        return rc;
    return request_send(a, json_pack("{sssI}", "verb", verb, "id", (json_int_t)*id), reply);
}
