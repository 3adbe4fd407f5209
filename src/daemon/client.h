/* client.h — the CLI's side of the daemon protocol: connect to the socket, send one request,
 * read its reply line. */
#ifndef CARMA_DAEMON_CLIENT_H
#define CARMA_DAEMON_CLIENT_H

#include <jansson.h>

#include "util/err.h"

int client_connect(const char *socket_path, carma_err *err);

/* Sends req (the reference is taken) and reads the reply. Returns the reply when it says
 * ok; otherwise NULL with err holding the daemon's error (or the transport's). */
json_t *client_call(int fd, json_t *req, carma_err *err);

#endif
