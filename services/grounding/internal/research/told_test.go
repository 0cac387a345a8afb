package research

import "testing"

// TestToldFloor: a source a part of the topic selects (a side, a quoted
// line, the setting) is evidence only when it is also about the topic as
// told, at toldFloor: the backlog runbook its side "rabbitmq federation"
// finds does not answer which of federation or shovel to run, nor
// nginx's worker connections a gunicorn WORKER TIMEOUT; the runbooks of
// two causes offered for a story stay when the story is about them
// (TestAlternativeSides).
func TestToldFloor(t *testing.T) {
	rabbit := indexedRunbook(t, "rabbitmq-backlog")
	nginx := indexedRunbook(t, "nginx-worker-connections")
	for topic, src := range map[string]Source{
		"rabbitmq federation or shovel for copying the order events exchange from the eu cluster to the us cluster? which one survives a WAN outage better":                                                                                                                        rabbit,
		"gunicorn: `[CRITICAL] WORKER TIMEOUT (pid:4121)` every few minutes on the django reports pods (sync workers, --timeout 30, 4 workers per pod). the workers it kills were all waiting on the partner api. more workers, gthread/gevent workers, or just a bigger timeout?": nginx,
	} {
		if a := assessed(t, topic, []Source{src}); a.onTopic[0] {
			t.Errorf("%q: %s admitted", topic, src.Title)
		}
	}
}

// TestObservedFailure: what a story tells it saw is a second failure met
// in it, and the runbook it alone selects is evidence beside the alert's
// own: pg_wal holding most of a volume filling up, a link at 1G with CRC
// errors under ZooKeeper's latency. A runbook an observation selects
// that the story as told is not about (observedFloor) stays out: Kafka's
// broker runbook for the brokers logging "Session expired" of a
// ZooKeeper the story is about.
func TestObservedFailure(t *testing.T) {
	var (
		network = indexedRunbook(t, "node-network-errors")
		pvc     = indexedRunbook(t, "pv-filling-up")
		wal     = indexedRunbook(t, "postgres-wal")
		zk      = indexedRunbook(t, "zookeeper-quorum")
		kafka   = indexedRunbook(t, "kafka-broker-down")
	)
	for _, c := range []struct {
		topic    string
		sources  []Source
		admitted []bool
	}{
		{
			"KubePersistentVolumeFillingUp for data-billing-pg-0 in payments, and du on the volume says pg_wal holds 140 GB of it. why does the WAL keep growing, and can we resize the PVC online for now?",
			[]Source{pvc, wal}, []bool{true, true},
		},
		{
			"ZookeeperHighLatency on zk-events since the switch in rack c4 was swapped, and the kafka brokers keep logging `Session expired`. `ethtool eth0` on zk-events-2 says `Speed: 1000Mb/s` on a 10G port, and rx_crc_errors keep climbing. take it out of the ensemble or fix the link first?",
			[]Source{zk, network, kafka}, []bool{true, true, false},
		},
	} {
		a := assessed(t, c.topic, c.sources)
		for i, want := range c.admitted {
			if a.onTopic[i] != want {
				t.Errorf("%q: %s admitted %v, want %v", c.topic, c.sources[i].Title, a.onTopic[i], want)
			}
		}
	}
}

// TestQuotedSystem: a message the topic quotes that a runbook plainly
// matches names that runbook's system as surely as its name would, so a
// story that never says "JVM" or "Kubernetes" still gets the thread-dump
// and PLEG runbooks beside those of the systems its words name (Kafka's
// consumer lag; Java's heap, for the hung task a dump names): otherSystems
// leaves out only runbooks for systems the topic never names.
func TestQuotedSystem(t *testing.T) {
	var (
		threads = indexedRunbook(t, "jvm-threads-blocked")
		lag     = indexedRunbook(t, "kafka-consumer-lag")
		pleg    = indexedRunbook(t, "kubelet-pleg-unhealthy")
		heap    = indexedRunbook(t, "jvm-heap")
	)
	for _, c := range []struct {
		topic   string
		sources []Source
		// quoted is the source the quoted message is about.
		quoted int
	}{
		{
			"KafkaConsumerLagHigh for the payouts group since 14:05, on all 12 partitions. the quarkus consumers are running and idle at ~3% cpu; jcmd Thread.print shows every worker thread `WAITING (parking)` in HikariPool.getConnection, and the app logs `Connection is not available, request timed out after 30000ms`. add consumers, or fix the pool first?",
			[]Source{lag, threads}, 1,
		},
		{
			"node w-31 goes NotReady every few minutes: `PLEG is not healthy: pleg was last seen active 3m30s ago; threshold is 3m0s`. `crictl ps` hangs, and dmesg has `INFO: task java:5120 blocked for more than 120 seconds` with io_schedule in the trace since the SAN path flapped at 02:00; kill -9 does nothing. what do we do with the node?",
			[]Source{heap, pleg}, 1,
		},
	} {
		if a := assessed(t, c.topic, c.sources); !a.onTopic[c.quoted] {
			t.Errorf("%q: %s not admitted", c.topic, c.sources[c.quoted].Title)
		}
	}
}

