package research

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/grounding/internal/runbooktest"
)

// TestPlan: the sub-questions come from the topic's own form, written as
// a person asks them; the angles the topic names come first, and the
// topic is never pasted whole into a template.
func TestPlan(t *testing.T) {
	tests := []struct {
		topic string
		want  []string
	}{
		{
			topic: "Why do Kubernetes pods get OOM killed and how to prevent it",
			want: []string{
				"Why do Kubernetes pods get OOM killed?",
				"What helps when you see Kubernetes pods get OOM killed, and how do you prevent it?",
				"What does it mean to see Kubernetes pods get OOM killed?",
				"How do you notice Kubernetes pods get OOM killed?",
			},
		},
		{
			topic: "Postgres connection pooling",
			want: []string{
				"What is Postgres connection pooling?",
				"What goes wrong with Postgres connection pooling, and why?",
				"How do you check Postgres connection pooling?",
				"What are good practices for Postgres connection pooling?",
			},
		},
		{
			topic: "How to prevent Kafka consumer lag",
			want: []string{
				"How do you prevent Kafka consumer lag?",
				"What is Kafka consumer lag?",
				"What causes Kafka consumer lag?",
				"How can you tell Kafka consumer lag is the problem?",
			},
		},
		{
			topic: "How to tell if a node's clock is skewed",
			want: []string{
				"How can you tell when a node's clock is skewed?",
				"What does it mean when a node's clock is skewed?",
				"What causes it when a node's clock is skewed?",
				"What can you do when a node's clock is skewed, and how do you prevent it?",
			},
		},
		{
			topic: "What is an inactive replication slot and why does it fill the disk?",
			want: []string{
				"What is an inactive replication slot?",
				"Why does an inactive replication slot fill the disk?",
				"How do you notice an inactive replication slot fill the disk?",
				"What helps when you see an inactive replication slot fill the disk, and how do you prevent it?",
			},
		},
		{
			topic: "How to recover a MongoDB replica set member that is too stale",
			want: []string{
				"How do you recover a MongoDB replica set member that is too stale?",
				"What does it take to recover a MongoDB replica set member that is too stale?",
				"Why would you need to recover a MongoDB replica set member that is too stale?",
				"How do you check whether you need to recover a MongoDB replica set member that is too stale?",
			},
		},
		{
			topic: "How does MongoDB elect a new primary?",
			want: []string{
				"How does MongoDB elect a new primary?",
				"Why does MongoDB elect a new primary?",
				"How do you notice MongoDB elect a new primary?",
				"What helps when you see MongoDB elect a new primary, and how do you prevent it?",
			},
		},
		{
			topic: "Redis memory vs Kubernetes node memory pressure",
			want: []string{
				"How do Redis memory and Kubernetes node memory pressure differ?",
				"What is Redis memory, and what is Kubernetes node memory pressure?",
				"What causes Redis memory, and what causes Kubernetes node memory pressure?",
				"How do you tell Redis memory from Kubernetes node memory pressure?",
				"What do you do about Redis memory or Kubernetes node memory pressure?",
			},
		},
		{
			// Two things to choose between, not two problems, compared
			// for one purpose said once.
			topic: "Redis vs Memcached for session storage",
			want: []string{
				"How do Redis and Memcached differ for session storage?",
				"What is Redis, and what is Memcached?",
				"When would you choose Redis over Memcached for session storage?",
				"How do you tell whether Redis or Memcached fits for session storage?",
				"What are the trade-offs between Redis and Memcached for session storage?",
			},
		},
		{
			topic: "What causes etcd leader elections?",
			want: []string{
				"What causes etcd leader elections?",
				"What are etcd leader elections?",
				"How can you tell etcd leader elections are the problem?",
				"How do you prevent etcd leader elections?",
			},
		},
		{
			topic: "Best practices for Postgres vacuum",
			want: []string{
				"What are good practices for Postgres vacuum?",
				"What is Postgres vacuum?",
				"What goes wrong with Postgres vacuum, and why?",
				"How do you check Postgres vacuum?",
			},
		},
		{
			topic: "Should we alert on CPU usage?",
			want: []string{
				"Should you alert on CPU usage, and when?",
				"Why would you need to alert on CPU usage?",
				"How do you check whether you need to alert on CPU usage?",
				"How do you alert on CPU usage?",
			},
		},
		{
			topic: "Why is my disk filling up with logs",
			want: []string{
				"Why is your disk filling up with logs?",
				"What does it mean to see your disk filling up with logs?",
				"How do you notice your disk filling up with logs?",
				"What helps when you see your disk filling up with logs, and how do you prevent it?",
			},
		},
		{
			// A yes-or-no question asked of a situation told is asked
			// first, of that situation, in the asker's words.
			topic: "kafka consumers fell behind overnight. do we need more partitions?",
			want: []string{
				"kafka consumers fell behind overnight: do you need more partitions?",
				"What causes it when kafka consumers fell behind overnight?",
				"How can you tell when kafka consumers fell behind overnight?",
				"What can you do when kafka consumers fell behind overnight, and how do you prevent it?",
			},
		},
		{
			// An alert named is one that fires; an aside in parentheses
			// is not pasted into every question; a question ending in
			// a judgement of itself ("or is that overkill") is asked.
			topic: "KubeletTooManyPods on node pool batch-2 (the old one, max-pods still at 110): do we just raise max-pods to 250, or is that overkill?",
			want: []string{
				"KubeletTooManyPods is firing on node pool batch-2: do you just raise max-pods to 250?",
				"What causes it when KubeletTooManyPods is firing on node pool batch-2?",
				"How can you tell when KubeletTooManyPods is firing on node pool batch-2?",
				"What can you do when KubeletTooManyPods is firing on node pool batch-2, and how do you prevent it?",
			},
		},
		{
			topic: "redis replica lagging behind its master: do we need to take it out of read traffic until it catches up, or is that overkill?",
			want: []string{
				"redis replica lagging behind its master: do you need to take it out of read traffic until it catches up?",
				"What causes redis replica lagging behind its master?",
				"How can you tell redis replica lagging behind its master is the problem?",
				"How do you prevent redis replica lagging behind its master?",
			},
		},
		{
			// "yes or no?" asks for an answer, not a choice of "no".
			topic: "redis replica lagging behind its master: do we take it out of read traffic until it catches up, yes or no?",
			want: []string{
				"redis replica lagging behind its master: do you take it out of read traffic until it catches up?",
				"What causes redis replica lagging behind its master?",
				"How can you tell redis replica lagging behind its master is the problem?",
				"How do you prevent redis replica lagging behind its master?",
			},
		},
		{
			topic: "KubeletTooManyPods on node pool batch-2 (max-pods still at 110). just raise max-pods to 250 - yes/no?",
			want: []string{
				"What does it mean when KubeletTooManyPods is firing on node pool batch-2?",
				"What causes it when KubeletTooManyPods is firing on node pool batch-2?",
				"How can you tell when KubeletTooManyPods is firing on node pool batch-2?",
				"What can you do when KubeletTooManyPods is firing on node pool batch-2, and how do you prevent it?",
			},
		},
		{
			// A story told over several sentences is asked about by its
			// first; the pasted log line after it is not pasted into
			// every question.
			topic: "edge-3 stopped taking new connections around 11:20. error.log: `[alert] 2213#2213: 1024 worker_connections are not enough`, but the upstreams are idle. what do we change?",
			want: []string{
				"What can you do when edge-3 stopped taking new connections around 11:20, and how do you prevent it?",
				"What does it mean when edge-3 stopped taking new connections around 11:20?",
				"What causes it when edge-3 stopped taking new connections around 11:20?",
				"How can you tell when edge-3 stopped taking new connections around 11:20?",
			},
		},
		{
			// A full stop inside a quoted message ends no sentence.
			topic: "consumer group invoice-writer keeps rebalancing with `consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than max.poll.interval.ms`. why?",
			want: []string{
				"What causes it when consumer group invoice-writer keeps rebalancing with `consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than max.poll.interval.ms`?",
				"What does it mean when consumer group invoice-writer keeps rebalancing with `consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than max.poll.interval.ms`?",
				"How can you tell when consumer group invoice-writer keeps rebalancing with `consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than max.poll.interval.ms`?",
				"What can you do when consumer group invoice-writer keeps rebalancing with `consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than max.poll.interval.ms`, and how do you prevent it?",
			},
		},
		{
			// An irregular past tense tells a situation, as "keep
			// falling" does: not "What is kafka consumers fell behind
			// overnight?", "What are good practices for …".
			topic: "kafka consumers fell behind overnight, what should we look at?",
			want: []string{
				"How can you tell when kafka consumers fell behind overnight?",
				"What does it mean when kafka consumers fell behind overnight?",
				"What causes it when kafka consumers fell behind overnight?",
				"What can you do when kafka consumers fell behind overnight, and how do you prevent it?",
			},
		},
		{
			// A situation told, then the question: where to look first.
			topic: "Our Kafka consumers keep falling behind during peak hours, what should we look at?",
			want: []string{
				"How can you tell when your Kafka consumers keep falling behind during peak hours?",
				"What does it mean when your Kafka consumers keep falling behind during peak hours?",
				"What causes it when your Kafka consumers keep falling behind during peak hours?",
				"What can you do when your Kafka consumers keep falling behind during peak hours, and how do you prevent it?",
			},
		},
		{
			topic: "The disk on db-1 keeps filling up. What can we do?",
			want: []string{
				"What can you do when the disk on db-1 keeps filling up, and how do you prevent it?",
				"What does it mean when the disk on db-1 keeps filling up?",
				"What causes it when the disk on db-1 keeps filling up?",
				"How can you tell when the disk on db-1 keeps filling up?",
			},
		},
		{
			topic: "What does it mean when Vault is sealed and how do we get it back?",
			want: []string{
				"What does it mean when Vault is sealed?",
				"What can you do when Vault is sealed, and how do you prevent it?",
				"What causes it when Vault is sealed?",
				"How can you tell when Vault is sealed?",
			},
		},
		{
			// A problem named by its first words, not its head.
			topic: "How can we stop running out of inodes on build servers?",
			want: []string{
				"How do you prevent running out of inodes on build servers?",
				"What does running out of inodes on build servers look like?",
				"What causes running out of inodes on build servers?",
				"How can you tell running out of inodes on build servers is the problem?",
			},
		},
		{
			// Two problems to tell apart, detail after a colon left out.
			topic: "How to tell a failing disk from a disk that is just busy: kernel I/O errors versus high iowait",
			want: []string{
				"How do failing disk and disk that is just busy differ?",
				"How do you tell failing disk from disk that is just busy?",
				"What is failing disk, and what is disk that is just busy?",
				"What causes failing disk, and what causes disk that is just busy?",
				"What do you do about failing disk or disk that is just busy?",
			},
		},
		{
			// The problem is the replica set losing its primary; "or"
			// joins its two parts, not two things to choose between.
			topic: "How to prevent a MongoDB replica set from losing its primary or leaving a secondary too stale",
			want: []string{
				"How do you prevent a MongoDB replica set losing its primary or leaving a secondary too stale?",
				"What does a MongoDB replica set losing its primary or leaving a secondary too stale look like?",
				"What causes a MongoDB replica set losing its primary or leaving a secondary too stale?",
				"How can you tell a MongoDB replica set losing its primary or leaving a secondary too stale is the problem?",
			},
		},
		{
			topic: "How to prevent Terraform state lock conflicts when several pipelines apply the same workspace",
			want: []string{
				"How do you prevent Terraform state lock conflicts when several pipelines apply the same workspace?",
				"What are Terraform state lock conflicts when several pipelines apply the same workspace?",
				"What causes Terraform state lock conflicts when several pipelines apply the same workspace?",
				"How can you tell Terraform state lock conflicts when several pipelines apply the same workspace are the problem?",
			},
		},
		{
			// A situation told, then asking for the options: what to do.
			topic: "Our Redis keeps running out of memory, what are our options?",
			want: []string{
				"What can you do when your Redis keeps running out of memory, and how do you prevent it?",
				"What does it mean when your Redis keeps running out of memory?",
				"What causes it when your Redis keeps running out of memory?",
				"How can you tell when your Redis keeps running out of memory?",
			},
		},
		{
			// A name, a colon, then what about it: the name is kept as
			// the subject's setting, and the thing doing something is a
			// problem.
			topic: "Postgres: WAL piling up on the primary while a replica lags, how are these related?",
			want: []string{
				"What does Postgres WAL piling up on the primary while a replica lags look like?",
				"What causes Postgres WAL piling up on the primary while a replica lags?",
				"How can you tell Postgres WAL piling up on the primary while a replica lags is the problem?",
				"How do you prevent Postgres WAL piling up on the primary while a replica lags?",
			},
		},
		{
			topic: "DNS failures inside the cluster: where to start?",
			want: []string{
				"How can you tell DNS failures inside the cluster are the problem?",
				"What are DNS failures inside the cluster?",
				"What causes DNS failures inside the cluster?",
				"How do you prevent DNS failures inside the cluster?",
			},
		},
		{
			// "which should we use" after a colon is the comparison's
			// own question, not part of its second side.
			topic: "RabbitMQ quorum queues vs classic mirrored queues: which should we use?",
			want: []string{
				"How do RabbitMQ quorum queues and classic mirrored queues differ?",
				"What is RabbitMQ quorum queues, and what is classic mirrored queues?",
				"When would you choose RabbitMQ quorum queues over classic mirrored queues?",
				"How do you tell whether RabbitMQ quorum queues or classic mirrored queues fits?",
				"What are the trade-offs between RabbitMQ quorum queues and classic mirrored queues?",
			},
		},
		{
			topic: "Compare Kafka and RabbitMQ for our event bus",
			want: []string{
				"How do Kafka and RabbitMQ differ for your event bus?",
				"What is Kafka, and what is RabbitMQ?",
				"When would you choose Kafka over RabbitMQ for your event bus?",
				"How do you tell whether Kafka or RabbitMQ fits for your event bus?",
				"What are the trade-offs between Kafka and RabbitMQ for your event bus?",
			},
		},
		{
			// A dash sets the question apart as a colon does.
			topic: "Alertmanager notifications not arriving in Slack — where do I look?",
			want: []string{
				"How can you tell Alertmanager notifications not arriving in Slack is the problem?",
				"What does Alertmanager notifications not arriving in Slack look like?",
				"What causes Alertmanager notifications not arriving in Slack?",
				"How do you prevent Alertmanager notifications not arriving in Slack?",
			},
		},
		{
			// Asked of someone, two questions in one message.
			topic: "Can someone explain transaction ID wraparound in Postgres? Should we be worried?",
			want: []string{
				"What is transaction ID wraparound in Postgres?",
				"What goes wrong with transaction ID wraparound in Postgres, and why?",
				"How do you check transaction ID wraparound in Postgres?",
				"What are good practices for transaction ID wraparound in Postgres?",
			},
		},
		{
			topic: "What are the usual reasons a systemd service ends up in failed state?",
			want: []string{
				"What causes it when a systemd service ends up in failed state?",
				"What does it mean when a systemd service ends up in failed state?",
				"How can you tell when a systemd service ends up in failed state?",
				"What can you do when a systemd service ends up in failed state, and how do you prevent it?",
			},
		},
		{
			// The asker's "we" is the reader's "you"; a bare "Why" asks
			// the cause.
			topic: "We keep getting paged for PgBouncer pool saturation at month end. Why, and what should we change?",
			want: []string{
				"What causes it when you keep getting paged for PgBouncer pool saturation at month end?",
				"What can you do when you keep getting paged for PgBouncer pool saturation at month end, and how do you prevent it?",
				"What does it mean when you keep getting paged for PgBouncer pool saturation at month end?",
				"How can you tell when you keep getting paged for PgBouncer pool saturation at month end?",
			},
		},
		{
			topic: "Kafka consumer lag explained",
			want: []string{
				"What is Kafka consumer lag?",
				"What causes Kafka consumer lag?",
				"How can you tell Kafka consumer lag is the problem?",
				"How do you prevent Kafka consumer lag?",
			},
		},
		{
			// A quoted message keeps its colon; "what does X mean" asks
			// what X is.
			topic: "what does 'dial tcp: lookup api on 10.0.0.10:53: no such host' mean? only on some pods",
			want: []string{
				"What is 'dial tcp: lookup api on 10.0.0.10:53: no such host'?",
				"What goes wrong with 'dial tcp: lookup api on 10.0.0.10:53: no such host', and why?",
				"How do you check 'dial tcp: lookup api on 10.0.0.10:53: no such host'?",
				"What are good practices for 'dial tcp: lookup api on 10.0.0.10:53: no such host'?",
			},
		},
		{
			// The situation that raised it, then two problems to tell
			// apart: the comparison is the topic.
			topic: "Writes fail with 'No space left on device' but df shows free space. How do I tell a full disk from running out of inodes?",
			want: []string{
				"How do full disk and running out of inodes differ?",
				"How do you tell full disk from running out of inodes?",
				"What is full disk, and what is running out of inodes?",
				"What causes full disk, and what causes running out of inodes?",
				"What do you do about full disk or running out of inodes?",
			},
		},
		{
			// A detail after the colon, then a question about "that".
			topic: "Patroni failover: the old primary came back as a second leader. why does that happen and how do we prevent it?",
			want: []string{
				"What goes wrong with Patroni failover, and why?",
				"What are good practices for Patroni failover?",
				"What is Patroni failover?",
				"How do you check Patroni failover?",
			},
		},
		{
			// A situation told with a verb the planner does not know is
			// asked about as a situation, not pasted into a thing's
			// templates ("What are good practices for every rolling
			// deploy gives us …?").
			topic: "every rolling deploy gives us a burst of 502s through the ingress controller for about ten seconds. any ideas?",
			want: []string{
				"How can you tell when every rolling deploy gives us a burst of 502s through the ingress controller for about ten seconds?",
				"What does it mean when every rolling deploy gives us a burst of 502s through the ingress controller for about ten seconds?",
				"What causes it when every rolling deploy gives us a burst of 502s through the ingress controller for about ten seconds?",
				"What can you do when every rolling deploy gives us a burst of 502s through the ingress controller for about ten seconds, and how do you prevent it?",
			},
		},
		{
			topic: "Scaling Kafka consumers",
			want: []string{
				"What is scaling Kafka consumers?",
				"What goes wrong with scaling Kafka consumers, and why?",
				"How do you check scaling Kafka consumers?",
				"What are good practices for scaling Kafka consumers?",
			},
		},
	}
	for _, tt := range tests {
		got, err := OfflinePlanner{}.Plan(t.Context(), tt.topic)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Plan(%q) (-want +got):\n%s", tt.topic, diff)
		}
		for _, q := range got {
			// A how-question asked as itself is the person's own
			// question, not the topic pasted into a template.
			if q != tt.topic && strings.Contains(q, strings.TrimRight(tt.topic, "?")) && len(strings.Fields(tt.topic)) > 4 {
				t.Errorf("Plan(%q) pastes the whole topic into %q", tt.topic, q)
			}
		}
	}
}

