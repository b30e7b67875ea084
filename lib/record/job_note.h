/* job_note.h - the note a job's end leaves when the node agent could not
 * be told: the job's metadata from Slurm, who wrote it and why, in one
 * small JSON file of a root-only drop folder (config note_dir, by default
 * SPOOL_DIR/notes):
 *
 *   {"format":"ceems-job-note/1","by":"extern"|"epilog","why":"...",
 *    "job":{...the record's "job" object...}}
 *
 * The job-side plugin writes notes; it never writes records.  The node
 * agent, the only writer of records, turns each note into one when it is
 * back (lib/agent/agent_finish.c): the job's record with its figures when the
 * agent still holds the job, else a record with the metadata alone, its
 * figures absent and its coverage 0, the note's reason stated.  So every
 * job Slurm ran on the node gets a row, measured or not. */
#ifndef CEEMS_JOB_NOTE_H
#define CEEMS_JOB_NOTE_H

#include <stddef.h>

#include "base/conf.h"
#include "model/job.h"

#define CEEMS_NOTE_FORMAT "ceems-job-note/1"
#define CEEMS_NOTE_MAX 16384		/* bytes of JSON; larger is refused */
#define CEEMS_NOTE_WHY_MAX 256
#define CEEMS_NOTE_NAME_MAX 96

struct ceems_job_note {
	char by[16];			/* "extern" or "epilog" */
	char why[CEEMS_NOTE_WHY_MAX];	/* one sentence */
	struct ceems_job_meta meta;
};

/* The folder of CONFIG's notes into DIR.  0 or -ENAMETOOLONG. */
int ceems_job_note_dir(const struct ceems_config *config, char *dir, size_t size);

/* Write NOTE into DIR (created mode 0700 when missing, its missing
 * parents 0755; a symbolic link on the way is followed only when root
 * owns it, DIR itself is never one), durably
 * (temporary file, fsync, rename).  DIR must be a real directory owned
 * by this process's user and writable by no one else: nothing is
 * written where another user could plant a link.  0, or -errno with
 * ERR saying why. */
int ceems_job_note_write(const char *dir, const struct ceems_job_note *note,
		     char *err, size_t err_size);

/* Encode NOTE into BUF.  Returns the length, -ENOSPC or -ENOMEM. */
int ceems_job_note_encode(const struct ceems_job_note *note, char *buf,
		      size_t size);

/* Decode LEN bytes of note text, strictly.  0, or -EINVAL with ERR. */
int ceems_job_note_decode(const char *buf, size_t len, struct ceems_job_note *note,
		      char *err, size_t err_size);

/* The first note file of DIR in name order after AFTER ("" for the
 * first) into NAME.  1 when one was found, 0 when none is left (or DIR
 * does not exist), -errno. */
int ceems_job_note_next(const char *dir, const char *after, char *name,
		    size_t size);

/* The first MAX note files of DIR in name order after AFTER ("" for the
 * first) into NAMES, in one reading of DIR.  How many (0 when DIR does
 * not exist), or -errno. */
int ceems_job_note_list(const char *dir, const char *after,
		    char names[][CEEMS_NOTE_NAME_MAX], size_t max);

/* Read and decode note NAME of DIR.  0; -EINVAL when it is no note
 * (ERR says why: set it aside); other -errno. */
int ceems_job_note_read(const char *dir, const char *name,
		    struct ceems_job_note *note, char *err, size_t err_size);

/* Remove note NAME of DIR (its record is kept).  0 or -errno.  A note
 * that is no note is renamed NAME.bad instead, kept for the admin. */
int ceems_job_note_remove(const char *dir, const char *name);
int ceems_job_note_set_aside(const char *dir, const char *name);

#endif
