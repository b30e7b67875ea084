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

CALL ceems.adopt_objects();
