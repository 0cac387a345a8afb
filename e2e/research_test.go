package e2e_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestResearchOffline is the research part of "after make run" on the
// whole stack, offline: the runbooks indexed, a research run on Postgres
// connection pooling cites only the Postgres runbook and repeats no
// sentence, GET /v1/research/{id}/report returns its Markdown and
// metadata, and a decision after the approval's timeout is refused as
// escalated.
func TestResearchOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	onEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := startStack(t, map[string]string{"RESEARCH_APPROVAL_TIMEOUT": "2s"}, databaseURL)
		ctx := t.Context()
		if _, err := call(ctx, "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": runbookDocs(t)}, nil); err != nil {
			t.Fatalf("indexing the runbooks: %v", err)
		}
		var started struct{ Run struct{ ID string } }
		if _, err := call(ctx, "POST", s.GatewayURL+"/v1/research", map[string]any{
			"topic": "Postgres connection pooling", "userId": "3f1c2a9e-5b7d-4e2f-9a1b-2c3d4e5f6a7b", "maxIterations": 2,
		}, &started); err != nil {
			t.Fatal(err)
		}
		type run struct {
			Status         string
			PlannedActions []struct{ ApprovalID string }
			Report         struct {
				FindingsMarkdown string
				Sources          []struct{ URL, Title string }
			}
		}
		var got struct{ Run run }
		eventually(t, 60*time.Second, "the run to finish", func() bool {
			_, err := call(ctx, "GET", s.GatewayURL+"/v1/research/"+started.Run.ID, nil, &got)
			return err == nil && (got.Run.Status == "FINISHED" || got.Run.Status == "FAILED")
		})
		if got.Run.Status != "FINISHED" || len(got.Run.Report.Sources) == 0 {
			t.Fatalf("run = %+v", got.Run)
		}
		for _, src := range got.Run.Report.Sources {
			if src.URL != "https://runbooks.groundcrew.example/postgres-too-many-connections" {
				t.Errorf("the Postgres pooling report cites %s (%s)", src.URL, src.Title)
			}
		}
		seen := map[string]bool{}
		body, _, _ := strings.Cut(got.Run.Report.FindingsMarkdown, "\n## Sources")
		for _, m := range regexp.MustCompile(`([^\n]+?) \[\d+\]`).FindAllStringSubmatch(body, -1) {
			key := strings.ToLower(strings.TrimSpace(m[1]))
			if seen[key] {
				t.Errorf("sentence repeated in the report: %q", m[1])
			}
			seen[key] = true
		}

		var rep struct {
			Content  string
			Metadata struct {
				Type, Topic, UserID string
				Sources             []struct{ Title, URL string }
				IterationCount      int
				Timestamp           string
			}
		}
		if _, err := call(ctx, "GET", s.GatewayURL+"/v1/research/"+started.Run.ID+"/report", nil, &rep); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rep.Content, "## Executive summary") || rep.Metadata.Type != "research_report" ||
			rep.Metadata.Topic != "Postgres connection pooling" || len(rep.Metadata.Sources) != len(got.Run.Report.Sources) ||
			rep.Metadata.IterationCount < 1 || rep.Metadata.Timestamp == "" {
			t.Errorf("report = %+v", rep)
		}

		// The approval timed out (2 s); a decision now is refused.
		approvalID := got.Run.PlannedActions[0].ApprovalID
		var appr struct {
			Approvals []struct{ ID, TimeoutAt string }
		}
		if _, err := call(ctx, "GET", s.GatewayURL+"/v1/approvals?runId="+started.Run.ID, nil, &appr); err != nil || len(appr.Approvals) != 1 {
			t.Fatalf("approvals = %+v, %v", appr, err)
		}
		timeoutAt, err := time.Parse(time.RFC3339Nano, appr.Approvals[0].TimeoutAt)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "timeout_at to pass", func() bool { return time.Now().After(timeoutAt) })
		code, err := call(ctx, "POST", s.GatewayURL+"/v1/approvals/"+approvalID+":decide", map[string]any{"decision": "APPROVE", "decidedBy": "late"}, nil)
		if code != http.StatusBadRequest || err == nil || !strings.Contains(err.Error(), "escalated") {
			t.Errorf("late decision: %d %v, want 400 saying it escalated", code, err)
		}
		var after struct {
			Approvals []struct{ Status string }
		}
		if _, err := call(ctx, "GET", s.GatewayURL+"/v1/approvals?runId="+started.Run.ID, nil, &after); err != nil || after.Approvals[0].Status != "ESCALATED" {
			t.Errorf("after the late decision: %+v, %v; want ESCALATED", after, err)
		}
	})
}

// TestResearchSummaryToAResearchChat holds that one setting allows a
// research chat: with RESEARCH_SUMMARY_CHATS set (grounding lets a run
// name the chat, the notifier lets grounding post there), a run started
// with a send_summary to that chat ends EXECUTED through the real
// notifier, not refused and retried while it stays QUEUED.
func TestResearchSummaryToAResearchChat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	s := startStack(t, map[string]string{"RESEARCH_SUMMARY_CHATS": "-100777", "RESEARCH_SUMMARY_RISK": "reversible"}, "")
	ctx := t.Context()
	if _, err := call(ctx, "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": runbookDocs(t)}, nil); err != nil {
		t.Fatalf("indexing the runbooks: %v", err)
	}
	var started struct{ Run struct{ ID string } }
	if _, err := call(ctx, "POST", s.GatewayURL+"/v1/research", map[string]any{
		"topic": "Postgres connection pooling", "userId": "3f1c2a9e-5b7d-4e2f-9a1b-2c3d4e5f6a7b", "maxIterations": 1,
		"actions": []map[string]any{{"actionType": "send_summary", "parameters": map[string]any{"chat_id": "-100777"}}},
	}, &started); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Run struct {
			PlannedActions []struct{ Status, Result string }
		}
	}
	eventually(t, 60*time.Second, "the summary action to end", func() bool {
		_, err := call(ctx, "GET", s.GatewayURL+"/v1/research/"+started.Run.ID, nil, &got)
		if err != nil || len(got.Run.PlannedActions) == 0 {
			return false
		}
		st := got.Run.PlannedActions[0].Status
		return st == "EXECUTED" || st == "FAILED"
	})
	if a := got.Run.PlannedActions[0]; a.Status != "EXECUTED" || !strings.HasPrefix(a.Result, "summary sent") {
		t.Errorf("action = %+v, want EXECUTED: the notifier must accept the research chat", a)
	}
}