func TestRefineSharpensGapsOnly(t *testing.T) {
	p := OfflinePlanner{}
	topic := "TLS certificate expiry"
	plan, _ := p.Plan(t.Context(), topic)
	sharpened := map[string]int{}
	gap := plan[2] // how to tell
	newPlan, pending, err := p.Refine(t.Context(), topic, plan, Critique{Gaps: []string{gap}}, sharpened)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Which checks show TLS certificate expiry?"}
	if diff := cmp.Diff(want, pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	wantPlan := append(append(append([]string{}, plan[:2]...), want...), plan[3])
	if diff := cmp.Diff(wantPlan, newPlan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	// The same gap again gets the other phrasing, not the same words.
	_, pending2, _ := p.Refine(t.Context(), topic, newPlan, Critique{Gaps: pending}, sharpened)
	if diff := cmp.Diff([]string{"How can you tell TLS certificate expiry is the problem?"}, pending2); diff != "" {
		t.Errorf("second refinement (-want +got):\n%s", diff)
	}
	// No gaps named: every question is sharpened.
	_, all, _ := p.Refine(t.Context(), topic, plan, Critique{}, map[string]int{})
	if len(all) != len(plan) {
		t.Errorf("refine without gaps sharpened %d questions, want %d", len(all), len(plan))
	}
}

func TestKeyPhrasesAndQuery(t *testing.T) {
	if diff := cmp.Diff([]string{"impact", "large language models", "software testing"},
		keyPhrases("impact of large language models on software testing")); diff != "" {
		t.Errorf("keyPhrases (-want +got):\n%s", diff)
	}
	for topic, want := range map[string]string{
		"How do Kubernetes operators work?": "Kubernetes operators",
		"Explain the CAP theorem.":          "CAP theorem",
		"rust async runtimes":               "rust async runtimes",
	} {
		if got := subject(topic); got != want {
			t.Errorf("subject(%q) = %q, want %q", topic, got, want)
		}
	}
	if got, want := searchQuery("What are the risks and limitations of Node.js streams?"), "risks limitations node.js streams"; got != want {
		t.Errorf("searchQuery = %q, want %q", got, want)
	}
	if got, want := searchQuery("What is Kubernetes operators, asked by jane.doe@example.com and @jdoe?"), "kubernetes operators asked"; got != want {
		t.Errorf("searchQuery = %q, want %q (no e-mail address or handle)", got, want)
	}
	if got := keyPhrases("Kubernetes operators, asked by jane.doe@example.com"); slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, "jane") }) {
		t.Errorf("keyPhrases = %q, want no phrase from the e-mail address", got)
	}
}

