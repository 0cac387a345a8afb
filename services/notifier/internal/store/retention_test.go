package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/message"
)

// TestAlertRetention purges, on SQLite and PostgreSQL, the alerts older
// than the retention that are done with, the groups left without alerts
// (with their escalation), old SendMessage records that are done with, old
// chat history and handled-update records; what is recent or still on its
// way stays.
func TestAlertRetention(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			now := t0.Add(100 * 24 * time.Hour)
			old, recent := now.Add(-91*24*time.Hour), now.Add(-89*24*time.Hour)
			put := func(id string, at time.Time, st alert.Status, groupID string) {
				t.Helper()
				a := newAlert(id, at)
				a.Status, a.GroupID = st, groupID
				if err := s.InsertAlert(ctx, s.DB(), a); err != nil {
					t.Fatal(err)
				}
			}
			put("old-delivered", old, alert.StatusDelivered, "")
			put("old-failed", old, alert.StatusFailed, "")
			put("old-duplicate", old, alert.StatusDuplicate, "")
			put("old-received", old, alert.StatusReceived, "") // still on its way
			put("recent-delivered", recent, alert.StatusDelivered, "")

			// g-old: every alert old and delivered: purged with its notification.
			gOld := newGroup("g-old", "old")
			gOld.UpdatedAt = old
			// g-mixed: an old alert and a recent one: the group stays.
			gMixed := newGroup("g-mixed", "mixed")
			gMixed.UpdatedAt = recent
			for _, g := range []*alert.Group{gOld, gMixed} {
				if err := s.InsertGroup(ctx, s.DB(), g); err != nil {
					t.Fatal(err)
				}
			}
			put("g-old-1", old, alert.StatusDelivered, "g-old")
			put("g-mixed-1", old, alert.StatusDelivered, "g-mixed")
			put("g-mixed-2", recent, alert.StatusDelivered, "g-mixed")
			n := &Notification{ID: "n-old", GroupID: "g-old", AlertIDs: []string{"g-old-1"}, Status: alert.StatusDelivered, ReceivedAt: old}
			if err := s.InsertNotification(ctx, s.DB(), n); err != nil {
				t.Fatal(err)
			}

			// The purged group's escalation goes with it.
			for _, q := range []string{
				`INSERT INTO notifier_escalations (group_id, policy_id, state, round, step, next_at, started_at, updated_at) VALUES ('g-old', 'p', 'acked', 1, 1, 0, 0, 0)`,
				`INSERT INTO notifier_escalation_events (group_id, at, seq, kind, round, step, participant, channel, detail) VALUES ('g-old', 0, 0, 'paged', 1, 1, 'ana', 'mention', '')`,
				`INSERT INTO notifier_escalations (group_id, policy_id, state, round, step, next_at, started_at, updated_at) VALUES ('g-mixed', 'p', 'acked', 1, 1, 0, 0, 0)`,
			} {
				if _, err := s.DB().ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			// SendMessage records: done and old go, on their way or recent stay.
			for _, m := range []message.Record{
				{ID: "m-old-delivered", Status: message.StatusDelivered, CreatedAt: old},
				{ID: "m-old-failed", Status: message.StatusFailed, CreatedAt: old},
				{ID: "m-old-sending", Status: message.StatusSending, CreatedAt: old},
				{ID: "m-recent", Status: message.StatusDelivered, CreatedAt: recent},
			} {
				m.Text, m.UpdatedAt = "hello", m.CreatedAt
				if _, err := s.ClaimMessage(ctx, &m); err != nil {
					t.Fatal(err)
				}
			}
			// Chat history and handled updates: by age alone.
			for i, at := range []time.Time{old, old, recent} {
				m := message.ChatMessage{ChatID: 7, MessageID: int64(i + 1), Speaker: "ana", Parts: []message.Part{{Text: "hi"}}, SentAt: at}
				if err := s.SaveChatMessage(ctx, m); err != nil {
					t.Fatal(err)
				}
				if _, err := s.RecordUpdate(ctx, message.UpdateKey{BotID: 1, ChatID: 7, UpdateID: int64(i + 1)}, "handled", at); err != nil {
					t.Fatal(err)
				}
			}

			r := &Retention{Store: s, MaxAge: DefaultAlertRetention, Now: func() time.Time { return now }}
			got, err := r.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := (Purged{Alerts: 5, Groups: 1, Messages: 2, ChatMessages: 2, Updates: 2}); got != want {
				t.Errorf("RunOnce purged %+v, want %+v", got, want)
			}
			var kept []string
			for _, id := range []string{"old-delivered", "old-failed", "old-duplicate", "old-received", "recent-delivered", "g-old-1", "g-mixed-1", "g-mixed-2"} {
				if _, err := s.GetAlert(ctx, id); err == nil {
					kept = append(kept, id)
				} else if !errors.Is(err, ErrNotFound) {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff([]string{"old-received", "recent-delivered", "g-mixed-2"}, kept); diff != "" {
				t.Errorf("alerts kept (-want +got):\n%s", diff)
			}
			if _, err := s.GetGroup(ctx, nil, "g-old"); !errors.Is(err, ErrNotFound) {
				t.Errorf("group with only purged alerts: GetGroup err = %v, want ErrNotFound", err)
			}
			if _, err := s.GetNotification(ctx, "n-old"); !errors.Is(err, ErrNotFound) {
				t.Errorf("notification of a purged group: err = %v, want ErrNotFound", err)
			}
			if _, err := s.GetGroup(ctx, nil, "g-mixed"); err != nil {
				t.Errorf("group with a recent alert: %v", err)
			}
			var escalations []string
			rows, err := s.DB().QueryContext(ctx, `SELECT group_id FROM notifier_escalations UNION ALL SELECT group_id FROM notifier_escalation_events ORDER BY 1`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				escalations = append(escalations, id)
			}
			rows.Close()
			if diff := cmp.Diff([]string{"g-mixed"}, escalations); diff != "" {
				t.Errorf("escalation rows kept (-want +got):\n%s", diff)
			}
			for id, want := range map[string]bool{"m-old-delivered": false, "m-old-failed": false, "m-old-sending": true, "m-recent": true} {
				if _, err := s.GetMessage(ctx, id); (err == nil) != want {
					t.Errorf("message %s: GetMessage err = %v, want kept %v", id, err, want)
				}
			}
			if h, err := s.ChatHistory(ctx, 7, 10); err != nil || len(h) != 1 || h[0].MessageID != 3 {
				t.Errorf("chat history after retention = %+v, %v; want only message 3", h, err)
			}
			for id, want := range map[int64]bool{1: false, 2: false, 3: true} {
				if _, ok, err := s.UpdateOutcome(ctx, message.UpdateKey{BotID: 1, ChatID: 7, UpdateID: id}); err != nil || ok != want {
					t.Errorf("update %d: recorded %v, %v; want %v", id, ok, err, want)
				}
			}

			// A second run finds nothing; no retention keeps everything.
			if got, err := r.RunOnce(ctx); err != nil || got != (Purged{}) {
				t.Errorf("second run = %+v, %v; want nothing", got, err)
			}
			keep := &Retention{Store: s, Now: func() time.Time { return now.Add(1000 * 24 * time.Hour) }}
			if got, err := keep.RunOnce(ctx); err != nil || got != (Purged{}) {
				t.Errorf("MaxAge 0 purged %+v, %v; want nothing", got, err)
			}
		})
	}
}

