-- 020_io_net.sql - a node's IO and network figures of a job, from the
-- node agent's eBPF programs (record members measurements.io,
-- measurements.net, ebpf_dropped, ebpf_absent: doc/record-format.md).
--
-- io_read_bytes and io_write_bytes (001) held the cgroup's block-layer
-- figures; they now hold the read and write system calls' bytes on files
-- (any file system: local, NFS, Lustre, GPFS) where the node measured
-- them, io_source saying which ('syscall', 'block').  The network figures
-- are what the job's sockets sent and received, by protocol and family.
-- A node that did not measure them leaves them NULL, ebpf_absent saying
-- why (unknown is not zero).
--
-- The writers (store_job_record, store_job_records) are wrapped, not
-- rewritten: each stores the record as before, then the IO and network
-- of the node rows it wrote (inserted or replaced; an unchanged row
-- keeps its figures).

ALTER TABLE ceems.job_nodes
	ADD COLUMN io_source text CHECK (io_source IN ('syscall', 'block')),
	ADD COLUMN io_read_ops bigint CHECK (io_read_ops >= 0),
	ADD COLUMN io_write_ops bigint CHECK (io_write_ops >= 0),
	ADD COLUMN io_read_errors bigint CHECK (io_read_errors >= 0),
	ADD COLUMN io_write_errors bigint CHECK (io_write_errors >= 0),
	ADD COLUMN net_tcp4_in_bytes bigint CHECK (net_tcp4_in_bytes >= 0),
	ADD COLUMN net_tcp4_out_bytes bigint CHECK (net_tcp4_out_bytes >= 0),
	ADD COLUMN net_tcp6_in_bytes bigint CHECK (net_tcp6_in_bytes >= 0),
	ADD COLUMN net_tcp6_out_bytes bigint CHECK (net_tcp6_out_bytes >= 0),
	ADD COLUMN net_udp4_in_bytes bigint CHECK (net_udp4_in_bytes >= 0),
	ADD COLUMN net_udp4_out_bytes bigint CHECK (net_udp4_out_bytes >= 0),
	ADD COLUMN net_udp6_in_bytes bigint CHECK (net_udp6_in_bytes >= 0),
	ADD COLUMN net_udp6_out_bytes bigint CHECK (net_udp6_out_bytes >= 0),
	ADD COLUMN net_in_msgs bigint CHECK (net_in_msgs >= 0),
	ADD COLUMN net_out_msgs bigint CHECK (net_out_msgs >= 0),
	ADD COLUMN tcp_retrans bigint CHECK (tcp_retrans >= 0),
	ADD COLUMN ebpf_dropped bigint CHECK (ebpf_dropped >= 0),
	ADD COLUMN ebpf_absent text CHECK (length(ebpf_absent) <= 256);

-- Rows stored before: their IO was the cgroup's.
UPDATE ceems.job_nodes SET io_source = 'block'
	WHERE io_read_bytes IS NOT NULL OR io_write_bytes IS NOT NULL;

COMMENT ON COLUMN ceems.job_nodes.io_read_bytes IS 'Bytes read: from files by the read system calls (io_source syscall, eBPF), else by the block layer (block, the cgroup)';
COMMENT ON COLUMN ceems.job_nodes.io_write_bytes IS 'Bytes written: to files by the write system calls (io_source syscall), else by the block layer (block)';
COMMENT ON COLUMN ceems.job_nodes.io_source IS 'Where io_read_bytes and io_write_bytes come from: syscall (eBPF, every file system) or block (the cgroup''s block IO)';
COMMENT ON COLUMN ceems.job_nodes.io_read_ops IS 'Read system calls on files (eBPF)';
COMMENT ON COLUMN ceems.job_nodes.io_read_errors IS 'Of io_read_ops, those that failed';
COMMENT ON COLUMN ceems.job_nodes.net_tcp4_in_bytes IS 'Bytes the job''s TCP over IPv4 sockets received (eBPF; _out_: sent; tcp6, udp4, udp6 likewise)';
COMMENT ON COLUMN ceems.job_nodes.net_in_msgs IS 'Receive calls that moved data, TCP and UDP (a UDP datagram each)';
COMMENT ON COLUMN ceems.job_nodes.tcp_retrans IS 'TCP segments the kernel retransmitted for the job''s sockets';
COMMENT ON COLUMN ceems.job_nodes.ebpf_dropped IS 'Forks the node could not follow while the job ran (a full map): the figures may miss processes';
COMMENT ON COLUMN ceems.job_nodes.ebpf_absent IS 'Why the node did not measure IO and network (the agent''s words), NULL when it did';