func TestCritique(t *testing.T) {
	topic := "Kubernetes operators"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	ev, _ := richEvidence("x", 10)
	var rich []Source
	for _, e := range ev {
		rich = append(rich, Source{Title: e.Title, URL: e.URL, Snippet: e.Snippet})
	}
	tests := []struct {
		name    string
		sources []Source
		want    Critique
	}{
		{
			name:    "no evidence",
			sources: nil,
			want: Critique{
				Score: 0,
				Reasons: []string{
					"coverage: 0 of 4 sub-questions have at least 2 sources above the relevance bar 0.50",
					"sources: 0 on topic (target 8)",
					"diversity: 0 distinct domains (target 4)",
					"agreement: 0 of 4 sub-questions corroborated by sources from 2 or more domains",
				},
				Gaps: plan,
			},
		},
		{
			// An off-topic source counts for nothing and is named.
			name:    "one off-topic source",
			sources: []Source{{Title: "Cooking pasta", URL: "https://food.example/pasta", Snippet: "Boil water and add salt."}},
			want: Critique{
				Score: 0,
				Reasons: []string{
					"coverage: 0 of 4 sub-questions have at least 2 sources above the relevance bar 0.50",
					"sources: 0 on topic (target 8)",
					"diversity: 0 distinct domains (target 4)",
					"agreement: 0 of 4 sub-questions corroborated by sources from 2 or more domains",
					"dropped 1 off-topic source: Cooking pasta (https://food.example/pasta)",
				},
				Gaps: plan,
			},
		},
		{
			name:    "every angle covered by several domains",
			sources: rich,
			want: Critique{
				Score: 1,
				Reasons: []string{
					"coverage: 4 of 4 sub-questions have at least 2 sources above the relevance bar 0.50",
					"sources: 8 on topic (target 8)",
					"diversity: 7 distinct domains (target 4)",
					"agreement: 4 of 4 sub-questions corroborated by sources from 2 or more domains",
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OfflineCritic{}.Critique(t.Context(), topic, plan, tt.sources)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Critique (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithoutSetting(t *testing.T) {
	for in, want := range map[string]string{
		"running out of inodes on build servers":                      "running out of inodes",
		"your Kafka consumers keep falling behind during peak hours":  "your Kafka consumers keep falling behind",
		"pods get OOM killed in Kubernetes":                           "pods get OOM killed in Kubernetes",
		"disk filling up on db-1":                                     "disk filling up on db-1",
		"lag in production":                                           "lag in production",
		"Postgres connection pooling":                                 "Postgres connection pooling",
		"After last night's deploy, `systemctl status shipper` fails": "`systemctl status shipper` fails",
		"During the nightly backup, nodes go NotReady":                "nodes go NotReady",
		"after upgrade, broken":                                       "after upgrade, broken",
	} {
		if got := withoutSetting(in); got != want {
			t.Errorf("withoutSetting(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestComparisonSides: a topic that asks which of two things to pick is
// answered only by a source about both; a runbook about one side's own
// trouble is no evidence, while the same runbook answers a topic about
// that trouble, and one of two problems to tell apart.
func TestComparisonSides(t *testing.T) {
	backlog := Source{
		Title:   "RabbitMQ — queue backlog growing",
		URL:     "https://runbooks.example/rabbitmq-backlog",
		Snippet: "RabbitMQ queues grow when consumers fall behind publishers. Check rabbitmqctl list_queues name messages consumers; scale the consumers or raise their prefetch.",
	}
	choosing := Source{
		Title:   "Choosing a message broker: Kafka or RabbitMQ",
		URL:     "https://docs.example/brokers",
		Snippet: "Kafka keeps an ordered log that consumers replay; RabbitMQ routes messages to queues and deletes them once acknowledged. Pick Kafka for event streams many consumers replay, RabbitMQ for task queues.",
	}
	admitted := func(topic string, sources ...Source) []string {
		a := assessed(t, topic, sources)
		var urls []string
		for i, s := range sources {
			if a.onTopic[i] {
				urls = append(urls, s.URL)
			}
		}
		return urls
	}
	if got := admitted("Compare Kafka and RabbitMQ for our event bus", backlog, choosing); !slices.Equal(got, []string{choosing.URL}) {
		t.Errorf("choice: admitted %q, want only %s", got, choosing.URL)
	}
	if got := admitted("RabbitMQ quorum queues vs classic mirrored queues: which should we use?", backlog); len(got) != 0 {
		t.Errorf("choice nothing covers: admitted %q, want none", got)
	}
	if got := admitted("Why does a RabbitMQ queue backlog keep growing?", backlog); !slices.Equal(got, []string{backlog.URL}) {
		t.Errorf("the backlog itself: admitted %q, want %s", got, backlog.URL)
	}

	// Two problems to tell apart: a source about either side is about
	// the topic, though it says little of the other side.
	ports := Source{
		Title:   "Out of ephemeral ports (cannot assign requested address)",
		URL:     "https://runbooks.example/ephemeral-ports",
		Snippet: "Hosts that open many short outbound connections to one destination run out of local ports: connect() fails with EADDRNOTAVAIL. Check ss -s for TIME-WAIT sockets and net.ipv4.ip_local_port_range.",
	}
	if got := admitted("Ephemeral port exhaustion vs conntrack table full: how do I tell which one I have?", ports); !slices.Equal(got, []string{ports.URL}) {
		t.Errorf("two problems: admitted %q, want %s", got, ports.URL)
	}

	// Each side selects its own source, told by "one" or by one word
	// ("full disk"); a source near both sides but about neither does not
	// come in with them.
	ready := Source{
		Title:   "Kubernetes: pods Running but not Ready (readiness probe failing)",
		URL:     "https://runbooks.example/readiness",
		Snippet: "A pod whose readiness probe fails stays Running but is removed from the Service endpoints. kubectl describe pod shows Readiness probe failed; check what the endpoint checks.",
	}
	crash := Source{
		Title:   "Kubernetes — pod in CrashLoopBackOff",
		URL:     "https://runbooks.example/crashloop",
		Snippet: "A container that keeps exiting is restarted with a growing back-off: the pod shows CrashLoopBackOff. Read kubectl logs --previous and the exit code in kubectl describe pod.",
	}
	rollout := Source{
		Title:   "Kubernetes — deployment rollout stuck",
		URL:     "https://runbooks.example/rollout-stuck",
		Snippet: "A rollout stalls when new pods never become Ready: a readiness probe failing or a pod in CrashLoopBackOff keeps progressDeadlineSeconds ticking. kubectl rollout status shows it waiting.",
	}
	topic := "How do I tell a pod that fails its readiness probe from one in CrashLoopBackOff?"
	if got := admitted(topic, ready, crash, rollout); !slices.Equal(got, []string{ready.URL, crash.URL}) {
		t.Errorf("%q: admitted %q, want the readiness and CrashLoopBackOff runbooks only", topic, got)
	}
	full := Source{
		Title:   "Node — filesystem almost full",
		URL:     "https://runbooks.example/disk-full",
		Snippet: "A filesystem above 90% used: find what grew with du -xh --max-depth=1 and df -h, rotate or delete logs, expand the volume.",
	}
	inodes := Source{
		Title:   "Node — filesystem out of inodes",
		URL:     "https://runbooks.example/inodes",
		Snippet: "Writes fail with 'No space left on device' while df -h shows free space: df -i shows IUse% at 100%. Find directories with millions of small files and delete them.",
	}
	topic = "df -h says 30% free but writes fail with 'No space left on device'. how do I tell a full disk from running out of inodes?"
	if got := admitted(topic, full, inodes); !slices.Equal(got, []string{full.URL, inodes.URL}) {
		t.Errorf("%q: admitted %q, want both filesystem runbooks", topic, got)
	}

	// Two remedies for a problem told: the problem's runbooks answer the
	// choice, and the colon's name is both sides' (Postgres's
	// max_connections, not MySQL's).
	pg := Source{
		Title:   "Postgres — too many connections",
		URL:     "https://runbooks.example/postgres-connections",
		Snippet: "Clients fail with FATAL: sorry, too many clients already when max_connections is reached. Put PgBouncer in front in transaction mode rather than raising max_connections: each backend costs memory.",
	}
	mysql := Source{
		Title:   "MySQL — too many connections",
		URL:     "https://runbooks.example/mysql-connections",
		Snippet: "MySQL refuses clients with ERROR 1040 Too many connections when max_connections is reached. Check SHOW PROCESSLIST for sleeping connections and raise max_connections with care.",
	}
	topic = "Postgres: PgBouncer in front, or just raise max_connections? We hit 'sorry, too many clients already' every time the app scales out."
	if got := admitted(topic, pg, mysql); !slices.Equal(got, []string{pg.URL}) {
		t.Errorf("%q: admitted %q, want the Postgres runbook only", topic, got)
	}
}

// TestAlternativeSides: two causes offered for a situation told ("stuck
// workers or a rabbitmq problem?") are told apart like "tell X from Y":
// each side's best source is about the topic, a source only sharing a
// side's one word ("worker connections") is not.
func TestAlternativeSides(t *testing.T) {
	// The runbooks as indexed: a side's source must also be about the
	// story told (toldFloor), which a snippet of two sentences is not.
	celery := readRunbook(t, filepath.Join(runbooktest.Dir(), "celery-backlog.md"))
	rabbit := readRunbook(t, filepath.Join(runbooktest.Dir(), "rabbitmq-backlog.md"))
	nginx := readRunbook(t, filepath.Join(runbooktest.Dir(), "..", "..", "eval", "heldout4", "runbooks", "nginx-worker-connections.md"))
	topic := "celery queue is at 40k tasks and still growing, flower shows the workers online but they barely finish anything. stuck workers or a rabbitmq problem? how do i tell"
	a := assessed(t, topic, []Source{celery, rabbit, nginx})
	if !a.onTopic[0] || !a.onTopic[1] || a.onTopic[2] {
		t.Errorf("%q: admitted celery %v, rabbitmq %v, nginx %v; want the first two only", topic, a.onTopic[0], a.onTopic[1], a.onTopic[2])
	}
}

// TestRemedyOfOneWord: a thing to do of one specific word ("more
// replicas") admits no source for its word alone: the replication
// runbook is plainly about replicas, not about lookups timing out.
func TestRemedyOfOneWord(t *testing.T) {
	dns := Source{
		Title:   "DNS resolution failures in the cluster",
		URL:     "https://runbooks.example/dns-resolution",
		Snippet: "Pods log 'no such host' or 'i/o timeout' on lookups when CoreDNS is overloaded. Check CoreDNS CPU against its limit and the errors plugin's log; add CoreDNS replicas or run NodeLocal DNSCache so lookups stay on the node.",
	}
	replicas := Source{
		Title:   "Redis replicas out of sync",
		URL:     "https://runbooks.example/redis-replication",
		Snippet: "A Redis replica that lost its link to the master logs 'Connecting to MASTER' in a loop. Check INFO replication on every replica and the master's repl-backlog-size; more replicas add load on the master during a full resync.",
	}
	topic := "since the morning peak about 2% of lookups from the shop pods fail with `dial tcp: lookup api.partner.example: no such host`, and both coredns pods sit at their cpu limit. More replicas, or NodeLocal DNSCache?"
	if f := parseForm(topic); !f.remedies {
		t.Fatalf("%q: sides %q / %q not read as two things to do", topic, f.a, f.b)
	}
	a := assessed(t, topic, []Source{dns, replicas})
	if !a.onTopic[0] || a.onTopic[1] {
		t.Errorf("%q: admitted dns %v, replicas %v; want dns only", topic, a.onTopic[0], a.onTopic[1])
	}
}

// TestToldSetting: what was told beside a comparison is kept as the
// situation its sides are told apart or chosen in, and "one" is the
// first side's thing.
func TestToldSetting(t *testing.T) {
	for _, c := range []struct{ topic, a, b, setting string }{
		{"How do I tell a pod that fails its readiness probe from one in CrashLoopBackOff?", "pod that fails its readiness probe", "pod in CrashLoopBackOff", ""},
		{"how to tell a failing disk from a busy one", "failing disk", "busy disk", ""},
		{"df -h says 30% free but writes fail with 'No space left on device'. how do I tell a full disk from running out of inodes?", "full disk", "running out of inodes", "df -h says 30% free but writes fail with 'No space left on device'"},
		{"Postgres: PgBouncer in front, or just raise max_connections? We hit 'sorry, too many clients already' every time the app scales out.", "Postgres PgBouncer in front", "just raise max_connections", "We hit 'sorry, too many clients already' every time the app scales out"},
		{"Kafka vs RabbitMQ for our event bus", "Kafka", "RabbitMQ", ""},
		// Two causes offered for a situation told are told apart in it.
		{"celery queue keeps growing and the workers barely finish anything. stuck workers or a rabbitmq problem? how do i tell", "stuck workers", "a rabbitmq problem", "celery queue keeps growing and the workers barely finish anything"},
		{"One of our nodes rebooted overnight. Was it the OOM killer or bad RAM? What in the logs tells the two apart?", "OOM killer", "bad RAM", "One of our nodes rebooted overnight"},
		{"Gaps in the dashboards while the local Prometheus looks fine. Is remote write falling behind or are targets not being scraped, and how do I tell which?", "remote write falling behind", "targets not being scraped", "Gaps in the dashboards while the local Prometheus looks fine"},
		{"Should we use Redis or Memcached for sessions?", "", "", ""},
		{"Go worker died with 'runtime: failed to create new OS thread'. goroutine leak or are we hitting the pod's pids limit?", "goroutine leak", "hitting the pod's pids limit", "Go worker died with 'runtime: failed to create new OS thread'"},
		{"The HPA scaled orders-worker to 10 replicas but only 4 are running. Are we out of node capacity or hitting the namespace quota?", "out of node capacity", "hitting the namespace quota", "The HPA scaled orders-worker to 10 replicas but only 4 are running"},
		// Context told beside a choice is no problem the choice is for.
		{"Argo Rollouts or Flagger for canary releases? Everything is already deployed with Argo CD.", "Argo Rollouts", "Flagger", ""},
	} {
		f := parseForm(c.topic)
		if f.a != c.a || f.b != c.b || f.setting != c.setting {
			t.Errorf("%q: sides %q / %q, setting %q; want %q / %q, %q", c.topic, f.a, f.b, f.setting, c.a, c.b, c.setting)
		}
	}
}

// TestColonDetail: the words after a colon that ask nothing still say
// what the topic is about, in the words a runbook may use.
func TestColonDetail(t *testing.T) {
	loki := Source{
		Title:   "Loki ingestion rate limited — checklist",
		URL:     "https://runbooks.example/loki-rate-limited",
		Snippet: "Confirm it is rate limiting, not an outage: sum by (tenant, reason) (rate(loki_discarded_samples_total[5m])). Agents log server returned HTTP status 429 Too Many Requests (429): Ingestion rate limit exceeded for user.",
	}
	topic := "Loki is rejecting our logs with 429s: rate limits explained"
	if a := assessed(t, topic, []Source{loki}); !a.onTopic[0] {
		t.Errorf("%q: the Loki rate-limit runbook is not admitted (%+v)", topic, a.sections[0].Scores)
	}
}

// TestQuestionAfterItsSetting: a question that names its own subject
// after a name or a situation told is about that subject, the name or
// situation kept beside it; a question about "it" stays about the name.
func TestQuestionAfterItsSetting(t *testing.T) {
	for _, c := range []struct{ topic, subject, name, setting, a, b string }{
		{"Vault: how do we migrate from Shamir unseal keys to auto-unseal with AWS KMS, and what happens to the recovery keys afterwards?", "migrate from Shamir unseal keys to auto-unseal with AWS KMS", "Vault", "", "", ""},
		{"Redis: why does it evict keys?", "Redis", "", "", "", ""},
		// A vague "what is …" after a situation told asks about it.
		{"load average is 38 on an 8 core vm but top says cpu is ~70% idle. what is actually being counted in the load then?", "load average is 38 on an 8 core vm but top says cpu is ~70% idle", "", "", "", ""},
		{"We still run our legacy Kafka cluster on ZooKeeper. How does the migration to KRaft work, and can it be done without downtime?", "migration to KRaft", "", "We still run our legacy Kafka cluster on ZooKeeper", "", ""},
		{"nginx edge proxies: '1024 worker_connections are not enough' vs 'accept4() failed (24: Too many open files)' — same problem or two different limits?", "'1024 worker_connections are not enough' and 'accept4() failed (24: Too many open files)'", "", "nginx edge proxies", "'1024 worker_connections are not enough'", "'accept4() failed (24: Too many open files)'"},
	} {
		f := parseForm(c.topic)
		if f.subject() != c.subject || f.name != c.name || f.setting != c.setting || f.a != c.a || f.b != c.b {
			t.Errorf("%q: subject %q, name %q, setting %q, sides %q / %q; want %q, %q, %q, %q / %q", c.topic, f.subject(), f.name, f.setting, f.a, f.b, c.subject, c.name, c.setting, c.a, c.b)
		}
	}
	// Two messages set side by side are two problems, not two things
	// to pick from.
	for _, topic := range []string{
		"'worker_connections are not enough' vs 'Too many open files'",
		"‘worker_connections are not enough’ vs ‘Too many open files’",
		"“upstream timed out” vs “no live upstreams”",
		"`connection reset by peer` vs `broken pipe`",
	} {
		if f := parseForm(topic); f.a == "" || f.choice() {
			t.Errorf("%q: two quoted messages read as a choice or not as two sides: %s", topic, f)
		}
	}
}

// TestWhatIsGoingOn: "what's going on?" after a situation told asks what
// causes it, whatever messages (in backquotes too) the situation quotes.
func TestWhatIsGoingOn(t *testing.T) {
	topic := "We added an Ingress for shop.acme.example an hour ago and it still gets a 404 from the default backend. The controller log has `[emerg] duplicate location \"/api\"`. What's going on?"
	f := parseForm(topic)
	if !slices.ContainsFunc(f.asked, func(k questionKind) bool { return k.name == kindCause.name }) || !strings.Contains(f.subject(), "`[emerg] duplicate location \"/api\"`") {
		t.Errorf("%q: asked %v about %q; want the cause of the situation told, its message whole", topic, f.asked, f.subject())
	}
}

// TestRelevanceReadsTheDocument: a source is judged on its document's
// text, as enrichment judges it, not only on the snippet a section
// quotes: a runbook quotes the error message below its overview.
func TestRelevanceReadsTheDocument(t *testing.T) {
	overview := "Logical replication copies row changes from a publication to a subscription. The apply worker on the subscriber reads them from a slot on the publisher."
	runbook := Source{
		Title:   "Postgres logical replication: subscription stopped or slot lagging",
		URL:     "https://runbooks.example/postgres-logical-replication",
		Snippet: overview,
		Text: overview + "\n\n## Diagnose\n\n1. On the subscriber, the log says why the apply worker stops: " +
			"`logical replication target relation \"public.x\" is missing replicated column` after a migration added a column on the publisher only.\n" +
			"2. Add the column on the subscriber, then ALTER SUBSCRIPTION … ENABLE.",
	}
	topic := `'logical replication target relation "public.invoices" is missing replicated column: "due_date"' on the analytics subscriber since last night's migration. How do we get it applying again?`
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	if a := assess(topic, plan, []Source{runbook}); !a.onTopic[0] {
		t.Errorf("the runbook quoting the message below its overview is not admitted: %+v", a.sections[0].Scores)
	}
	run := &Run{Topic: topic, Plan: plan, Sources: []Source{runbook}}
	r := buildReport(run, time.Now())
	if len(r.Sources) != 1 || r.Sources[0].Text != "" {
		t.Errorf("report sources %d, first with text %v; want the runbook cited, without its document's text", len(r.Sources), len(r.Sources) > 0 && r.Sources[0].Text != "")
	}
	without := runbook
	without.Text = ""
	if a := assess(topic, plan, []Source{without}); a.onTopic[0] {
		t.Errorf("admitted on its overview alone: the test does not show the document is read")
	}
}

// TestNoProblemTold: a question that tells no problem (how to migrate,
// upgrade, size or choose) is not answered by a runbook on the same
// system's failures that is only near it; the same runbook answers the
// failure itself.
func TestNoProblemTold(t *testing.T) {
	sealed := Source{
		Title:   "Vault — sealed or unavailable",
		URL:     "https://runbooks.example/vault-sealed",
		Snippet: "Alerts: VaultSealed fires when a Vault node reports sealed = true. Diagnose: vault status on each node: sealed, HA mode and the active node. A node restarts sealed unless auto-unseal works: check the KMS key permissions and the auto-unseal log lines. Applications fail to fetch secrets and log permission denied on port 8200. Mitigate: unseal with the key holders (vault operator unseal), or fix the KMS permissions for auto-unseal and restart.",
	}
	admitted := func(topic string) bool {
		return assessed(t, topic, []Source{sealed}).onTopic[0]
	}
	if topic := "Vault: how do we migrate from Shamir unseal keys to auto-unseal with AWS KMS?"; admitted(topic) {
		t.Errorf("%q: the sealed-Vault runbook is admitted for a migration it does not describe", topic)
	}
	if topic := "Vault came back sealed after a restart and every app fails to read secrets. How do we unseal it?"; !admitted(topic) {
		t.Errorf("%q: the sealed-Vault runbook is not admitted", topic)
	}
	for _, c := range []struct {
		topic string
		none  bool
	}{
		{"EKS 1.29 -> 1.31 upgrade: in which order do the control plane and node groups go?", true},
		{"JetStream capacity planning: about 400 GB retained across streams at R3", true},
		{"every rolling deploy gives us a burst of 502s", false},
		{"Redis Sentinel or Redis Cluster for our session store?", true},
		{"Postgres connection pooling", true},
		{"Vault keeps coming back sealed", false},
		{"how do I tell a full disk from running out of inodes", false},
		{"df -h shows space but writes fail with 'No space left on device'", false},
		{"the nightly backup didn't run and nobody noticed", false},
		// A symptom told in a runbook's words is a problem told.
		{"opensearch request circuit breaker tripping on the coordinating nodes + heap sizing for the bigger boxes", false},
		{"ci runners crawl every afternoon", false},
		{"all nodes of the batch pool above 95% cpu since monday", false},
		{"opensearch heap sizing for the bigger boxes", true},
		// An alert named has fired.
		{"what should we do about etcdDatabaseQuotaLowSpace on prod-eu1", false},
		// A kind of object is named as alerts are, and tells nothing; an
		// exception thrown does.
		{"PodDisruptionBudget for the ingress controller: how many replicas?", true},
		{"OutOfMemoryError in report-service", false},
		// A failure told by its own name: a poison message, a zombie
		// process, an offset oscillating, a client starving the others.
		{"rabbitmq: one poison message on the refunds queue getting requeued forever", false},
		{"do zombie processes count against a pod's pids limit?", false},
		{"PTP offset oscillating on the order-gw hosts since someone turned chronyd on", false},
		{"keeping one noisy tenant from starving the others", false},
		// A cluster's health told by its colour, shards left unassigned.
		{"opensearch upgrade to 2.17: the cluster is still yellow an hour after the last node came back", false},
		{"elasticsearch 8.15.3 patch: 40 replica shards UNASSIGNED with reason NODE_LEFT", false},
		{"red/black deployments or canaries for the checkout service?", true},
	} {
		if got := parseForm(c.topic).tellsNoProblem(c.topic); got != c.none {
			t.Errorf("%q tells no problem = %v, want %v", c.topic, got, c.none)
		}
	}
}

// TestTaskAsked: a topic asking how to upgrade or migrate something, or
// what it costs, is answered only by a source that speaks of that task,
// not by the system's failure runbook, however plainly it is about the
// system; a situation that only mentions a migration or a move asks no
// task.
func TestTaskAsked(t *testing.T) {
	for _, c := range []struct {
		topic string
		asked int
	}{
		{"We still have ~300 PVCs on gp2. How do we move them to gp3 without recreating the volumes, and how much would we actually save?", 2},
		{"ingress-nginx is being retired — migrate to Gateway API now or wait?", 1},
		{"MongoDB 7.0 -> 8.0 on profiles-rs: rolling upgrade order for a three-member replica set", 1},
		{"prometheus agent mode vs full prometheus pairs — worth switching?", 1},
		{"Replacing host crontabs with systemd timers - how do we set one up?", 1},
		{"cost comparison: our self-run memcached pool vs ElastiCache", 1},
		{"'relation \"public.invoices\" is missing replicated column' on the subscriber since last night's migration. How do we get it applying again?", 0},
		{"search-api p99 went from 180ms to 900ms but p50 barely moved", 0},
		{"Why do PodDisruptionBudgets block node drains and upgrades?", 0},
		{"the VIP moved to lb-2 but clients still reach lb-1", 0},
		// A name is no cost, nor a cost told beside what is asked.
		{"Why would a Go service run out of ports? pricing-api calls fx-rates at ~3k req/s and logs `connect: cannot assign requested address`.", 0},
		{"logging ES fell behind since the data nodes moved to the cheaper volumes: the write queue is full. add data nodes, or is it the disks?", 0},
		{"thanos or mimir for long-term metrics, and what does each cost to run?", 1},
		// What a setting does to something else is its toll, not a price.
		{"reporting queries on the billing-pg replica die with `canceling statement due to conflict with recovery`. hot_standby_feedback, or a longer max_standby_streaming_delay? what does each one cost us on the primary", 0},
		{"synchronous_commit = remote_apply: what does it cost us in latency compared with on?", 0},
		{"what does a deep from/size window cost the es cluster?", 0},
		{"Which archive tier for backups: what does each cost us?", 1},
		{"edge nginx hits `worker_connections are not enough` since live chat shipped. how many connections does one websocket cost nginx, and what do we raise?", 0},
		{"Glacier for the backups: what would the storage and request costs come to?", 1},
		// An upgrade told as when something started asks none.
		{"zookeeper 4lw whitelist: since the zk-solr upgrade from 3.4 to 3.8 our leader check only prints `srvr is not executed because it is not in the whitelist.` how else do we see which one is the leader?", 0},
		{"consumers lag since the move to gp3. why?", 0},
		{"should we upgrade zk-solr from 3.4 to 3.8 before the kafka move?", 1},
		// A service named pricing asks no price; a pricing model does.
		{"KubeHpaMaxedOut on orders-api at 30/30. What did change: p99 of its calls to pricing went from 80ms to 900ms. raise maxReplicas?", 0},
		{"Managed Kafka: what is the pricing model for partitions and storage?", 1},
		// Nor is what a program printed a question on what it did.
		{"billing-api pods crash-loop since the deploy, `kubectl logs --previous` ends at `Migrating schema \"public\" to version 12 - add index` and the ALTER waits on a lock. kill the blocker?", 0},
		// A measure going from one value to another is no version.
		{"etcd db on prod-eu1 went from 1.2 to 5.1 GB in a month and the audit log says most writes are Events. put --event-ttl back to 1h?", 0},
		{"p99 went 0.8 -> 2.5s after the 4.1 -> 4.2 bump, roll back?", 1},
	} {
		if got := len(tasksAsked(c.topic)); got != c.asked {
			t.Errorf("%q asks %d tasks, want %d", c.topic, got, c.asked)
		}
	}
	replicaSet := Source{
		Title:   "MongoDB replica set: member down, no primary, or secondary lagging",
		URL:     "https://runbooks.example/mongodb-replica-set",
		Snippet: "Alerts: MongodbReplicaMemberDown, MongodbReplicationLag. A three-member replica set keeps a primary while two members vote. Diagnose: rs.status() on any member: the state of each member, optimeDate and lastHeartbeatMessage; a member whose featureCompatibilityVersion differs from the set's cannot rejoin it. Restart members one at a time, secondaries first, so the set keeps its primary. Mitigate: restart the member, resync it from a healthy secondary when it fell off the oplog.",
	}
	upgrade := replicaSet
	upgrade.URL = "https://runbooks.example/mongodb-upgrade"
	upgrade.Title = "MongoDB: rolling upgrade of a replica set"
	upgrade.Snippet = "Upgrade a MongoDB replica set one member at a time: the secondaries first, then step the primary down with rs.stepDown() and upgrade it. Set featureCompatibilityVersion only when every member runs the new version."
	topic := "MongoDB 7.0 -> 8.0 on profiles-rs: rolling upgrade order for a three-member replica set, and when is it safe to bump featureCompatibilityVersion?"
	if a := assessed(t, topic, []Source{replicaSet, upgrade}); a.onTopic[0] || !a.onTopic[1] {
		t.Errorf("%q: failure runbook admitted %v, upgrade runbook %v; want only the one that speaks of upgrading", topic, a.onTopic[0], a.onTopic[1])
	}
	failure := "MongoDB replica set profiles-rs has no primary and rs.status() shows a member down. How do we get a primary back?"
	if a := assessed(t, failure, []Source{replicaSet}); !a.onTopic[0] {
		t.Errorf("%q: the replica-set runbook is not admitted for its own failure", failure)
	}
}

// TestTiedSide: a side of a comparison that several sources meet equally,
// none plainly ("a too-small pool": a thread pool's runbook as much as
// PgBouncer's), selects only the one the whole topic is most about.
func TestTiedSide(t *testing.T) {
	pgbouncer := Source{
		Title:   "PgBouncer — clients waiting for a server connection",
		URL:     "https://runbooks.example/pgbouncer-pool-saturated",
		Snippet: "Alerts: PgBouncerClientsWaiting. Clients queue in PgBouncer when every server connection of the pool is busy: SHOW POOLS shows cl_waiting above zero and sv_idle at zero, and clients fail with query_wait_timeout. A pool that is too small for the load, or slow queries holding connections, both do it. Mitigate: raise default_pool_size within Postgres's max_connections, or find the slow queries.",
	}
	threads := Source{
		Title:   "Elasticsearch — bulk indexing rejected with 429",
		URL:     "https://runbooks.example/es-write-rejections",
		Snippet: "Alerts: ElasticsearchWriteRejections. The write thread pool's queue is full and the node rejects bulk requests with 429. A queue too small for bursts, or hot shards on one node. Mitigate: spread the shards, slow the bulk clients; a bigger queue only hides it.",
	}
	cache := Source{
		Title:   "Memcached — evictions and connection limits",
		URL:     "https://runbooks.example/memcached-evictions",
		Snippet: "Alerts: MemcachedEvictions. Items are evicted when the slab pool for their size is too small; listen_disabled_num grows when maxconns is reached. Mitigate: give memcached more memory or raise -c.",
	}
	topic := "Since the noon peak the API gets `ERROR: query_wait_timeout` from PgBouncer and SHOW POOLS has cl_waiting around 300 while Postgres is mostly idle. How do we tell a too-small pool from PgBouncer itself being the bottleneck?"
	a := assessed(t, topic, []Source{pgbouncer, threads, cache})
	if !a.onTopic[0] || a.onTopic[1] || a.onTopic[2] {
		t.Errorf("%q: admitted PgBouncer %v, thread pool %v, memcached %v; want only PgBouncer's runbook", topic, a.onTopic[0], a.onTopic[1], a.onTopic[2])
	}
}

// TestQuotedMessage: a message a topic quotes (a pasted log or error
// line) is judged on its own, as enrichment judges a log line: the runbook
// it is about is admitted however long the story told around it, while a
// quoted command or a message of generic words admits nothing by itself.
func TestQuotedMessage(t *testing.T) {
	if got, want := quotedMessages("nodes go NotReady with `PLEG is not healthy: pleg was last seen active 3m41s ago; threshold is 3m0s` and `ip -s link` shows drops; 'context deadline exceeded' and 'dial udp 10.96.0.10:53: i/o timeout' too"),
		[]string{"PLEG is not healthy: pleg was last seen active 3m41s ago; threshold is 3m0s"}; !slices.Equal(got, want) {
		t.Errorf("quotedMessages = %q, want %q", got, want)
	}
	// The runbooks as the local index returns them, whole.
	var srcs []Source
	for _, f := range []string{
		filepath.Join(runbooktest.Dir(), "..", "..", "eval", "heldout5", "runbooks", "istio-upstream-resets.md"),
		filepath.Join(runbooktest.Dir(), "job-failed.md"),
		filepath.Join(runbooktest.Dir(), "checkout-5xx.md"),
		filepath.Join(runbooktest.Dir(), "ingress-5xx.md"),
	} {
		srcs = append(srcs, readRunbook(t, f))
	}
	for _, c := range []struct {
		topic string
		want  []bool
	}{
		// The story alone scores the Istio runbook 0.39; the reset it
		// quotes is that runbook's.
		{"Since we switched the PeerAuthentication in the payments namespace to STRICT this morning, the nightly reconcile CronJob (batch namespace, no sidecar injection there) fails every call to ledger.payments with `read tcp 10.2.3.4:51234->10.2.8.9:8080: read: connection reset by peer`. Everything that has a sidecar still works fine. Is it the mTLS change, and what are our options other than going back to PERMISSIVE?", []bool{true, false, false, false}},
		// A message of generic words ("context deadline exceeded") is
		// not judged alone; the alert named is the checkout runbook's.
		{"CheckoutHighErrorRate at 20:10, checkout-api logs are full of 'context deadline exceeded' on calls to payment-gateway and there was no deploy today. What are the options besides a rollback?", []bool{false, false, true, false}},
	} {
		a := assessed(t, c.topic, srcs)
		if !slices.Equal(a.onTopic, c.want) {
			t.Errorf("%q: admitted %v (Istio resets, failed Job, checkout 5xx, ingress 5xx), want %v", c.topic, a.onTopic, c.want)
		}
	}
}

// readRunbook reads a runbook file as search returns it: its title (front
// matter, else its first heading) and its whole text.
func readRunbook(t *testing.T, path string) Source {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text, src := string(b), Source{URL: "https://runbooks.example/" + strings.TrimSuffix(filepath.Base(path), ".md")}
	if m := regexp.MustCompile(`(?m)^title: (.+)$`).FindStringSubmatch(text); m != nil {
		src.Title = m[1]
	} else if m := regexp.MustCompile(`(?m)^# (.+)$`).FindStringSubmatch(text); m != nil {
		src.Title = m[1]
	}
	src.Text, src.Snippet = text, text[:min(len(text), 300)]
	return src
}

// TestAlertNamed: an alert a topic names is about the runbook that alert is
// for, as when it fires, wherever the topic names it.
func TestAlertNamed(t *testing.T) {
	pv := Source{
		Title:   "Kubernetes — PersistentVolume filling up",
		URL:     "https://runbooks.example/pv-filling-up",
		Snippet: "Alert: `KubePersistentVolumeFillingUp` fires when a PVC's volume is predicted to fill within four days or is above 97%. Grow the PVC online when its StorageClass allows volume expansion: kubectl edit pvc and raise spec.resources.requests.storage.",
	}
	mongo := Source{
		Title:   "MongoDB replica set: member down, no primary, or secondary lagging",
		URL:     "https://runbooks.example/mongodb-replica-set",
		Snippet: "Alerts: MongodbReplicaMemberDown. A member in a restart loop: read the last lines of its log; a member that fell off the oplog needs an initial sync from a healthy secondary.",
	}
	names := "KubeHpaMaxedOut for an hour and APIHighLatency too; etcdHighNumberOfFailedGRPCRequests, not the PeerAuthentication of a MongoDB or PostgreSQL member, GOMAXPROCS; TargetDown"
	if got, want := alertSearches(names),
		[]string{"KubeHpaMaxedOut", "APIHighLatency", "etcdHighNumberOfFailedGRPCRequests"}; !slices.Equal(got, want) {
		t.Errorf("alertSearches = %q, want %q", got, want)
	}
	if got, want := alertNames(names),
		[]string{"KubeHpaMaxedOut", "APIHighLatency", "etcdHighNumberOfFailedGRPCRequests", "PeerAuthentication", "MongoDB", "PostgreSQL", "TargetDown"}; !slices.Equal(got, want) {
		t.Errorf("alertNames = %q, want %q", got, want)
	}
	// An alert of two words is its runbook's too; a product of two words
	// selects nothing by itself: no runbook fires "MongoDB".
	down := Source{
		Title:   "Prometheus target down",
		URL:     "https://runbooks.example/prometheus-target-down",
		Snippet: "Alert: `TargetDown` fires when more than 10% of a job's targets have up == 0 for 10 minutes. Open /targets: the error column says why the scrape failed (connection refused: wrong port or the exporter is not listening).",
	}
	probe := Source{
		Title:   "Readiness probe failing",
		URL:     "https://runbooks.example/readiness-probe-failing",
		Snippet: "Pods Running but not Ready: the readiness probe fails, so the Service sends them no traffic. kubectl describe pod shows the probe's error, often connection refused on a port the container no longer listens on.",
	}
	job := Source{
		Title:   "Kubernetes Job failed",
		URL:     "https://runbooks.example/job-failed",
		Snippet: "Alerts: `KubeJobFailed` fires when a Job has failed; `KubeCronJobNotScheduled` when a CronJob has not started a Job on schedule. kubectl describe job shows the failed pods; read their logs before deleting the Job.",
	}
	scrape := "TargetDown for job billing-api since we upgraded its helm chart; the pods are Running and Ready and serve traffic fine, and the metrics CronJob still pushes. What changed?"
	if a := assessed(t, scrape, []Source{down, probe, mongo, job}); !a.onTopic[0] || a.onTopic[2] || a.onTopic[3] {
		t.Errorf("%q: admitted %v (target down, readiness, MongoDB, job failed), want target down and neither MongoDB nor the Job runbook", scrape, a.onTopic)
	}
	// Two alerts named, each its runbook's, an acronym first in one.
	hpa, latency := readRunbook(t, filepath.Join(runbooktest.Dir(), "hpa-maxed.md")), readRunbook(t, filepath.Join(runbooktest.Dir(), "high-latency.md"))
	both := "KubeHpaMaxedOut on catalog-api for an hour (20/20 replicas) and APIHighLatency fires too, with traffic flat. Raise maxReplicas, or is something else going on?"
	if a := assessed(t, both, []Source{hpa, latency}); !a.onTopic[0] || !a.onTopic[1] {
		t.Errorf("%q: admitted %v (HPA maxed, API latency), want both", both, a.onTopic)
	}
	topic := "profiles-rs-2 has been in a restart loop since 03:40 and its log ends with a WiredTiger error. KubePersistentVolumeFillingUp fired for its PVC the evening before; the other two members are fine. Can we just grow it and restart, or does it need a full resync?"
	if a := assessed(t, topic, []Source{pv, mongo}); !a.onTopic[0] {
		t.Errorf("%q: the runbook for KubePersistentVolumeFillingUp is not admitted (admitted %v)", topic, a.onTopic)
	}
}

// TestObservation: what a topic tells it saw is read clause by clause
// from its statements, not from what it asks (a question, with or without
// its mark); a topic of one sentence is its subject, and one that tells no
// problem saw nothing.
func TestObservation(t *testing.T) {
	topic := "ledger-db: the app logs FATAL: sorry, too many clients already since noon. pg_stat_activity shows 200 sessions waiting on a Lock, all behind one backend idle in transaction for an hour. should we raise max_connections or kill that backend? how do we stop this next time"
	if got, want := parseForm(topic).observations(topic), []string{
		"ledger-db: the app logs FATAL: sorry",
		"too many clients already since noon",
		"pg_stat_activity shows 200 sessions waiting on a Lock",
		"all behind one backend idle in transaction for an hour",
	}; !slices.Equal(got, want) {
		t.Errorf("observations = %q, want %q", got, want)
	}
	for _, none := range []string{
		"pg_stat_activity shows 200 sessions waiting on a Lock behind one backend idle in transaction",
		"Why do Kubernetes pods get OOM killed and how to prevent it",
		"ceph pool sizing — 3 replicas vs EC 4+2 on 12 OSDs across 4 hosts",
		"We still run our old RabbitMQ cluster with classic mirrored queues. How does the migration to quorum queues work, and can it be done without downtime?",
	} {
		if got := parseForm(none).observations(none); got != nil {
			t.Errorf("observations(%q) = %q, want none", none, got)
		}
	}
}

// TestOfferedAsked: what an on-call engineer offers to do is asked as a
// choice in the engineer's words, without the question's own lead or a
// comma, and once, not also as a comparison.
func TestOfferedAsked(t *testing.T) {
	for topic, want := range map[string]string{
		"both coredns pods sit at their cpu limit and lookups time out. More replicas, or NodeLocal DNSCache?":            "Which helps here, more replicas or NodeLocal DNSCache, and how do you decide?",
		"the db won't start after the host lost power. should we dump and rebuild or promote the replica instead?":        "Should you dump and rebuild or promote the replica instead, and how do you decide?",
		"replication on the replica stopped with error 1236. Can we just restart the replica threads, or need a rebuild?": "Should you restart the replica threads or a rebuild, and how do you decide?",
		"pricing-api logs `accept4: too many open files`. just raise the nofile limit, or is this a leak?":                "Should you raise the nofile limit, or is it a leak, and how do you tell?",
		"smartctl shows UDMA_CRC_Error_Count going up on sdc every day. replace the disk, or something else to blame?":    "Should you replace the disk, or is something else to blame, and how do you tell?",
		"payments-worker has been in CrashLoopBackOff since the 10:15 deploy. Undo the deploy or fix forward?":            "Should you undo the deploy or fix forward, and how do you decide?",
		"build agent vm crawls, load 30 mostly iowait. swap trashing or just out of memory?":                              "How do swap trashing and out of memory differ?",
		// Verbs an on-call engineer offers beyond the commonest, and a
		// remedy asked for rather than named.
		"the internal CA's cert for billing-legacy has a CN and no SANs, and go 1.23 refuses it. reissue it, or is there a quicker way?":               "Should you reissue it, or is there a quicker way, and how do you tell?",
		"es-data-3 logged ECC errors overnight and dropped out of the cluster. let it rejoin or keep it out until the DIMM is swapped?":                "Should you let it rejoin or keep it out until the DIMM is swapped, and how do you decide?",
		"KubeHpaMaxedOut on search-api (30/30 replicas) and CPUThrottlingHigh on the same pods. raise maxReplicas or the cpu limit - which one first?": "Should you raise maxReplicas or cpu limit, and how do you decide?",
	} {
		plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
		if len(plan) == 0 || plan[0] != want {
			t.Errorf("Plan(%q)[0] = %q, want %q", topic, plan, want)
		}
		seen := map[string]bool{}
		for _, q := range plan {
			if seen[q] {
				t.Errorf("Plan(%q) asks %q twice", topic, q)
			}
			seen[q] = true
		}
	}
}

// TestOfferedTitle: a report on what to do about a situation is headed
// with what was offered, not with two things to tell apart.
func TestOfferedTitle(t *testing.T) {
	for topic, want := range map[string]string{
		"both coredns pods sit at their cpu limit and lookups time out. More replicas, or NodeLocal DNSCache?":    "More replicas or NodeLocal DNSCache",
		"pricing-api logs `accept4: too many open files`. just raise the nofile limit, or is this a leak?":        "Raise the nofile limit or a leak",
		"payments-worker has been in CrashLoopBackOff since the 10:15 deploy. Undo the deploy or fix forward?":    "Undo the deploy or fix forward",
		"celery queue keeps growing and the workers barely finish anything. stuck workers or a rabbitmq problem?": "stuck workers and a rabbitmq problem",
	} {
		if got := titleOf(topic); got != want {
			t.Errorf("titleOf(%q) = %q, want %q", topic, got, want)
		}
	}
}

// TestStoryTitle: a report on a story told over several sentences is
// headed with its first sentence, or with the question asked of it.
func TestStoryTitle(t *testing.T) {
	for topic, want := range map[string]string{
		"edge-3 stopped taking new connections around 11:20. error.log: `[alert] 1024 worker_connections are not enough`, but the upstreams are idle. what do we change?": "edge-3 stopped taking new connections around 11:20",
		"kafka consumers fell behind overnight. do we need more partitions?":                                                                                              "kafka consumers fell behind overnight: do you need more partitions?",
	} {
		if got := titleOf(topic); got != want {
			t.Errorf("titleOf(%q) = %q, want %q", topic, got, want)
		}
	}
}

// TestRemedies: two things to do offered for a situation told are asked
// as a choice between them, after what the situation is and why, not as
// two problems ("What is kill that backend?"); two causes offered are
// still told apart.
func TestRemedies(t *testing.T) {
	topic := "ledger-db keeps refusing connections with 'too many clients already'. one backend has been idle in transaction for an hour. Kill that backend or raise max_connections?"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	want := []string{
		"Should you kill that backend or raise max_connections, and how do you decide?",
		"What does it mean when ledger-db keeps refusing connections with 'too many clients already'?",
		"What causes it when ledger-db keeps refusing connections with 'too many clients already'?",
		"What can you do when ledger-db keeps refusing connections with 'too many clients already', and how do you prevent it?",
	}
	if !slices.Equal(plan, want) {
		t.Errorf("Plan(%q) =\n%q\nwant\n%q", topic, plan, want)
	}
	for _, c := range []struct {
		topic    string
		remedies bool
	}{
		{"the rollout is stuck at 3 of 10 new pods with ProgressDeadlineExceeded. Roll back right away, or first find out which endpoints are failing?", true},
		{"the data PVC is at 100% and redis refuses writes. grow the pvc in place or recreate the pod?", true},
		{"celery queue keeps growing and the workers barely finish anything. stuck workers or a rabbitmq problem? how do i tell", false},
		{"One of our nodes rebooted overnight. Was it the OOM killer or bad RAM?", false},
		{"build agent vm crawls, load 30 mostly iowait. swap trashing or just out of memory?", false},
		{"both coredns pods sit at their cpu limit and lookups time out. More replicas, or NodeLocal DNSCache?", true},
		{"KubeHpaMaxedOut on search-api (30/30 replicas) and CPUThrottlingHigh on the same pods. raise maxReplicas or the cpu limit?", true},
		{"replication on the replica stopped with error 1236. Can we just restart the replica threads, or need a rebuild?", true},
		{"pricing-api logs `accept4: too many open files`. just raise the nofile limit, or is this a leak?", false},
	} {
		f := parseForm(c.topic)
		if f.remedies != c.remedies {
			t.Errorf("%q: remedies %v, want %v", c.topic, f.remedies, c.remedies)
		}
		// Each side is searched on its own once a question names it.
		q := strings.ToLower(f.question(kindDiagnosis, false))
		for _, sd := range f.sides() {
			if !strings.Contains(q, strings.ToLower(sd.name)) {
				t.Errorf("%q: %q does not name side %q, so it is not searched alone", c.topic, q, sd.name)
			}
		}
	}
}

// TestYesNoAsked: a yes-or-no question is asked as written, then why and
// when (or how to check whether), never as a situation ("What does it
// mean when does the kubelet …") nor as two things to tell apart ("How do
// tini there and overkil differ?").
func TestYesNoAsked(t *testing.T) {
	for topic, want := range map[string][]string{
		"does the kubelet restart a container whose liveness probe fails?": {
			"Does the kubelet restart a container whose liveness probe fails?",
			"Why does the kubelet restart a container whose liveness probe fails, or why not?",
			"When does the kubelet restart a container whose liveness probe fails, and when not?",
		},
		"do zombie processes count against a pod's pids limit? one of our containers runs a shell script as PID 1. do we need tini there or is that overkill": {
			"Do zombie processes count against a pod's pids limit?",
			"Why do zombie processes count against a pod's pids limit, or why not?",
			"How do you check whether zombie processes count against a pod's pids limit?",
			"What do you do if zombie processes count against a pod's pids limit?",
		},
		"can we run two keepalived pairs on the same VLAN, or is that asking for trouble?": {
			"Can you run two keepalived pairs on the same VLAN?",
			"Why can you run two keepalived pairs on the same VLAN, or why not?",
			"How do you check whether you can run two keepalived pairs on the same VLAN?",
		},
		"do we need to set GOMAXPROCS ourselves for go services with a 2 cpu limit, or does the runtime figure that out on its own?": {
			"Should you set GOMAXPROCS yourselves for go services with a 2 cpu limit, and when?",
			"Why would you need to set GOMAXPROCS yourselves for go services with a 2 cpu limit?",
			"How do you check whether you need to set GOMAXPROCS yourselves for go services with a 2 cpu limit?",
			"How do you set GOMAXPROCS yourselves for go services with a 2 cpu limit?",
		},
	} {
		plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
		if !slices.Equal(plan, want) {
			t.Errorf("Plan(%q) =\n%q, want\n%q", topic, plan, want)
		}
	}
	// A question asked of the channel is the question.
	for topic, want := range map[string]string{
		"does anyone know why etcd logs 'apply request took too long' during compaction?": "What causes it when etcd logs 'apply request took too long' during compaction?",
		"has anyone seen kubelet PLEG errors after a containerd upgrade?":                 "What are kubelet PLEG errors after a containerd upgrade?",
		"Is there a way to drain a node without breaking PodDisruptionBudgets?":           "How do you drain a node without breaking PodDisruptionBudgets?",
		"can you explain how kafka consumer group rebalancing works?":                     "What is kafka consumer group rebalancing?",
	} {
		if plan, _ := (OfflinePlanner{}).Plan(t.Context(), topic); len(plan) == 0 || plan[0] != want {
			t.Errorf("Plan(%q) = %q, want %q first", topic, plan, want)
		}
	}
	// "Is it worth" asks with the gerund as written.
	const worth = "Is it worth switching the render farm's NFS mounts from hard to soft?"
	if plan, _ := (OfflinePlanner{}).Plan(t.Context(), worth); !slices.Equal(plan, []string{
		"Is it worth switching the render farm's NFS mounts from hard to soft, and when?",
		"Why would you consider switching the render farm's NFS mounts from hard to soft?",
		"How do you check whether switching the render farm's NFS mounts from hard to soft helps?",
		"How do you go about switching the render farm's NFS mounts from hard to soft?",
	}) {
		t.Errorf("Plan(%q) = %q", worth, plan)
	}
	// Two causes to tell apart stay so, asked after a situation or first.
	for _, rebooted := range []string{"The node rebooted twice. Was it the OOM killer or bad RAM?", "Is it the OOM killer or bad RAM?"} {
		if plan, _ := (OfflinePlanner{}).Plan(t.Context(), rebooted); len(plan) < 2 || plan[0] != "How do OOM killer and bad RAM differ?" || plan[1] != "How do you tell OOM killer from bad RAM?" {
			t.Errorf("Plan(%q) = %q, want two causes told apart", rebooted, plan)
		}
	}
	// A question asked after the topic is about it: the topic stays.
	const later = "search-api p99 went from 180ms to 900ms. could that still be throttling? how do i tell"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), later)
	for _, q := range plan {
		if !strings.Contains(q, "search-api p99 went from 180ms to 900ms") {
			t.Errorf("Plan(%q) asks %q", later, q)
		}
	}
	const asked = "Does the kubelet restart a container whose liveness probe fails?"
	if got := titleOf("does the kubelet restart a container whose liveness probe fails?"); got != asked {
		t.Errorf("titleOf = %q, want %q", got, asked)
	}
}

// TestWhAsked: a question asking for a value, a choice or a thing, which
// no angle's own wording reads ("what causes", "how do you"), is asked as
// written, then what the answer depends on and how to check it: not
// "What does it mean when What should chrony …?".
func TestWhAsked(t *testing.T) {
	for topic, want := range map[string][]string{
		"What should chrony on our EC2 nodes sync against?": {
			"What should chrony on your EC2 nodes sync against?",
			"What does the answer depend on: what should chrony on your EC2 nodes sync against?",
			"How do you check it on your own systems: what should chrony on your EC2 nodes sync against?",
		},
		"How many partitions should a new Kafka topic get for about 20k messages/s? And does adding partitions later break ordering?": {
			"How many partitions should a new Kafka topic get for about 20k messages/s?",
			"What does the answer depend on: how many partitions should a new Kafka topic get for about 20k messages/s?",
			"How do you check it on your own systems: how many partitions should a new Kafka topic get for about 20k messages/s?",
		},
	} {
		plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
		if !slices.Equal(plan, want) {
			t.Errorf("Plan(%q) =\n%q, want\n%q", topic, plan, want)
		}
	}
	// What is asked for is the subject, not the question's words.
	if got := subject("what vm.swappiness should the mysql boxes run with?"); got != "vm.swappiness the mysql boxes run with" {
		t.Errorf("subject = %q", got)
	}
	if got := titleOf("What bulk request size should our indexer send to Elasticsearch?"); got != "What bulk request size should your indexer send to Elasticsearch?" {
		t.Errorf("titleOf = %q", got)
	}
	// The angles' own wordings stay theirs.
	for topic, want := range map[string]string{
		"What causes etcd leader elections?":                         "What causes etcd leader elections?",
		"What is Memcached slab calcification and how to prevent it": "What is Memcached slab calcification?",
	} {
		if plan, _ := (OfflinePlanner{}).Plan(t.Context(), topic); len(plan) == 0 || plan[0] != want {
			t.Errorf("Plan(%q) = %q, want %q first", topic, plan, want)
		}
	}
}

// TestQuestionAfterThingNamed: a yes-or-no question after a colon, a dash
// or a full stop is a question of its own, not words pasted into the
// situation's headings; asked of a thing named first, each heading starts
// with that thing.
func TestQuestionAfterThingNamed(t *testing.T) {
	for topic, want := range map[string][]string{
		"lowering fillfactor on an update-heavy postgres table - does it actually help with bloat?": {
			"Lowering fillfactor on an update-heavy postgres table: does it actually help with bloat?",
			"Lowering fillfactor on an update-heavy postgres table: why does it actually help with bloat, or why not?",
			"Lowering fillfactor on an update-heavy postgres table: when does it actually help with bloat, and when not?",
		},
		"vault transit key rotation: do old ciphertexts need rewrap?": {
			"vault transit key rotation: do old ciphertexts need rewrap?",
			"vault transit key rotation: why do old ciphertexts need rewrap, or why not?",
			"vault transit key rotation: how do you check whether old ciphertexts need rewrap?",
			"vault transit key rotation: what do you do if old ciphertexts need rewrap?",
		},
	} {
		plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
		if !slices.Equal(plan, want) {
			t.Errorf("Plan(%q) =\n%q, want\n%q", topic, plan, want)
		}
		if got := titleOf(topic); got != want[0] {
			t.Errorf("titleOf(%q) = %q, want %q", topic, got, want[0])
		}
	}
	// A question after a situation told is not pasted into it but asked
	// of it; nor is a judgement ("a problem") one of two causes, nor a thing's two
	// attributes ("per controller replica or global").
	for topic, want := range map[string]string{
		"swap usage on the database VMs sits at ~80% for days but vmstat si/so are 0 — is that a problem or can we ignore NodeSwapUsageHigh?": "swap usage on the database VMs sits at ~80% for days but vmstat si/so are 0: is that a problem?",
		"promtail keeps logging '429 Too Many Requests'. are we actually losing log lines?":                                                   "promtail keeps logging '429 Too Many Requests': are you actually losing log lines?",
		"ingress-nginx limit-rps annotation - is the limit per controller replica or global?":                                                 "What is ingress-nginx limit-rps annotation?",
	} {
		if plan, _ := (OfflinePlanner{}).Plan(t.Context(), topic); len(plan) == 0 || plan[0] != want {
			t.Errorf("Plan(%q) = %q, want %q first", topic, plan, want)
		}
	}
	// A remedy judged enough is still a thing to do beside another.
	if plan, _ := (OfflinePlanner{}).Plan(t.Context(), "db-11 (bare metal) - dmesg shows `EDAC MC0: 1 CE memory read error`. fail the replica over now, or is a hardware ticket enough?"); len(plan) == 0 || !strings.Contains(plan[0], "fail the replica over now, or is it a hardware ticket enough") {
		t.Errorf("a remedy judged enough: plan %q", plan)
	}
	// Two things to do stay two things to do after a thing named.
	if plan, _ := (OfflinePlanner{}).Plan(t.Context(), "postgres 15 - some small queries got slow since the upgrade. set jit = off globally, or raise jit_above_cost?"); len(plan) == 0 || !strings.Contains(plan[0], "set jit = off globally or raise jit_above_cost") {
		t.Errorf("remedies after a name: plan %q", plan)
	}
}

// TestAskedBeforeChoice: a question asked of the situation, then a
// choice offered, is what the choice is made for: its quoted message is
// judged with the choice, as before the question was asked of the
// situation.
func TestAskedBeforeChoice(t *testing.T) {
	const topic = "every api server will be down for an hour during the db migration. can haproxy show a maintenance page instead of its own `503 Service Unavailable`? a backup server or errorfile 503?"
	f := parseForm(topic)
	if f.a == "" || !strings.Contains(f.setting, "503 Service Unavailable") {
		t.Errorf("parseForm(%q): sides %q and %q, setting %q; want a choice made for the quoted 503", topic, f.a, f.b, f.setting)
	}
}

// TestOneCauseOrTwo: asking whether what was seen has one cause offers
// no two causes to tell apart ("How do you tell one cause from two?").
func TestOneCauseOrTwo(t *testing.T) {
	for _, topic := range []string{
		"since the firewall change every `kubectl apply` fails with `failed calling webhook` and all our HPAs show <unknown>/70%. One cause or two, and which ports do we need back?",
		"build VMs log `soft lockup - CPU#2 stuck for 31s` and chrony says their clock is 3 s slow. related or two separate problems?",
	} {
		plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
		for _, q := range plan {
			if strings.Contains(strings.ToLower(q), "cause from two") || strings.Contains(q, "tell related") || strings.Contains(strings.ToLower(q), "what is one cause") {
				t.Errorf("Plan(%q) asks %q", topic, q)
			}
		}
	}
}

// TestAsideInParentheses: an aside is left out of the questions and the
// title, not out of what the topic is judged to be about, nor out of a
// quoted message.
func TestAsideInParentheses(t *testing.T) {
	const topic = "enabling HTTP/3 (QUIC) on the nginx edge proxies: what do we need in front of them?"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	for _, q := range append(plan, titleOf(topic)) {
		if strings.Contains(q, "QUIC") {
			t.Errorf("Plan(%q) pastes the aside into %q", topic, q)
		}
	}
	if s := subject(topic); !strings.Contains(s, "QUIC") {
		t.Errorf("subject(%q) = %q, without the aside", topic, s)
	}
	const quoted = "billing-api logs `dial tcp (10.0.0.7:5432): connect: connection refused` (since 02:00)"
	if got, want := withoutAsides(quoted), "billing-api logs `dial tcp (10.0.0.7:5432): connect: connection refused`"; got != want {
		t.Errorf("withoutAsides(%q) = %q, want %q", quoted, got, want)
	}
}

// TestClauses: what a story tells it saw is split at its clauses, not
// inside an aside or a quoted message, each of which is one thing seen.
func TestClauses(t *testing.T) {
	got := clauses("db-11 (bare metal, billing-pg replica) logs `lifetime watcher done, re-authenticating` every few seconds, and vault status looks fine")
	want := []string{"db-11 (bare metal, billing-pg replica) logs `lifetime watcher done, re-authenticating` every few seconds", "and vault status looks fine"}
	if !slices.Equal(got, want) {
		t.Errorf("clauses = %q, want %q", got, want)
	}
}

// TestNotificationTitle: a notification title pasted whole, as
// Alertmanager and Grafana write it, is read as its alert firing: no
// question carries its status in brackets or its label values, and the
// story after it is still what was seen.
func TestNotificationTitle(t *testing.T) {
	for _, c := range []struct{ topic, want string }{
		{"[FIRING:3] NodeConntrackTableFull (prod-eu1: w-12, w-13) - only the php nodes. should we raise nf_conntrack_max?",
			"NodeConntrackTableFull is firing (prod-eu1 w-12 w-13) - only the php nodes. should we raise nf_conntrack_max?"},
		{"[FIRING:1] NodeNetworkReceiveErrs (kafka-b4, eth2), only at peak. bad cable?",
			"NodeNetworkReceiveErrs is firing (kafka-b4 eth2), only at peak. bad cable?"},
		{"[RESOLVED] KubeJobFailed why did it page twice", "KubeJobFailed fired - why did it page twice"},
		{"[FIRING:2] KubePodCrashLooping", "KubePodCrashLooping is firing"},
		// A bracket that is no status, and a kind of object, stay.
		{"[prod] NodeConntrackTableFull again", "[prod] NodeConntrackTableFull again"},
		{"[FIRING:1] PodDisruptionBudget blocks the drain", "[FIRING:1] PodDisruptionBudget blocks the drain"},
	} {
		if got := notified(c.topic); got != c.want {
			t.Errorf("notified(%q) = %q, want %q", c.topic, got, c.want)
		}
	}
	// The story after the title holds a comparison ("240k udp vs 9k
	// tcp"): it is still a story told, not two things compared.
	const topic = "[FIRING:3] NodeConntrackTableFull (prod-eu1: w-12, w-13, w-17) - only the nodes that run the legacy php stack. `conntrack -L` gives ~240k udp vs ~9k tcp, nearly all to the statsd exporter. raise nf_conntrack_max again, or is there a better knob for udp? ideas?"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	if !slices.Contains(plan, "What causes it when NodeConntrackTableFull is firing?") {
		t.Errorf("Plan(%q) = %q, want the alert firing asked about", topic, plan)
	}
	for _, q := range append(plan, titleOf(topic)) {
		if strings.Contains(q, "FIRING") || strings.Contains(q, "prod-eu1") || strings.Contains(q, "only the nodes") {
			t.Errorf("Plan(%q) pastes the title's status, labels or story into %q", topic, q)
		}
	}
}

// TestTimeToldFirst: a story that starts with when it started is asked
// about in lower case after the template's "when", as a person writes it.
func TestTimeToldFirst(t *testing.T) {
	topic := "Since live chat went out, edge-1 flatlines at `Active connections: 8192` every evening"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	for _, q := range plan {
		if strings.Contains(q, "when Since") || !strings.Contains(q, "since live chat went out") {
			t.Errorf("Plan(%q) asks %q", topic, q)
		}
	}
}

// TestAlertFiredWhy: an alert told as firing keeps its own verb when a
// "why does …" follows it: no "Why does KubePersistentVolumeFillingUp is
// firing …?".
func TestAlertFiredWhy(t *testing.T) {
	topic := "KubePersistentVolumeFillingUp for data-billing-pg-0 in payments, and du on the volume says pg_wal holds 140 GB of it. why does the WAL keep growing, and can we resize the PVC online for now?"
	plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
	for _, q := range plan {
		if strings.Contains(q, "does KubePersistentVolumeFillingUp is") {
			t.Errorf("Plan(%q) asks %q", topic, q)
		}
	}
	if len(plan) == 0 || !strings.Contains(plan[0], "KubePersistentVolumeFillingUp is firing") {
		t.Errorf("Plan(%q) = %q, want the alert asked about as it fires", topic, plan)
	}
}

// TestAskersMarks: a question or exclamation mark the asker wrote is not
// doubled by the question's own ("…full??", "…prometheus?, or why
// not?"); one inside a quoted message stays as written.
func TestAskersMarks(t *testing.T) {
	for _, topic := range []string{
		"KubePersistentVolumeFillingUp on data-kafka-9 but the volume is only 58% full?? false alarm or not, and what do we do",
		"did orders-api fall out of prometheus?! the target list doesn't have it",
		"kea dhcp HA for the two office subnets (dhcp-1 and dhcp-2, one per rack): load-balancing or hot-standby? and what happens to leases while one is down",
	} {
		for _, q := range offlinePlan(t, topic) {
			if strings.Contains(q, "??") || strings.Contains(q, "?,") || strings.Contains(q, "!?") || strings.Contains(q, ".?") {
				t.Errorf("Plan(%q) asks %q", topic, q)
			}
		}
	}
	q := "What does it mean when the trace ends in `runtime.throw({0x1b3f2e1?, 0x0?})`??"
	if got, want := tidyQuestion(q), "What does it mean when the trace ends in `runtime.throw({0x1b3f2e1?, 0x0?})`?"; got != want {
		t.Errorf("tidyQuestion(%q) = %q, want %q", q, got, want)
	}
}

// TestAlertToldFiring: a situation told by an alert's name without a
// verb ("NginxIngressHigh5xxRate on search-web since 14:10", "…
// NodeCPUHighUsage firing on ci-vm-12") is asked about as the alert
// firing, as an alert named alone is; an exception named the same way
// is not an alert.
func TestAlertToldFiring(t *testing.T) {
	for topic, want := range map[string]string{
		"NginxIngressHigh5xxRate on search-web since 14:10, mostly 502s from one upstream. what changed?":                 "NginxIngressHigh5xxRate is firing on search-web since 14:10",
		"RedisReplicationBroken again during the nightly backup, and the replica logs `MASTER aborted replication`. why?": "RedisReplicationBroken is firing again during the nightly backup",
		"NodeCPUHighUsage firing on ci-vm-12 all afternoon, but the jobs aren't doing more than usual":                    "NodeCPUHighUsage is firing on ci-vm-12 all afternoon",
	} {
		if plan := offlinePlan(t, topic); !slices.ContainsFunc(plan, func(q string) bool { return strings.Contains(q, want) }) {
			t.Errorf("Plan(%q) = %q, want %q asked about", topic, plan, want)
		}
	}
	if plan := offlinePlan(t, "OutOfMemoryError on report-svc since the upgrade: heap or metaspace?"); slices.ContainsFunc(plan, func(q string) bool { return strings.Contains(q, "is firing") }) {
		t.Errorf("an exception is asked about as an alert firing: %q", plan)
	}
}

// TestMisspelledQuestionWords: "wich" and "shoud", as typed in chat,
// are the question words they mean: "wich one" picks one of the two
// offered, and is not a third thing named after the first.
func TestMisspelledQuestionWords(t *testing.T) {
	topic := "Threads_connected on catalog-db climbs ~40/hour since monday's release until MySQLTooManyConnections fires. pool too big or are we leaking connections, wich one and how do we tell?"
	for _, q := range offlinePlan(t, topic) {
		if strings.Contains(q, "wich") || strings.Contains(q, "connections, which") {
			t.Errorf("Plan(%q) asks %q", topic, q)
		}
	}
	if got, want := spelled("Wich one? shoud we drain it, or shold we wait?"), "Which one? should we drain it, or should we wait?"; got != want {
		t.Errorf("spelled = %q, want %q", got, want)
	}
}
