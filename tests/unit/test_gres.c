/* test_gres.c - Slurm's GPU allocation of a job on a node (the GRES
 * indices of gres_detail_str) and the device files gres.conf gives each
 * index, in Slurm's order (lib/sources/gres.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sources/gres.h"
#include "../tap.h"

static char files[CEEMS_GRES_MAX_FILES][CEEMS_GRES_PATH_MAX];

static void
test_detail(void)
{
	uint32_t idx[8];
	size_t n = 0;

	is_int(ceems_gres_detail_gpu_indices("gpu:a100:2(IDX:0-1)", idx, 8, &n),
	       0, "a typed GPU range");
	ok(n == 2 && idx[0] == 0 && idx[1] == 1, "its indices are 0 and 1");
	is_int(ceems_gres_detail_gpu_indices(
		       "gpu:h100:4(IDX:6,0,2-3),mps:100(0/100,0/100),shard:2(2/8,0/8)",
		       idx, 8, &n), 0, "GPUs among other GRES, out of order");
	ok(n == 4 && idx[0] == 0 && idx[1] == 2 && idx[2] == 3 && idx[3] == 6,
	   "the GPU indices, sorted: 0 2 3 6");
	is_int(ceems_gres_detail_gpu_indices("gpu:1(IDX:1),gpu:1(IDX:1)", idx,
					     8, &n), 0, "a repeated index");
	is_int(n, 1, "is counted once");
	is_int(ceems_gres_detail_gpu_indices("mps:100(0/100)", idx, 8, &n), 0,
	       "no GPU at all");
	is_int(n, 0, "gives no index");
	is_int(ceems_gres_detail_gpu_indices("gpu:1(IDX:N/A)", idx, 8, &n), 0,
	       "a GPU GRES without files");
	is_int(n, 0, "gives no index");
	is_int(ceems_gres_detail_gpu_indices("gpu:9(IDX:0-8)", idx, 8, &n),
	       -E2BIG, "more indices than room");
	is_int(ceems_gres_detail_gpu_indices("gpu:1(IDX:0-)", idx, 8, &n),
	       -EINVAL, "an open range is garbage");
	is_int(ceems_gres_detail_gpu_indices("gpu:1(IDX:3-1)", idx, 8, &n),
	       -EINVAL, "a backwards range is garbage");
	is_int(ceems_gres_detail_gpu_indices("gpu:1(IDX:0", idx, 8, &n),
	       -EINVAL, "an unclosed list is garbage");
	is_int(ceems_gres_detail_gpu_indices("gpu:1(CNT:0)", idx, 8, &n),
	       -EINVAL, "another list than IDX is garbage");
	is_int(ceems_gres_detail_gpu_indices("gpu:1(IDX:0),", idx, 8, &n),
	       -EINVAL, "a trailing comma is garbage");
}

static bool
match_gpu01(const char *nodes, void *arg)
{
	(void)arg;
	return strcmp(nodes, "gpu[01-16]") == 0;
}

static int
conf(const char *text, size_t *n, unsigned int *line)
{
	return ceems_gres_conf_gpu_files(text, strlen(text), match_gpu01, NULL,
					 files, n, line);
}

static void
test_conf(void)
{
	size_t n = 0;
	unsigned int line = 7;

	is_int(conf("# comment\n"
		    "NodeName=gpu[01-16] Name=gpu Type=h100 File=/dev/nvidia[4-7]\n"
		    "NodeName=gpu[01-16] Name=gpu File=/dev/nvidia[0-3] Cores=0-31\n"
		    "NodeName=gpu[01-16] Name=mps Count=400 File=/dev/nvidia[0-3]\n"
		    "NodeName=other Name=gpu File=/dev/nvidia9\n", &n, &line),
	       0, "an 8-GPU node listed out of order");
	is_int(n, 8, "its 8 GPU files, not the MPS ones nor another node's");
	is_str(files[0], "/dev/nvidia0", "index 0 is the file ending in 0");
	is_str(files[7], "/dev/nvidia7", "index 7 is the file ending in 7");
	is_int(line, 0, "no line number on success");

	is_int(conf("name=GPU file=/dev/nvidia10,/dev/nvidia2  # two\n"
		    "Name=gpu File=/dev/nvidia[00-01]\n", &n, &line), 0,
	       "lower case keys, a list, zero-padded ranges");
	is_int(n, 4, "four files");
	is_str(files[0], "/dev/nvidia00", "sorted by number: 00");
	is_str(files[1], "/dev/nvidia01", "then 01");
	is_str(files[2], "/dev/nvidia2", "then 2");
	is_str(files[3], "/dev/nvidia10", "then 10, not after 1 as text");

	is_int(conf("Name=gpu File=/dev/dri/renderD[128,130-131]\n", &n, &line),
	       0, "a list inside the brackets");
	ok(n == 3 && strcmp(files[1], "/dev/dri/renderD130") == 0,
	   "expanded to 128, 130, 131");

	is_int(conf("AutoDetect=nvml\nName=gpu Count=4\n", &n, &line), 0,
	       "GPUs without files");
	is_int(n, 0, "give no file");

	is_int(conf("\nName=gpu File=dev/nvidia0\n", &n, &line), -EINVAL,
	       "a relative file is refused");
	is_int(line, 2, "on the line that holds it");
	is_int(conf("Name=gpu File=/dev/nvidia[0-1][0-1]\n", &n, &line),
	       -EINVAL, "two bracket groups are refused");
	is_int(conf("Name=gpu File=/dev/nvidia[0-99]\n", &n, &line), -E2BIG,
	       "more files than a node can have");
	is_int(ceems_gres_conf_gpu_files("Name=gpu File=/dev/nvidia0", 12,
					 NULL, NULL, files, &n, &line), 0,
	       "only LEN bytes are read");
	is_int(n, 0, "the cut line has no file");
}

static void
test_shared(void)
{
	struct ceems_gres_shared sh[4];
	double counts[3];
	unsigned int line = 9;
	size_t n = 0;
	static const char conf_text[] =
		"Name=gpu File=/dev/nvidia[0-2]\n"
		"Name=shard Count=8 File=/dev/nvidia[0-1]\n"
		"NodeName=other Name=shard Count=100 File=/dev/nvidia2\n"
		"Name=mps Count=3K\n";

	is_int(ceems_gres_detail_shared("gpu:1(IDX:2),shard:2(IDX:0)", sh, 4, &n),
	       0, "a job's shards among whole GPUs");
	ok(n == 1 && strcmp(sh[0].name, "shard") == 0 && sh[0].index == 0 &&
	   sh[0].count == 2 && sh[0].ndev == 1, "2 shards of GPU 0");
	is_int(ceems_gres_detail_shared("mps:v100:50(IDX:0-1)", sh, 4, &n), 0,
	       "an MPS share over two GPUs");
	ok(n == 2 && sh[1].index == 1 && sh[1].count == 50 && sh[1].ndev == 2,
	   "50 spread over GPUs 0 and 1");
	is_int(ceems_gres_detail_shared("gpu:2(IDX:0-1)", sh, 4, &n), 0,
	       "whole GPUs only");
	is_int(n, 0, "are no share");
	is_int(ceems_gres_detail_shared("shard(IDX:0)", sh, 4, &n), -EINVAL,
	       "a share without its count is garbage");
	is_int(ceems_gres_detail_shared("gpu:1(IDX:0),shard:3(0/4,2/4,1/8)",
					sh, 4, &n), 0,
	       "Slurm 23.02's parts and totals per GPU");
	ok(n == 2 && sh[0].index == 1 && sh[0].count == 2 && sh[0].total == 4 &&
	   sh[1].index == 2 && sh[1].count == 1 && sh[1].total == 8,
	   "2 of GPU 1's 4 and 1 of GPU 2's 8; none of GPU 0");
	is_int(ceems_gres_detail_shared("shard:2(3/2)", sh, 4, &n), -EINVAL,
	       "a part above its total is garbage");
	is_int(ceems_gres_detail_shared("shard:2(1/4,)", sh, 4, &n), -EINVAL,
	       "a trailing comma is garbage");

	ceems_gres_conf_gpu_files(conf_text, strlen(conf_text), match_gpu01,
				  NULL, files, &n, &line);
	is_int(ceems_gres_conf_shared_counts(conf_text, strlen(conf_text),
					     match_gpu01, NULL, "shard", files,
					     3, counts, &line), 0,
	       "the shards gres.conf gives each GPU");
	ok(counts[0] == 4 && counts[1] == 4 && counts[2] == 0,
	   "8 over the two files named: 4, 4, 0 (another node's skipped)");
	is_int(ceems_gres_conf_shared_counts(conf_text, strlen(conf_text),
					     match_gpu01, NULL, "mps", files,
					     3, counts, &line), 0,
	       "MPS without File=");
	ok(counts[0] == 1024 && counts[2] == 1024,
	   "3K spread over all three GPUs: 1024 each");
	is_int(ceems_gres_conf_shared_counts("Name=mps Count=lots\n", 20,
					     NULL, NULL, "mps", files, 3,
					     counts, &line), -EINVAL,
	       "a Count that is not a number is refused");
	is_int(line, 1, "on its line");
}

int
main(void)
{
	test_detail();
	test_conf();
	test_shared();
	return done_testing();
}
