/* fuzz_proto.c — the daemon protocol: one request line decoded as the daemon decodes it (JSON,
 * duplicates rejected, a "verb", a submit's "task" as a submission), then the submission
 * encoded back and decoded again, as the daemon stores and restores it. */
#include "fuzz_common.h"

#include "daemon/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > PROTO_MAX_LINE)
        return 0;
    json_error_t jerr;
    json_t *req = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!req)
        return 0;
    carma_err err;
    submission sub;
    if (json_is_object(req) &&
        submission_from_json(json_object_get(req, "task"), &sub, &err) == 0) {
        json_t *j = submission_to_json(&sub);
        size_t len;
        char *line = j ? proto_encode_line(j, &len) : NULL;
        submission again;
        if (j && submission_from_json(j, &again, &err) == 0)
            submission_free(&again);
        else if (j)
            abort(); /* what the daemon stored must read back */
        free(line);
        json_decref(j);
        submission_free(&sub);
    }
    json_t *lossy = proto_string_lossy((const char *)data, size);
    json_decref(lossy);
    json_decref(req);
    return 0;
}
