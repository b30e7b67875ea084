/* gpu_rocm_api.h - the part of AMD's ROCm SMI library that the project
 * calls, declared here so that no ROCm header is needed to build: the
 * entry points as function types (the backend holds pointers to them,
 * the test double declares its functions with them) and the status and
 * memory-type values they use, as rocm_smi.h (ROCm SMI 5) defines them. */
#ifndef CEEMS_GPU_ROCM_API_H
#define CEEMS_GPU_ROCM_API_H

#include <stddef.h>
#include <stdint.h>

/* An enum holding 0xFFFFFFFF: 32 bits, unsigned. */
typedef uint32_t rsmi_status_t;
typedef int rsmi_memory_type_t;

enum {
	RSMI_STATUS_SUCCESS = 0,
	RSMI_STATUS_INVALID_ARGS = 1,
	RSMI_STATUS_NOT_SUPPORTED = 2,
	RSMI_STATUS_FILE_ERROR = 3,
	RSMI_STATUS_PERMISSION = 4,
	RSMI_STATUS_OUT_OF_RESOURCES = 5,
	RSMI_STATUS_INTERNAL_EXCEPTION = 6,
	RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 7,
	RSMI_STATUS_INIT_ERROR = 8,
	RSMI_STATUS_NOT_YET_IMPLEMENTED = 9,
	RSMI_STATUS_NOT_FOUND = 10,
	RSMI_STATUS_INSUFFICIENT_SIZE = 11,
	RSMI_STATUS_NO_DATA = 14,
	RSMI_STATUS_UNEXPECTED_DATA = 15,
};
#define RSMI_STATUS_UNKNOWN_ERROR 0xFFFFFFFFu

enum {
	RSMI_MEM_TYPE_VRAM = 0,
};

typedef rsmi_status_t rsmi_init_fn(uint64_t init_flags);
typedef rsmi_status_t rsmi_shut_down_fn(void);
typedef rsmi_status_t rsmi_num_devices_fn(uint32_t *num_devices);
typedef rsmi_status_t rsmi_u64_fn(uint32_t dv_ind, uint64_t *value);
typedef rsmi_status_t rsmi_u32_fn(uint32_t dv_ind, uint32_t *value);
typedef rsmi_status_t rsmi_name_fn(uint32_t dv_ind, char *name, size_t len);
typedef rsmi_status_t rsmi_energy_fn(uint32_t dv_ind, uint64_t *counter,
				     float *resolution_uj,
				     uint64_t *timestamp_ns);
typedef rsmi_status_t rsmi_sensor_fn(uint32_t dv_ind, uint32_t sensor_ind,
				     uint64_t *value);
typedef rsmi_status_t rsmi_memory_fn(uint32_t dv_ind,
				     rsmi_memory_type_t mem_type,
				     uint64_t *value);
typedef rsmi_status_t rsmi_status_string_fn(rsmi_status_t status,
					    const char **text);

#endif
