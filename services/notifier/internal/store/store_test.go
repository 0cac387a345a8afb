package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
)

// backends returns the databases to test on: the default one (SQLite, or
// PostgreSQL when the suite runs with DATABASE_URL) always, and PostgreSQL
// when TEST_DATABASE_URL is set. Every test gets an empty database.
func backends(t *testing.T) map[string]func(t *testing.T) *Store {
	t.Helper()
	open := func(dbURL func(t *testing.T) string) func(t *testing.T) *Store {
		return func(t *testing.T) *Store {
			t.Helper()
			ctx := context.Background()
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			db, err := sqlstore.Open(ctx, dbURL(t), t.TempDir(), "notifier", logger)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			if err := Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			return New(db)
		}
	}
	name := "sqlite"
	if sqlstoretest.OnPostgres() {
		name = "database_url"
	}
	out := map[string]func(t *testing.T) *Store{
		name: open(func(t *testing.T) string { return sqlstoretest.URL(t, "notifier_store") }),
	}
	if os.Getenv(sqlstoretest.EnvVar) != "" {
		out["postgres"] = open(func(t *testing.T) string { return sqlstoretest.PostgresURL(t, "notifier_store") })
	}
	return out
}

var t0 = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func newAlert(id string, at time.Time) *alert.Alert {
	a, _ := alert.Generic("disk full on "+id, map[string]any{"severity": "critical", "n": 2.0})
	a.ID, a.Status, a.ReceivedAt, a.UpdatedAt = id, alert.StatusReceived, at, at
	return &a
}

func TestAlertRoundTrip(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			a := newAlert("a1", t0)
			if err := s.InsertAlert(ctx, s.DB(), a); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetAlert(ctx, "a1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stored alert (-want +got):\n%s", diff)
			}

			a.Status, a.Attempts, a.Error = alert.StatusDelivered, 2, "telegram: 502"
			a.Message = &alert.Message{Text: `disk full\!`, Plain: "disk full!", ParseMode: "MarkdownV2", DisableWebPagePreview: true}
			a.DeliveryIDs, a.Destination, a.GroundingMessageID = []string{"42"}, "-100123", "g1"
			a.EnrichmentError, a.UpdatedAt, a.DeliveredAt = "timeout", t0.Add(time.Second), t0.Add(time.Second)
			if err := s.SaveProgress(ctx, a); err != nil {
				t.Fatal(err)
			}
			got, err = s.GetAlert(ctx, "a1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("after SaveProgress (-want +got):\n%s", diff)
			}

			if _, err := s.GetAlert(ctx, "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("GetAlert(nope) = %v, want ErrNotFound", err)
			}
			if err := s.SaveProgress(ctx, newAlert("nope", t0)); !errors.Is(err, ErrNotFound) {
				t.Errorf("SaveProgress(nope) = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestFindOriginal(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			orig := newAlert("orig", t0)
			failed := newAlert("failed", t0.Add(-time.Minute))
			failed.Status = alert.StatusFailed
			for _, a := range []*alert.Alert{failed, orig} {
				if err := s.InsertAlert(ctx, s.DB(), a); err != nil {
					t.Fatal(err)
				}
			}
			repeat := newAlert("orig", t0.Add(time.Minute)) // same text and metadata: same fingerprint
			repeat.ID = "repeat"
			tests := []struct {
				name  string
				since time.Time
				a     *alert.Alert
				want  string
			}{
				{"within window", t0.Add(-5 * time.Minute), repeat, "orig"},
				{"window passed", t0.Add(time.Second), repeat, ""},
				{"other fingerprint", t0.Add(-5 * time.Minute), newAlert("other", t0), ""},
			}
			for _, tt := range tests {
				got, err := s.FindOriginal(ctx, s.DB(), tt.a, tt.since)
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("%s: FindOriginal = %q, want %q", tt.name, got, tt.want)
				}
			}
		})
	}
}

