/* hostport.c — parsing "HOST:PORT", "[IPV6]:PORT" and ":PORT" (hostport.h). */
#include "util/hostport.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "util/strutil.h"

int hostport_parse(const char *s, hostport *out, carma_err *err)
{
    memset(out, 0, sizeof *out);
    /* "[::1]": its colons are the address's own, and what is missing is the port */
    size_t n = strlen(s);
    if (n > 1 && s[0] == '[' && s[n - 1] == ']')
        return carma_err_set(err, "'%s': no port (an IPv6 address with its port: [::1]:9400)",
                             s);
    const char *colon = strrchr(s, ':');
    if (!colon)
        return carma_err_set(err, "'%s' is not HOST:PORT, [IPV6]:PORT or :PORT", s);
    size_t hlen = (size_t)(colon - s);
    const char *h = s;
    if (hlen > 0 && s[0] == '[') {
        if (s[hlen - 1] != ']')
            return carma_err_set(err, "'%s': an IPv6 address goes in brackets, [::1]:9400", s);
        h = s + 1;
        hlen -= 2;
        out->ipv6 = true;
    } else if (memchr(s, ':', hlen)) {
        return carma_err_set(err, "'%s': an IPv6 address goes in brackets, [::1]:9400", s);
    }
    if (hlen >= sizeof out->host)
        return carma_err_set(err, "'%s': the host is too long", s);
    memcpy(out->host, h, hlen);
    out->host[hlen] = '\0';
    if (!strcmp(out->host, "localhost"))
        snprintf(out->host, sizeof out->host, "127.0.0.1");
    unsigned char addr[16];
    if (out->host[0] && inet_pton(out->ipv6 ? AF_INET6 : AF_INET, out->host, addr) != 1)
        return carma_err_set(err, "'%s': '%s' is not a numeric %s address (or localhost)", s,
                             out->host, out->ipv6 ? "IPv6" : "IPv4");
    if (out->ipv6 && !out->host[0])
        return carma_err_set(err, "'%s': empty brackets (:PORT alone listens everywhere)", s);
    int64_t port;
    if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        parse_i64(colon + 1, &port) || port < 0 || port > 65535)
        return carma_err_set(err, "'%s': the port must be a number from 0 to 65535", s);
    out->port = (int)port;
    return 0;
}
