#!/bin/sh
# nvidia-smi-double.sh - a stand-in for nvidia-smi, answering the few
# queries tests/gpu/real-agent.sh makes, in the real one's formats (as
# driver 580 prints them), for one GPU of the NVML double: so that the
# script's own parts run on a machine without a GPU
# (tests/integration/real-agent.bats).  The GPU is described by the
# environment, as the double's scenario describes it:
#   SMI_DOUBLE_UUID, SMI_DOUBLE_BUS_ID, SMI_DOUBLE_NAME, SMI_DOUBLE_MINOR,
#   SMI_DOUBLE_POWER_W, SMI_DOUBLE_UTIL, SMI_DOUBLE_POWER_LIMIT_W.
uuid=${SMI_DOUBLE_UUID:-GPU-11111111-2222-3333-4444-555555555555}
bus=${SMI_DOUBLE_BUS_ID:-00000000:3B:00.0}
name=${SMI_DOUBLE_NAME:-NVIDIA H100 80GB HBM3}
minor=${SMI_DOUBLE_MINOR:-0}
power=${SMI_DOUBLE_POWER_W:-250}
util=${SMI_DOUBLE_UTIL:-100}
limit=${SMI_DOUBLE_POWER_LIMIT_W:-700}

case " $* " in
*" -lms "*)
	# Samples until killed: timestamp, power.draw, utilization.gpu.
	while :; do
		printf '%s, %.2f, %s\n' "$(date '+%Y/%m/%d %H:%M:%S.%3N')" \
			"$power" "$util" || exit 0
		sleep 0.2
	done ;;
*" -L "*)
	echo "GPU 0: $name (UUID: $uuid)" ;;
*" -q "*)
	echo "    Minor Number                                       : $minor" ;;
*--query-gpu=index,uuid,pci.bus_id,name,power.limit*)
	printf '0, %s, %s, %s, %.2f\n' "$uuid" "$bus" "$name" "$limit" ;;
*)
	echo "nvidia-smi-double.sh: query not known: $*" >&2
	exit 2 ;;
esac
