/* pages.c — the listings the daemon answers a page at a time (`queue` with ended tasks,
 * `history`): fetched page by page ("next" says where the following one starts), printed as a
 * table or gathered into one JSON array. */
#include <stdio.h>

#include "cli/pages.h"

int request_pages(const request_args *a, const char *cmd, const json_t *base, int64_t limit,
                  int64_t after, void (*header)(void), void (*row)(const json_t *))
{
    json_t *collected = a->opts.json ? json_array() : NULL;
    int64_t shown = 0;
    bool headed = false;
    int rc;
    for (;;) {
        json_t *reply, *req = json_deep_copy(base);
        if (limit)
            json_object_set_new(req, "limit", json_integer(limit - shown));
        if (after)
            json_object_set_new(req, "after", json_integer(after));
        if ((rc = request_send(a, req, &reply)) != 0) {
            json_decref(collected);
            return rc;
        }
        if (!collected && !headed) /* once a reply came: a failure prints its error alone */
            header();
        headed = true;
        size_t i;
        json_t *t, *next = json_object_get(reply, "next");
        json_array_foreach(json_object_get(reply, "tasks"), i, t) {
            if (collected)
                json_array_append(collected, t);
            else
                row(t);
            shown++;
        }
        after = json_is_integer(next) ? json_integer_value(next) : 0;
        json_decref(reply);
        if (!after)
            break;
        if (limit && shown >= limit) {
            fprintf(stderr, "carma %s: more tasks follow: add --after %lld\n", cmd,
                    (long long)after);
            break;
        }
    }
    if (collected) {
        cli_print_json(collected);
        json_decref(collected);
    }
    return 0;
}
