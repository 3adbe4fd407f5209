/* hostport.h — a listening address as a config value names it: "HOST:PORT", "[IPV6]:PORT" or
 * ":PORT" (every address). HOST is a numeric IPv4 or IPv6 address, or "localhost"
 * (127.0.0.1): nothing is looked up, so parsing never waits on a resolver. */
#ifndef CARMA_UTIL_HOSTPORT_H
#define CARMA_UTIL_HOSTPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

#define HOSTPORT_HOST_MAX 64

typedef struct hostport {
    char host[HOSTPORT_HOST_MAX]; /* numeric address; "" = every address */
    bool ipv6;                    /* host is an IPv6 address */
    int port;                     /* 0..65535; 0 = any free port */
} hostport;

/* Parses s into *out; -1 with err saying what is wrong (not naming the key: the caller does). */
int hostport_parse(const char *s, hostport *out, carma_err *err);

#endif
