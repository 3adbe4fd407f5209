/* dcgm.h — SM activity, SM occupancy and DRAM activity (DCGM fields 1002, 1003, 1005) plus power
 * and energy (155, 156) from NVIDIA DCGM, loaded with dlopen (libdcgm.so.4, then libdcgm.so.3;
 * $CARMA_DCGM_LIBRARY overrides). carma connects to the node's nv-hostengine
 * ($CARMA_DCGM_HOSTENGINE, else 127.0.0.1, its default) and runs an embedded host engine only
 * when none answers; while on the embedded one it looks for the host engine again every
 * DCGM_RETRY_S and moves over once one answers (dcgm_reader_read). Used for GPUs without GPM
 * (Ampere and older). When DCGM is absent these metrics stay unknown. DCGM ratios are already
 * 0..1. */
#ifndef CARMA_GPU_DCGM_H
#define CARMA_GPU_DCGM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define DCGM_LIBRARY_ENV "CARMA_DCGM_LIBRARY"
/* IP[:port] (port 5555 when left out) or unix://PATH */
#define DCGM_HOSTENGINE_ENV "CARMA_DCGM_HOSTENGINE"
#define DCGM_CONNECT_TIMEOUT_MS 500
/* How often carma tries DCGM again: the nvml backend after a failed open or read, and a reader
 * on its embedded engine for a host engine that has started since. */
#define DCGM_RETRY_S 60.0
/* The wait of the embedded reader's look for a host engine. DCGM tries a refused connection
 * again every 50 ms until the timeout (DcgmClientHandler::GetConnHandleForHostEngine), so on
 * a node without nv-hostengine each look stalls the sample that long; a local engine that runs
 * answers within it. */
#define DCGM_PROBE_TIMEOUT_MS 100
#define DCGM_STATUS_MAX (2 * CARMA_ERR_MAX) /* dcgm_reader_status's text, with its NUL */

/* carma's group and field groups on a host engine are named "carma-HOST-PID-NONCE" (and that
 * with "-prof" for the profiling fields): HOST is gethostname()'s, at most DCGM_NAME_HOST_MAX
 * characters, anything but letters, digits, '.', '-' and '_' written '_'; NONCE is 16 hex
 * digits from getrandom(), else from the clocks. A host engine is shared by every client of the
 * node, carmas in containers among them, and dcgmFieldGroupCreate refuses a name in use
 * (DCGM_ST_DUPLICATE_KEY): two daemons in different PID namespaces can have the same pid, and
 * containers sharing the node's UTS namespace the same host name, so the nonce tells them apart.
 * DCGM's limit: dcgm_structs.h keeps a group's and a field group's name in
 * char [DCGM_MAX_STR_LENGTH] (256, with the NUL; dcgmGroupInfo_t.groupName,
 * dcgmFieldGroupInfo_t.fieldGroupName), and dcgmFieldGroupCreate refuses a longer one with
 * DCGM_ST_BADPARAM (DcgmApi.cpp); carma's longest, "-prof" included, is 6 + 64 + 1 + 20 + 1 +
 * 16 + 5 = 113 characters. */
#define DCGM_NAME_HOST_MAX 64
#define DCGM_NAME_CAP 128 /* a name's buffer, with room for "-prof" and the NUL */

/* The name "carma-HOST-PID-NONCE" into out (HOST cleaned and cut as above). */
void dcgm_object_name(char out[DCGM_NAME_CAP], const char *host, long pid, uint64_t nonce);

typedef struct dcgm_reader dcgm_reader;

/* One GPU's values, indexed by NVML index (DCGM field 52). NaN = unknown. */
typedef struct dcgm_gpu_values {
    bool present; /* DCGM reported this GPU */
    double smact, smocc, drama; /* 0..1 */
    double power_w, energy_mj;
} dcgm_gpu_values;

/* Where DCGM says what happens after dcgm_reader_open, one line per call (a move from the
 * embedded engine to a host engine that now answers); NULL, the default, says nothing. The
 * daemon gives its log. */
typedef void (*dcgm_log_fn)(const char *msg);
void dcgm_set_log(dcgm_log_fn log);

/* Loads DCGM, connects to the host engine or starts an embedded one, and watches the fields.
 * Errors name the library tried and give dlerror() or DCGM's message. */
int dcgm_reader_open(dcgm_reader **out, carma_err *err);
/* Which host engine is used ("DCGM via nv-hostengine at 127.0.0.1", "DCGM embedded (no
 * nv-hostengine at ...)", "DCGM via nv-hostengine at 127.0.0.1 (moved from the embedded
 * engine)") and, when they could not be watched, why the profiling fields (SM activity,
 * occupancy, DRAM activity) stay unknown while power and energy still arrive. */
const char *dcgm_reader_status(const dcgm_reader *d);
/* Latest values into vals[0..n) by NVML index; GPUs DCGM did not report get present = false.
 * On the embedded engine, every DCGM_RETRY_S, it first looks for a host engine and, when one
 * answers, moves there and logs it once ("DCGM: nv-hostengine at ADDR now answers; moved from
 * the embedded engine"): that sample every GPU is present = false (unknown, never zero). When
 * the move fails to set up the watches it returns -1, as a read that fails: the reader is then
 * good only for dcgm_reader_close. */
int dcgm_reader_read(dcgm_reader *d, dcgm_gpu_values *vals, int n, carma_err *err);
void dcgm_reader_close(dcgm_reader *d);

#endif
