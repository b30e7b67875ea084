/* checks.h - the contract of every libceems parser of outside input,
 * as executable checks.  Each check runs the parsers of one family on
 * one input and verifies what their headers promise: only the documented
 * return codes, the output left as it was on error, and sane values on
 * success.  Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c, built
 * by `make fuzz`) and the seeded mutation test of every `make check`
 * (tests/unit/test_fuzz_parsers.c), so both hold the parsers to the same
 * rules; memory errors are the sanitizers' to catch.
 *
 * DATA holds LEN bytes followed by a '\0' (DATA[LEN] == '\0'); the text
 * parsers see it up to its first NUL, the parsers that take a length see
 * all LEN bytes.  Each check returns NULL when every rule held, else a
 * static sentence naming the parser and the rule it broke. */
#ifndef CEEMS_FUZZ_CHECKS_H
#define CEEMS_FUZZ_CHECKS_H

#include <stddef.h>

/* ceems_cgroup_path_job_from_proc, ceems_cgroup_path_mounts_from_mountinfo, and
 * what they feed: ceems_cgroup_path_job_dir, ceems_cgroup_stats_dirs_for_job. */
const char *fuzz_check_cgroup_path(const char *data, size_t len);

/* Every parser of cgroup_stats.h (ceems_cgroup_parse_*). */
const char *fuzz_check_cgroup_stats(const char *data, size_t len);

/* ceems_proc_stats_parse_proc_stat, _proc_meminfo, _proc_status_uid,
 * _pid_start. */
const char *fuzz_check_proc_stats(const char *data, size_t len);

/* ceems_conf_parse, ceems_conf_value_duration, and every key of the table
 * (fuzz_check_conf_keys, tests/fuzz/checks_keys.c). */
const char *fuzz_check_conf(const char *data, size_t len);
/* ceems_conf_keys_parse: the text up to the NUL as every key's value. */
const char *fuzz_check_conf_keys(const char *data, size_t len);

/* ceems_emissions_table_parse (all LEN bytes), then lookups in the
 * table it built. */
const char *fuzz_check_emissions(const char *data, size_t len);

/* The gather's request lines and gather_nodes files
 * (lib/client/gather_proto.h): checks_gather.c. */
const char *fuzz_check_gather(const char *data, size_t len);
/* The plain-text mark of the agent's socket
 * (ceems_agent_proto_line_decode, line_reply): checks_mark_line.c. */
const char *fuzz_check_mark_line(const char *data, size_t len);

/* ceems_intensity_parse (all LEN bytes), ceems_intensity_at, and a
 * round trip through ceems_intensity_write and ceems_intensity_load. */
const char *fuzz_check_intensity(const char *data, size_t len);

/* admin_import_parse in every format (all LEN bytes). */
const char *fuzz_check_factors_import(const char *data, size_t len);

/* The sysfs parsers of the energy sources: ceems_number_parse_u64,
 * ceems_rapl_classify_zone, ceems_hwmon_classify (chip and label: the
 * text before and after its first newline), ceems_pm_counters_parse,
 * ceems_pm_counters_classify; the GPU backends' bus id,
 * ceems_gpu_backend_bus_id_normalise; and the BMC's credentials file and
 * workaround list (ceems_bmc_creds_parse,
 * ceems_bmc_ipmi_parse_workarounds). */
const char *fuzz_check_energy(const char *data, size_t len);

/* ceems_agent_proto_request_decode (all LEN bytes; a request that decodes is
 * encoded and decoded again to the same request) and
 * ceems_agent_proto_reply_decode. */
const char *fuzz_check_agent_proto(const char *data, size_t len);

/* ceems_job_note_decode (all LEN bytes; a note that decodes is encoded and
 * decoded again to the same note). */
const char *fuzz_check_job_note(const char *data, size_t len);

/* ceems-sacct's sacct_time_parse, sacct_fields_format_parse, sacct_merge_jobsel_parse
 * and sacct_spool_series_parse (all LEN bytes); tests/fuzz/checks_sacct.c. */
const char *fuzz_check_sacct(const char *data, size_t len);

/* Arbitrary bytes (LEN bytes cut at their NULs, one piece per field) in
 * every string of a job record, a deregistration's metadata, a
 * registration, a step request and a refusal: each encodes into valid
 * UTF-8 JSON that decodes back as lib/base/text.h promises;
 * tests/fuzz/checks_text.c. */
const char *fuzz_check_text(const char *data, size_t len);

/* ceems_gres_detail_gpu_indices (text up to the NUL) and
 * ceems_gres_conf_gpu_files (all LEN bytes). */
const char *fuzz_check_gres(const char *data, size_t len);

#endif