// TestShortQuote: a message quoted too short to be judged as a pasted line
// (two specific words) still counts for the runbook it plainly selects
// when the story is about that runbook too: MySQL's error 1040 in a story
// that never says MySQL.
func TestShortQuote(t *testing.T) {
	mysql := indexedRunbook(t, "mysql-too-many-connections")
	topic := "shop-db turns the php shop away at every peak: `SQLSTATE[HY000] [1040] Too many connections`. each of the 12 web boxes runs pm.max_children = 200 with no connection pooling, and max_connections is 2000. lower max_children, raise max_connections, or put proxysql in front?"
	admitsAll(t, topic, mysql)
}

// TestMeasuredLimit: an observation that prints a resource at its limit
// ("vmstat si/so 1500-3000 every second", "`Duplex: Half`") is a failure
// measured, evidence for its runbook at the bar and the whole topic's
// floor, though the story as told is mostly about another failure.
func TestMeasuredLimit(t *testing.T) {
	var (
		swap    = indexedRunbook(t, "node-swap-thrashing")
		nfs     = indexedRunbook(t, "nfs-stale-handle")
		network = indexedRunbook(t, "node-network-errors")
	)
	for _, c := range []struct {
		topic   string
		sources []Source
	}{
		{
			"build-3 (old vm, 6 GB ram, 2 GB swap) crawls: load 35, every ssh login takes half a minute. vmstat si/so 1200-2800 every second, wa ~55. dmesg has `nfs: server filer-4 not responding, still trying` since 07:40 and 20 `make` processes sit in D state. reboot it, or fix the mount first?",
			[]Source{nfs, swap},
		},
		{
			"NodeNFSRequestRetransmitsHigh on render-22 alone; dmesg flips between `nfs: server filer-3 not responding, still trying` and `nfs: server filer-3 OK` every few minutes, and `ethtool eth1` says `Duplex: Half` since the port was repatched on monday. is that it, and does the mount need anything?",
			[]Source{nfs, network},
		},
	} {
		admitsAll(t, c.topic, c.sources...)
	}
}

// TestUnexplainedFailure: what a story tells beyond the runbooks found
// for it is a second failure met in it. A drain blocked by a Vault pod's
// PDB is the drain runbook's; the pod sitting `Sealed: true` is the
// sealed-Vault runbook's, which the story as a whole scores under the
// observation floor. A volume filling up is the volume runbook's;
// pg_wal taking most of it, the WAL runbook's.
func TestUnexplainedFailure(t *testing.T) {
	for _, c := range []struct {
		topic   string
		sources []Source
	}{
		{
			"[FIRING:1] NodeDrainStuck (prod-us2 w-31) - node cordoned for more than 90m\nnode pool upgrade to 1.31: the drain of w-31 loops on `Cannot evict pod as it would violate the pod's disruption budget` for vault-0. vault-2 moved off w-28 an hour before and still sits 0/1 Running, `vault status` on it says `Sealed: true` (shamir, 3 of 5 key holders). the vault PDB is maxUnavailable: 1. wait for the key holders, or delete the PDB and push on?",
			[]Source{indexedRunbook(t, "pdb-blocking-drain"), indexedRunbook(t, "vault-sealed")},
		},
		{
			"KubePersistentVolumeFillingUp on the data volume of billing-postgres-1; du shows pg_wal taking most of it. what makes WAL pile up, and can the PVC be grown online for now?",
			[]Source{indexedRunbook(t, "pv-filling-up"), indexedRunbook(t, "postgres-wal")},
		},
	} {
		admitsAll(t, c.topic, c.sources...)
	}
}
