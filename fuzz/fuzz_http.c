/* fuzz_http.c — what a remote peer can send the metrics endpoint, and what a config gives it:
 * the HTTP request parser (the bytes as they arrive, whole and cut short) and its router, the
 * metrics_listen address parser, and the exposition's label escaping on the same text. */
#include "fuzz_common.h"

#include "daemon/http.h"
#include "util/hostport.h"
#include "util/promtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t len = size < HTTP_REQ_MAX ? size : HTTP_REQ_MAX;
    http_request req;
    http_parse_rc rc = HTTP_INCOMPLETE;
    for (size_t cut = 1; cut <= len && rc == HTTP_INCOMPLETE; cut += 1 + cut / 2)
        rc = http_parse((const char *)data, cut, &req);
    rc = http_parse((const char *)data, len, &req);
    if (rc == HTTP_INCOMPLETE && len == HTTP_REQ_MAX)
        abort(); /* a full buffer is a request or a 400, never a wait for more */
    if (rc == HTTP_REQUEST) {
        if (req.path[0] != '/' || strpbrk(req.path, " ?\r\n") || !req.method[0])
            abort();
        http_page page;
        int status = http_route(&req, &page);
        if ((status == 200) != (page != HTTP_PAGE_NONE))
            abort();
    }
    char *text = fuzz_text(data, size);
    hostport hp;
    carma_err err;
    if (hostport_parse(text, &hp, &err) == 0 && (hp.port < 0 || hp.port > 65535))
        abort();
    char esc[512];
    size_t n = promtext_escape_label(text, esc, sizeof esc);
    if (n != strlen(esc) || strchr(esc, '\n'))
        abort();
    for (size_t i = 0; i < n; i++) /* every quote escaped: a label value cannot end early */
        if (esc[i] == '"' && (i == 0 || esc[i - 1] != '\\'))
            abort();
    free(text);
    return 0;
}
