/* submit_queue.c — `carma submit`'s queue controls (submit_queue.h). */
#include "cli/submit_queue.h"

#include "cli/cli.h"
#include "cli/queue_args.h"
#include "util/strutil.h"

int queue_ctl_option(int opt, const char *arg, queue_ctl *qc)
{
    carma_err err;
    int64_t v;
    switch (opt) {
    case OPT_AFTER:
    case OPT_AFTEROK: {
        bool ok = opt == OPT_AFTEROK;
        if (parse_id_list(arg, ok ? qc->afterok : qc->after, SUB_MAX_DEPS,
                          ok ? &qc->nafterok : &qc->nafter, &err))
            return cli_usage_error("submit", "--%s: %s", ok ? "afterok" : "after", err.msg);
        return 0;
    }
    case OPT_HOLD:
        qc->hold = true;
        return 0;
    case OPT_CLEAN_ENV:
        qc->clean_env = true;
        return 0;
    case OPT_PRIORITY:
        if (parse_i64(arg, &v) || v < -SUB_MAX_PRIORITY || v > SUB_MAX_PRIORITY)
            return cli_usage_error("submit", "--priority: expected an integer -%d..%d, got '%s'",
                                   SUB_MAX_PRIORITY, SUB_MAX_PRIORITY, arg);
        qc->priority = (int)v;
        return 0;
    case OPT_TIME:
        if (parse_duration_s(arg, SUB_MAX_TIME_S, &qc->time_limit_s, &err))
            return cli_usage_error("submit", "--time: %s", err.msg);
        return 0;
    case OPT_ARRAY:
        if (parse_array_spec(arg, qc->array, MAX_ARRAY, &qc->narray, &err))
            return cli_usage_error("submit", "--array: %s", err.msg);
        return 0;
    }
    return cli_usage_error("submit", "unknown option");
}

int queue_ctl_apply(const queue_ctl *qc, submission *sub, carma_err *err)
{
    int rc = 0;
    for (size_t i = 0; i < qc->nafter + qc->nafterok && rc == 0; i++)
        rc = i < qc->nafter ? submission_add_dep(sub, qc->after[i], false, err)
                            : submission_add_dep(sub, qc->afterok[i - qc->nafter], true, err);
    sub->hold = qc->hold;
    sub->priority = qc->priority;
    sub->time_limit_s = qc->time_limit_s;
    return rc;
}