-- The IO and network of RECORD into its node row of job P_KEY.
CREATE FUNCTION ceems.store_job_node_io(p_key bigint, record jsonb)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	UPDATE ceems.job_nodes n SET
		io_source = CASE WHEN x.io IS NOT NULL THEN 'syscall'
				 WHEN n.io_read_bytes IS NOT NULL OR
				      n.io_write_bytes IS NOT NULL THEN 'block' END,
		io_read_bytes = coalesce((x.io ->> 'read_bytes')::bigint, n.io_read_bytes),
		io_write_bytes = coalesce((x.io ->> 'write_bytes')::bigint, n.io_write_bytes),
		io_read_ops = (x.io ->> 'read_ops')::bigint,
		io_write_ops = (x.io ->> 'write_ops')::bigint,
		io_read_errors = (x.io ->> 'read_errors')::bigint,
		io_write_errors = (x.io ->> 'write_errors')::bigint,
		net_tcp4_in_bytes = (x.net #>> '{tcp4,in_bytes}')::bigint,
		net_tcp4_out_bytes = (x.net #>> '{tcp4,out_bytes}')::bigint,
		net_tcp6_in_bytes = (x.net #>> '{tcp6,in_bytes}')::bigint,
		net_tcp6_out_bytes = (x.net #>> '{tcp6,out_bytes}')::bigint,
		net_udp4_in_bytes = (x.net #>> '{udp4,in_bytes}')::bigint,
		net_udp4_out_bytes = (x.net #>> '{udp4,out_bytes}')::bigint,
		net_udp6_in_bytes = (x.net #>> '{udp6,in_bytes}')::bigint,
		net_udp6_out_bytes = (x.net #>> '{udp6,out_bytes}')::bigint,
		net_in_msgs = CASE WHEN x.net IS NOT NULL THEN
			coalesce((x.net #>> '{tcp4,in_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{tcp6,in_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp4,in_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp6,in_msgs}')::bigint, 0) END,
		net_out_msgs = CASE WHEN x.net IS NOT NULL THEN
			coalesce((x.net #>> '{tcp4,out_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{tcp6,out_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp4,out_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp6,out_msgs}')::bigint, 0) END,
		tcp_retrans = (x.net ->> 'tcp_retrans')::bigint,
		ebpf_dropped = (x.m ->> 'ebpf_dropped')::bigint,
		ebpf_absent = x.m ->> 'ebpf_absent'
	FROM (SELECT record -> 'measurements' AS m,
		     CASE WHEN jsonb_typeof(record #> '{measurements,io}') = 'object'
			  THEN record #> '{measurements,io}' END AS io,
		     CASE WHEN jsonb_typeof(record #> '{measurements,net}') = 'object'
			  THEN record #> '{measurements,net}' END AS net) x
	WHERE n.job_key = p_key AND n.node = record #>> '{job,node}';
END
$$;
COMMENT ON FUNCTION ceems.store_job_node_io(bigint, jsonb) IS
	'The IO and network figures of a record into the node row its writer stored (not granted)';

ALTER FUNCTION ceems.store_job_record(jsonb) RENAME TO store_job_record_before_io;
CREATE FUNCTION ceems.store_job_record(record jsonb, OUT outcome text, OUT stored_key bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	SELECT s.outcome, s.stored_key INTO outcome, stored_key
		FROM ceems.store_job_record_before_io(record) s;
	IF outcome IN ('inserted', 'replaced') THEN
		PERFORM ceems.store_job_node_io(stored_key, record);
	END IF;
END
$$;
COMMENT ON FUNCTION ceems.store_job_record(jsonb) IS
	'upsert_job_record without the refresh of the jobs row, IO and network included: for upsert_job_record and upsert_job_records only (not granted)';

ALTER FUNCTION ceems.store_job_records(jsonb) RENAME TO store_job_records_before_io;
CREATE FUNCTION ceems.store_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	outcomes text[];
BEGIN
	outcomes := ceems.store_job_records_before_io(records);
	IF outcomes IS NULL THEN
		RETURN NULL;
	END IF;
	-- The rows written: each record's job by its identity (the jobs
	-- index), its node row by node.
	PERFORM ceems.store_job_node_io(j.job_key, e.value)
		FROM jsonb_array_elements(records) WITH ORDINALITY e(value, ord)
		JOIN ceems.clusters c ON c.name = e.value #>> '{job,cluster}'
		JOIN ceems.jobs j ON j.cluster_id = c.cluster_id
			AND j.jobid = (e.value #>> '{job,jobid}')::bigint
			AND j.start_time = to_timestamp((e.value #>> '{job,start_time}')::bigint)
		WHERE outcomes[e.ord] IN ('inserted', 'replaced');
	RETURN outcomes;
END
$$;
COMMENT ON FUNCTION ceems.store_job_records(jsonb) IS
	'store_job_record set-wise, IO and network included: for upsert_job_records only (not granted)';

-- A job's IO and network over its nodes, for ceems-sacct and admins:
-- sums over the nodes that measured each figure, NULL when none did.
CREATE VIEW ceems.job_io_net WITH (security_invoker = true) AS
SELECT n.job_key,
       sum(n.io_read_bytes) AS io_read_bytes,
       sum(n.io_write_bytes) AS io_write_bytes,
       bool_and(n.io_source = 'syscall') AS io_all_syscall,
       sum(n.net_tcp4_in_bytes) + sum(n.net_tcp6_in_bytes) +
	       sum(n.net_udp4_in_bytes) + sum(n.net_udp6_in_bytes) AS net_in_bytes,
       sum(n.net_tcp4_out_bytes) + sum(n.net_tcp6_out_bytes) +
	       sum(n.net_udp4_out_bytes) + sum(n.net_udp6_out_bytes) AS net_out_bytes,
       sum(n.tcp_retrans) AS tcp_retrans,
       count(*) FILTER (WHERE n.ebpf_absent IS NOT NULL) AS nodes_not_measured
FROM ceems.job_nodes n
GROUP BY n.job_key;
COMMENT ON VIEW ceems.job_io_net IS
	'A job''s IO and network summed over its nodes (NULL: no node measured it)';
GRANT SELECT ON ceems.job_io_net TO ceems_reader;

CALL ceems.adopt_objects();
