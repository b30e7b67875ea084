-- sql/views/job_io_net.sql - A job's IO and network over its nodes.

-- A job's IO and network over its nodes, for ceems-sacct and admins:
-- sums over the nodes that measured each figure, NULL when none did.
CREATE OR REPLACE VIEW ceems.job_io_net WITH (security_invoker = true) AS
SELECT n.job_key,
       sum(n.io_read_bytes) AS io_read_bytes,
       sum(n.io_write_bytes) AS io_write_bytes,
       -- Of the nodes with IO figures: a node that counted per tick
       -- (io_source task, every descriptor) is not syscall.
       bool_and(n.io_source IS NOT DISTINCT FROM 'syscall')
	       FILTER (WHERE n.io_read_bytes IS NOT NULL OR
			     n.io_write_bytes IS NOT NULL) AS io_all_syscall,
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
