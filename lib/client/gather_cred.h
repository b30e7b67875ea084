/* gather_cred.h - the munge credentials of the gather (gather_proto.h):
 * how the batch node and the other nodes' agents prove to each other
 * that they are root on a node of the cluster, the way Slurm's nodes do
 * (the cluster's munge key).  Both sides are root: slurmstepd asks, the
 * agent (uid 0, no capabilities) answers; a credential of any other uid
 * is refused.  Answers can be decoded by root only (munge's uid
 * restriction), so a job's figures cross the network encrypted with the
 * cluster's key. */
#ifndef CEEMS_GATHER_CRED_H
#define CEEMS_GATHER_CRED_H

#include <stdbool.h>
#include <stddef.h>

/* PAYLOAD (LEN bytes) into a credential through munged at SOCKET ("":
 * munge's default); ROOT_ONLY: decodable by uid 0 only.  0 with *CRED
 * (the caller frees it), or -EIO with a sentence in ERR. */
int ceems_gather_cred_encode(const char *socket, const void *payload,
			     size_t len, bool root_only, char **cred,
			     char *err, size_t err_size);

/* Decode CRED: 0 with *PAYLOAD (NUL-terminated; the caller frees it)
 * and *LEN, when munged says it is valid, fresh, seen for the first
 * time, and made by uid 0; else -EACCES (another uid), -EIO (munged
 * refused it or could not be asked), with a sentence in ERR. */
int ceems_gather_cred_decode(const char *socket, const char *cred,
			     char **payload, size_t *len, char *err,
			     size_t err_size);

#endif