func TestListAlertsPages(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			var want []string
			for i := range 7 {
				a := newAlert(fmt.Sprintf("a%d", i), t0.Add(time.Duration(i/2)*time.Second)) // pairs share a time
				if i%3 == 0 {
					a.Status = alert.StatusDelivered
				}
				if err := s.InsertAlert(ctx, s.DB(), a); err != nil {
					t.Fatal(err)
				}
				want = append([]string{a.ID}, want...)
			}
			var got []string
			tok := ""
			for range 10 {
				page, err := s.ListAlerts(ctx, ListQuery{PageSize: 3, PageToken: tok})
				if err != nil {
					t.Fatal(err)
				}
				if page.SizeLimited {
					t.Errorf("a page of small alerts is size limited")
				}
				for _, a := range page.Items {
					got = append(got, a.ID)
				}
				if tok = page.Next; tok == "" {
					break
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("paged ids newest first (-want +got):\n%s", diff)
			}

			delivered, err := s.ListAlerts(ctx, ListQuery{PageSize: 10, Status: alert.StatusDelivered, ReceivedAfter: t0.Add(time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, a := range delivered.Items {
				ids = append(ids, a.ID)
			}
			if diff := cmp.Diff([]string{"a6", "a3"}, ids); diff != "" {
				t.Errorf("filtered (-want +got):\n%s", diff)
			}

			if _, err := s.ListAlerts(ctx, ListQuery{PageSize: 3, PageToken: "!!"}); !errors.Is(err, ErrBadPageToken) {
				t.Errorf("bad token: err = %v, want ErrBadPageToken", err)
			}
		})
	}
}

func TestChatHistory(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			for i := range 5 {
				m := chat.Message{
					ChatID: -100, ChatType: "group", MessageID: int64(10 + i), Speaker: "Ann", SpeakerID: "7",
					Parts: []chat.Part{{Text: fmt.Sprintf("m%d", i)}}, SentAt: t0.Add(time.Duration(i) * time.Second),
				}
				if err := s.SaveChatMessage(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			// An edit replaces; a replied-to copy does not.
			edit := chat.Message{ChatID: -100, ChatType: "group", MessageID: 14, Parts: []chat.Part{{Text: "m4 edited"}}, SentAt: t0.Add(4 * time.Second)}
			if err := s.SaveChatMessage(ctx, edit); err != nil {
				t.Fatal(err)
			}
			stale := chat.Message{ChatID: -100, MessageID: 13, Parts: []chat.Part{{MediaKind: "photo", Text: "a photo"}}, SentAt: t0}
			if err := s.SaveChatMessageIfAbsent(ctx, stale); err != nil {
				t.Fatal(err)
			}
			got, err := s.ChatHistory(ctx, -100, 3)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range got {
				texts = append(texts, m.Parts[0].Text)
			}
			if diff := cmp.Diff([]string{"m2", "m3", "m4 edited"}, texts); diff != "" {
				t.Errorf("last 3 messages, oldest first (-want +got):\n%s", diff)
			}
			if other, _ := s.ChatHistory(ctx, 5, 10); len(other) != 0 {
				t.Errorf("another chat has %d messages", len(other))
			}
		})
	}
}

func TestUpdates(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			k := chat.UpdateKey{BotID: 7, ChatID: -100, UpdateID: 1}
			if _, ok, err := s.UpdateOutcome(ctx, k); err != nil || ok {
				t.Fatalf("UpdateOutcome before = %v, %v", ok, err)
			}
			if first, err := s.RecordUpdate(ctx, k, "replied", t0); err != nil || !first {
				t.Fatalf("RecordUpdate = %v, %v", first, err)
			}
			if first, err := s.RecordUpdate(ctx, k, "stored", t0); err != nil || first {
				t.Fatalf("RecordUpdate again = %v, %v; want false", first, err)
			}
			if outcome, ok, err := s.UpdateOutcome(ctx, k); err != nil || !ok || outcome != "replied" {
				t.Fatalf("UpdateOutcome = %q, %v, %v", outcome, ok, err)
			}
			// The same update id of another chat or bot is another update.
			for _, other := range []chat.UpdateKey{{BotID: 7, ChatID: -200, UpdateID: 1}, {BotID: 8, ChatID: -100, UpdateID: 1}} {
				if _, ok, err := s.UpdateOutcome(ctx, other); err != nil || ok {
					t.Errorf("UpdateOutcome(%+v) = %v, %v; want not handled", other, ok, err)
				}
				if first, err := s.RecordUpdate(ctx, other, "stored", t0); err != nil || !first {
					t.Errorf("RecordUpdate(%+v) = %v, %v; want first", other, first, err)
				}
			}
		})
	}
}

func TestApprovalMessage(t *testing.T) {
	const id = "0193a5b2-7c1e-7d2f-9a8b-0123456789ab"
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			if _, found, err := s.ApprovalMessage(ctx, id); err != nil || found {
				t.Fatalf("before any send: found %v, %v", found, err)
			}
			save := func(msgID, dest, delivery string, status outbound.Status, at time.Time) {
				t.Helper()
				r := &outbound.Record{ID: msgID, RequestHash: "h", Text: "Approve the deploy?", ApprovalID: id, Actor: "ci",
					Status: status, CreatedAt: at, UpdatedAt: at}
				if _, err := s.ClaimMessage(ctx, r); err != nil {
					t.Fatal(err)
				}
				r.Destination, r.DeliveryID, r.DeliveredAt = dest, delivery, at
				if err := s.SaveMessage(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			save("m-failed", "", "", outbound.StatusFailed, t0)
			save("m-log", "log", "log:m-log", outbound.StatusDelivered, t0.Add(time.Second))
			if _, found, err := s.ApprovalMessage(ctx, id); err != nil || found {
				t.Fatalf("only failed and logged sends: found %v, %v", found, err)
			}
			save("m-sent", "-100777", "5200", outbound.StatusDelivered, t0.Add(2*time.Second))
			got, found, err := s.ApprovalMessage(ctx, id)
			if err != nil || !found {
				t.Fatalf("found %v, %v", found, err)
			}
			if want := (approval.Sent{ChatID: -100777, MessageID: 5200, Text: "Approve the deploy?"}); got != want {
				t.Errorf("ApprovalMessage = %+v, want %+v", got, want)
			}
			if r, err := s.GetMessage(ctx, "m-sent"); err != nil || r.Actor != "ci" || r.ApprovalID != id {
				t.Errorf("stored message %+v, %v; want actor ci and the approval id", r, err)
			}
		})
	}
}
