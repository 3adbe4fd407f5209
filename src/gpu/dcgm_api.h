/* dcgm_api.h — our own declarations of the part of DCGM carma uses, written from NVIDIA's
 * dcgm_structs.h, dcgm_agent.h and dcgm_fields.h (github.com/NVIDIA/DCGM, dcgmlib/); no DCGM
 * header is installed on the build machines, so libdcgm is reached with dlopen/dlsym against
 * these. */
#ifndef CARMA_GPU_DCGM_API_H
#define CARMA_GPU_DCGM_API_H

#include <stdint.h>

typedef int dcgmReturn_t;
typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;

#define DCGM_ST_OK 0
#define DCGM_ST_CONNECTION_NOT_VALID (-21) /* dcgmConnect_v2: no host engine could be reached */
#define DCGM_OPERATION_MODE_AUTO 1
#define DCGM_GROUP_DEFAULT 0 /* every GPU of the node */
#define DCGM_MAX_NUM_DEVICES 32 /* GPU ids are below this (DCGM 2.0 and newer) */

/* Field ids (dcgm_fields.h). */
#define DCGM_FI_DEV_NVML_INDEX 52
#define DCGM_FI_DEV_POWER_USAGE 155              /* W, double */
#define DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION 156 /* mJ, int64 */
#define DCGM_FI_PROF_SM_ACTIVE 1002              /* ratio 0..1 */
#define DCGM_FI_PROF_SM_OCCUPANCY 1003
#define DCGM_FI_PROF_DRAM_ACTIVE 1005

#define DCGM_FT_DOUBLE 'd'
#define DCGM_FT_INT64 'i'

/* Blank values mark "no data"; anything at or above these is a blank of some kind. */
#define DCGM_INT64_BLANK 0x7ffffffffffffff0LL
#define DCGM_FP64_BLANK 140737488355328.0

#define DCGM_MAX_STR_LENGTH 256
#define DCGM_MAX_BLOB_LENGTH 4096

typedef struct dcgmFieldValue_v1 {
    unsigned int version;
    unsigned short fieldId;
    unsigned short fieldType;
    int status;
    int64_t ts; /* usec since the epoch */
    union {
        int64_t i64;
        double dbl;
        char str[DCGM_MAX_STR_LENGTH];
        char blob[DCGM_MAX_BLOB_LENGTH];
    } value;
} dcgmFieldValue_v1;

/* Builds a versioned struct's version word: its size, and the version in the top byte. */
#define DCGM_MAKE_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((unsigned long)(ver) << 24U)))

/* nv-hostengine's default listening address: TCP on 127.0.0.1, port 5555 (DCGM_HE_PORT_NUMBER),
 * which dcgmConnect_v2 uses for an address without ":port". */
#define DCGM_HOSTENGINE_ADDRESS "127.0.0.1"
#define DCGM_UNIX_SOCKET_PREFIX "unix://"

typedef struct dcgmConnectV2Params_v2 {
    unsigned int version;                /* dcgmConnectV2Params_version2 */
    unsigned int persistAfterDisconnect; /* 0: the host engine drops this connection's watches
                                            and groups when it goes away */
    unsigned int timeoutMs;              /* how long to keep trying; 0 means DCGM's 5 s */
    unsigned int addressIsUnixSocket;    /* 1: the address is a socket path, 0: IP[:port] */
} dcgmConnectV2Params_v2;
#define dcgmConnectV2Params_version2 DCGM_MAKE_VERSION(dcgmConnectV2Params_v2, 2)

/* Called once per value (numValues 1 in DCGM's own implementation), not once per GPU. */
typedef int (*dcgmFieldValueEnumeration_f)(unsigned int gpuId, dcgmFieldValue_v1 *values,
                                           int numValues, void *userData);

typedef dcgmReturn_t (*dcgm_init_fn)(void);
typedef dcgmReturn_t (*dcgm_start_embedded_fn)(int opMode, dcgmHandle_t *handle);
typedef dcgmReturn_t (*dcgm_stop_embedded_fn)(dcgmHandle_t handle);
typedef dcgmReturn_t (*dcgm_connect_v2_fn)(const char *address, dcgmConnectV2Params_v2 *params,
                                           dcgmHandle_t *handle);
typedef dcgmReturn_t (*dcgm_disconnect_fn)(dcgmHandle_t handle);
typedef dcgmReturn_t (*dcgm_group_create_fn)(dcgmHandle_t, int type, const char *name,
                                             dcgmGpuGrp_t *group);
typedef dcgmReturn_t (*dcgm_group_destroy_fn)(dcgmHandle_t, dcgmGpuGrp_t);
typedef dcgmReturn_t (*dcgm_field_group_create_fn)(dcgmHandle_t, int n,
                                                   const unsigned short *ids, const char *name,
                                                   dcgmFieldGrp_t *fgroup);
typedef dcgmReturn_t (*dcgm_field_group_destroy_fn)(dcgmHandle_t, dcgmFieldGrp_t);
typedef dcgmReturn_t (*dcgm_watch_fields_fn)(dcgmHandle_t, dcgmGpuGrp_t, dcgmFieldGrp_t,
                                             long long updateFreqUsec, double maxKeepAgeS,
                                             int maxKeepSamples);
typedef dcgmReturn_t (*dcgm_get_latest_values_fn)(dcgmHandle_t, dcgmGpuGrp_t, dcgmFieldGrp_t,
                                                  dcgmFieldValueEnumeration_f, void *user);
typedef const char *(*dcgm_error_string_fn)(dcgmReturn_t);

#endif
