/* gpu_nvml_api.h - the part of NVIDIA's NVML that the project calls,
 * declared here so that no NVML header is needed to build: the entry
 * points as function types (the backend holds pointers to them, the
 * test double declares its functions with them, so both agree), and
 * the types and values those entry points use, as the NVML API version
 * 12 header defines them (struct layouts, enum values).  Only what is
 * called is declared. */
#ifndef CEEMS_GPU_NVML_API_H
#define CEEMS_GPU_NVML_API_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_UNKNOWN = 999,
};

#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_MIG_ENABLE 1

typedef struct {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef struct {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

typedef struct {
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
	unsigned int gpuInstanceSliceCount;
	unsigned int computeInstanceSliceCount;
	unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

/* GPM (Hopper and later): metrics computed from two samples. */
enum {
	NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
	NVML_GPM_METRIC_SM_UTIL = 2,
	NVML_GPM_METRIC_SM_OCCUPANCY = 3,
	NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
	NVML_GPM_METRIC_FP64_UTIL = 11,
	NVML_GPM_METRIC_FP32_UTIL = 12,
	NVML_GPM_METRIC_FP16_UTIL = 13,
	NVML_GPM_METRIC_MAX = 98,	/* the array size of version 1 */
};
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1

typedef struct {
	unsigned int metricId;
	nvmlReturn_t nvmlReturn;
	double value;
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo;
} nvmlGpmMetric_t;

typedef struct {
	unsigned int version;
	unsigned int numMetrics;
	nvmlGpmSample_t sample1;
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
	unsigned int version;
	unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef nvmlReturn_t nvml_init_fn(void);
typedef nvmlReturn_t nvml_shutdown_fn(void);
typedef nvmlReturn_t nvml_count_fn(unsigned int *count);
typedef nvmlReturn_t nvml_handle_fn(unsigned int index, nvmlDevice_t *dev);
typedef nvmlReturn_t nvml_string_fn(nvmlDevice_t dev, char *buf,
				    unsigned int length);
typedef nvmlReturn_t nvml_pci_fn(nvmlDevice_t dev, nvmlPciInfo_t *pci);
typedef nvmlReturn_t nvml_uint_fn(nvmlDevice_t dev, unsigned int *value);
typedef nvmlReturn_t nvml_memory_fn(nvmlDevice_t dev, nvmlMemory_t *mem);
typedef nvmlReturn_t nvml_energy_fn(nvmlDevice_t dev,
				    unsigned long long *mj);
typedef nvmlReturn_t nvml_util_fn(nvmlDevice_t dev, nvmlUtilization_t *u);
typedef nvmlReturn_t nvml_mig_mode_fn(nvmlDevice_t dev, unsigned int *current,
				      unsigned int *pending);
typedef nvmlReturn_t nvml_mig_handle_fn(nvmlDevice_t dev, unsigned int index,
					nvmlDevice_t *mig);
typedef nvmlReturn_t nvml_attributes_fn(nvmlDevice_t dev,
					nvmlDeviceAttributes_t *a);
typedef nvmlReturn_t nvml_gpm_alloc_fn(nvmlGpmSample_t *sample);
typedef nvmlReturn_t nvml_gpm_free_fn(nvmlGpmSample_t sample);
typedef nvmlReturn_t nvml_gpm_get_fn(nvmlDevice_t dev, nvmlGpmSample_t sample);
typedef nvmlReturn_t nvml_gpm_mig_get_fn(nvmlDevice_t dev,
					 unsigned int gpu_instance_id,
					 nvmlGpmSample_t sample);
typedef nvmlReturn_t nvml_gpm_metrics_fn(nvmlGpmMetricsGet_t *get);
typedef nvmlReturn_t nvml_gpm_support_fn(nvmlDevice_t dev,
					 nvmlGpmSupport_t *support);
typedef const char *nvml_error_string_fn(nvmlReturn_t result);

#endif
