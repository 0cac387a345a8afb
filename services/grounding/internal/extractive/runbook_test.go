package extractive

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRunbookSteps(t *testing.T) {
	tests := []struct {
		name, text, diagnose, mitigate string
	}{
		{
			name: "indexed plain text",
			text: "Alert: RedisMemoryHigh fires when used_memory is above 90% of maxmemory.\nDiagnose.\nredis-cli INFO memory: compare used_memory with maxmemory.\n" +
				"redis-cli --bigkeys finds the keys that grew.\nMitigate.\nSet TTLs on the keys that lack them.\nSwitch maxmemory-policy to allkeys-lru.",
			diagnose: "redis-cli INFO memory: compare used_memory with maxmemory.",
			mitigate: "Set TTLs on the keys that lack them.",
		},
		{
			name:     "markdown with numbered steps and an impact section first",
			text:     "# Disk\n\n## Impact\nWrites fail.\n\n## Diagnosis\n1. `df -h` finds the filesystem\n2. du finds the directory\n\n## Mitigation\n- Rotate and compress logs\n- Prune images\n",
			diagnose: "`df -h` finds the filesystem.",
			mitigate: "Rotate and compress logs.",
		},
		{
			name:     "no mitigation section",
			text:     "Diagnose.\nCheck the logs.\nNotes.\nNothing else.",
			diagnose: "Check the logs.",
		},
		{
			name:     "labelled paragraphs",
			text:     "NFS mounts hanging.\nClients report Stale file handle.\nDiagnosis: nfsstat -m shows the options; rpcinfo -p checks the server.\nResolution: remount with umount -f -l.",
			diagnose: "nfsstat -m shows the options; rpcinfo -p checks the server.",
			mitigate: "remount with umount -f -l.",
		},
		{
			name: "bold labels, a checklist and setext headings",
			text: "**Look**: kubectl describe order -n ns.\n**Do**: stop the loop that re-creates the Certificate.\n" +
				"Checklist\n=========\n- [ ] systemctl --failed\n",
			diagnose: "kubectl describe order -n ns.",
			mitigate: "stop the loop that re-creates the Certificate.",
		},
		{
			name:     "a checklist under setext headings",
			text:     "Triage\n======\n- [ ] `systemctl --failed` shows the unit\n\nRemediation\n-----------\n* reset-failed, then start",
			diagnose: "`systemctl --failed` shows the unit.",
			mitigate: "reset-failed, then start.",
		},
		{
			name: "prose only",
			text: "Kafka keeps messages for seven days. Consumers read them in order.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, m := RunbookSteps(tt.text)
			if d != tt.diagnose || m != tt.mitigate {
				t.Errorf("RunbookSteps() = %q, %q; want %q, %q", d, m, tt.diagnose, tt.mitigate)
			}
		})
	}
}

func TestRunbookSummary(t *testing.T) {
	short := "Diagnose.\nCheck pg_stat_activity.\nMitigate.\nTerminate idle sessions."
	if got, want := RunbookSummary(short, 250), "Check pg_stat_activity. Terminate idle sessions."; got != want {
		t.Errorf("RunbookSummary() = %q, want %q", got, want)
	}
	long := "Diagnose.\nFind who holds connections: SELECT usename, application_name, state, count(*) FROM pg_stat_activity GROUP BY 1,2,3 ORDER BY 4 DESC; many idle in transaction sessions point to an application that forgets to commit.\n" +
		"Mitigate.\nPut PgBouncer in transaction pooling mode in front of the database instead of raising max_connections; each Postgres connection costs memory and a process on the server."
	got := RunbookSummary(long, 250)
	if n := utf8.RuneCountInString(got); n > 250 {
		t.Errorf("summary has %d characters, want ≤ 250: %q", n, got)
	}
	if got[:4] != "Find" || !strings.Contains(got, "Put PgBouncer") {
		t.Errorf("summary %q does not give the diagnosis, then the mitigation", got)
	}
	if RunbookSummary("Diagnose.\nCheck.", 250) != "" {
		t.Error("a summary without a mitigation")
	}
}

func TestRunbookLead(t *testing.T) {
	tests := []struct {
		name, text, want string
		maxChars         int
	}{
		{
			name:     "both sections",
			text:     "Connections pile up.\nDiagnose.\nCheck pg_stat_activity.\nMitigate.\nTerminate idle sessions.",
			maxChars: 250,
			want:     "Check pg_stat_activity. Terminate idle sessions.",
		},
		{
			name: "a fix section only",
			text: "Our object store runs four servers.\nWhat you see.\nThe disk is marked in mc admin info.\nFix.\n" +
				"Replace or remount the disk and let healing finish.\nDo not take a second disk out.",
			maxChars: 250,
			want:     "Replace or remount the disk and let healing finish.",
		},
		{
			name:     "a diagnosis section only",
			text:     "## Overview\nQueues back up.\n## Triage\n1. `rabbitmqctl list_queues` finds the queue\n2. Check its consumers",
			maxChars: 250,
			want:     "`rabbitmqctl list_queues` finds the queue.",
		},
		{
			name:     "no sections: the opening sentences, headings left out",
			text:     "Overview.\nKafka keeps messages for seven days. Consumers read them in order.\n- A lagging consumer reads old data.",
			maxChars: 250,
			want:     "Kafka keeps messages for seven days. Consumers read them in order.",
		},
		{
			name:     "cut to the budget",
			text:     "Fix.\nRaise client-output-buffer-limit replica and repl-backlog-size with CONFIG SET on the master, then persist with CONFIG REWRITE.",
			maxChars: 40,
			want:     "Raise client-output-buffer-limit…",
		},
		{name: "nothing", text: "## Overview\n\n---\n", maxChars: 250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RunbookLead(tt.text, tt.maxChars); got != tt.want {
				t.Errorf("RunbookLead() = %q, want %q", got, tt.want)
			}
		})
	}
}