// TestListAlertsBoundedInBytes: 45 alerts with the largest metadata
// allowed fit no single response, so the page stops early, says so, and
// the token reads on to every alert.
func TestListAlertsBoundedInBytes(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			const n = 45
			for i := range n {
				md := map[string]any{"blob": strings.Repeat("x", alert.MaxMetadataBytes-11)}
				// Four-byte characters make the longest text and message.
				a, err := alert.Generic(strings.Repeat("🔥", alert.MaxTextLen), md)
				if err != nil {
					t.Fatal(err)
				}
				a.ID, a.Status = "a"+string(rune('A'+i)), alert.StatusDelivered
				a.ReceivedAt, a.UpdatedAt = t0.Add(time.Duration(i)*time.Second), t0
				a.Message = &alert.Message{Text: strings.Repeat("🔥", 4096), Plain: strings.Repeat("🔥", 4096)}
				if err := s.InsertAlert(ctx, s.DB(), &a); err != nil {
					t.Fatal(err)
				}
			}
			seen, pages, tok := 0, 0, ""
			for {
				page, err := s.ListAlerts(ctx, ListQuery{PageSize: 50, PageToken: tok})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				size := 0
				for _, a := range page.Items {
					size += alertSize(a)
				}
				if size > MaxPageBytes {
					t.Errorf("page %d weighs %d bytes, over %d", pages, size, MaxPageBytes)
				}
				seen += len(page.Items)
				if page.SizeLimited != (page.Next != "" && len(page.Items) < 50) {
					t.Errorf("page %d: %d alerts, size_limited %v, next %q", pages, len(page.Items), page.SizeLimited, page.Next)
				}
				if tok = page.Next; tok == "" {
					break
				}
			}
			if seen != n || pages < 2 {
				t.Errorf("read %d alerts in %d pages, want %d in more than one", seen, pages, n)
			}
		})
	}
}
