-- 032_io_source_task.sql - a node's IO counted per tick says so:
-- io_source 'task'.
--
-- A node agent with `ebpf = per-tick` reads the kernel's per-task IO
-- counters once a tick (doc/record-format.md, io.counting): every
-- descriptor (pipes, terminals, devices as well as files), no errors,
-- not the system calls on files that 'syscall' says.  Its rows were
-- stored with io_source NULL; 'task' names them.  A row with IO bytes
-- and no source can only be such a row (since 020 every other row with
-- bytes has one), so those take 'task' too.
--
-- Each statement is a no-op where its object is there already: a
-- database's version can be set back and the migrations after it
-- applied again (tests/integration/schema.bats).

ALTER TABLE ceems.job_nodes DROP CONSTRAINT IF EXISTS job_nodes_io_source_check;
ALTER TABLE ceems.job_nodes ADD CONSTRAINT job_nodes_io_source_check
	CHECK (io_source IN ('syscall', 'block', 'task'));

UPDATE ceems.job_nodes SET io_source = 'task'
WHERE io_source IS NULL
  AND (io_read_bytes IS NOT NULL OR io_write_bytes IS NOT NULL);

COMMENT ON COLUMN ceems.job_nodes.io_source IS
	'Where io_read_bytes and io_write_bytes come from: syscall (eBPF on the read and write calls on files), task (the kernel''s per-task counters read each tick: every descriptor, no errors) or block (the cgroup''s block IO)';

CALL ceems.adopt_objects();
