#!/bin/sh
# msr-ns.sh DIR COMMAND... - run COMMAND (slurmd) with DIR mounted over
# /dev/cpu/0, in the mount namespace this script was started in (started
# through `unshare --mount --propagation private`: nothing of it reaches
# the host).  DIR holds tests/doubles/fake-msr's file named msr: Slurm's
# acct_gather_energy/rapl then reads the simulated node's counters as
# RAPL registers, in slurmd and in every slurmstepd it starts.
set -eu
dir=$1
shift
mount --bind "$dir" /dev/cpu/0
exec "$@"
