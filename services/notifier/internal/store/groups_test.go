package store

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

func newGroup(id, key string) *alert.Group {
	return &alert.Group{
		ID: id, GroupKey: key, Source: alert.SourceAlertmanager, Destination: "-100",
		Status: alert.GroupFiring, Firing: 2,
		GroupLabels:       map[string]string{"alertname": "KubePodCrashLooping"},
		CommonLabels:      map[string]string{"alertname": "KubePodCrashLooping", "namespace": "shop"},
		CommonAnnotations: map[string]string{},
		ExternalURL:       "http://am:9093",
		CreatedAt:         t0, UpdatedAt: t0,
	}
}

func TestGroupRoundTrip(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			g := newGroup("g1", `{}:{alertname="KubePodCrashLooping"}`)
			if err := s.InsertGroup(ctx, s.DB(), g); err != nil {
				t.Fatal(err)
			}
			// The UNIQUE key refuses a second group for the same key and chat.
			if err := s.InsertGroup(ctx, s.DB(), newGroup("g2", g.GroupKey)); err == nil {
				t.Fatal("InsertGroup of a second group with the same key and chat succeeded")
			}
			found, err := s.FindGroup(ctx, s.DB(), g.Source, g.GroupKey, g.Destination)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g, found, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("found group (-want +got):\n%s", diff)
			}
			if other, err := s.FindGroup(ctx, s.DB(), g.Source, g.GroupKey, "-200"); err != nil || other != nil {
				t.Errorf("FindGroup for another chat = %v, %v; want nil, nil", other, err)
			}

			g.Silence = &alert.Silence{ID: "s-1", Actor: "@ann", EndsAt: t0.Add(3600e9), CreatedAt: t0}
			g.Ack = &alert.Ack{Actor: "@bob", By: "Bob", At: t0}
			if err := s.SetGroupSilence(ctx, s.DB(), g.ID, *g.Silence, t0); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.AckGroup(ctx, s.DB(), g.ID, *g.Ack); err != nil || !ok {
				t.Fatalf("AckGroup = %v, %v; want true", ok, err)
			}
			g.Status, g.Firing, g.Resolved = alert.GroupResolved, 0, 2
			if err := s.UpdateGroup(ctx, s.DB(), g); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetGroup(ctx, nil, "g1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(g, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("updated group (-want +got):\n%s", diff)
			}
			if _, err := s.GetGroup(ctx, nil, "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("GetGroup(nope) error = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestUpdateGroupKeepsWhatOthersWrote: intake reads a group, then writes
// its counts and labels back; a root, enrichment, silence or ack recorded
// in between stays (a lost root left the group's replies waiting for ever).
func TestUpdateGroupKeepsWhatOthersWrote(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			g := newGroup("g1", "k")
			if err := s.InsertGroup(ctx, s.DB(), g); err != nil {
				t.Fatal(err)
			}
			read, err := s.FindGroup(ctx, s.DB(), g.Source, g.GroupKey, g.Destination)
			if err != nil || read == nil {
				t.Fatalf("FindGroup = %v, %v", read, err)
			}

			n := &Notification{ID: "n1", GroupID: g.ID, AlertIDs: []string{}, Status: alert.StatusReceived, ReceivedAt: t0}
			if err := s.InsertNotification(ctx, s.DB(), n); err != nil {
				t.Fatal(err)
			}
			if err := s.DeliverNotification(ctx, n, Delivered{Destination: "-100", DeliveryID: "101", Root: true}, t0.Add(1e9)); err != nil {
				t.Fatal(err)
			}
			enriched := *g
			enriched.Enrichment, enriched.GroundingMessageID, enriched.EnrichmentError = &alert.Enrichment{Summary: "x"}, "gm-1", ""
			if err := s.SaveGroupEnrichment(ctx, &enriched, "key", t0.Add(1e9)); err != nil {
				t.Fatal(err)
			}
			sil := alert.Silence{ID: "s-1", Actor: "@ann", EndsAt: t0.Add(3600e9), CreatedAt: t0}
			if err := s.SetGroupSilence(ctx, s.DB(), g.ID, sil, t0.Add(1e9)); err != nil {
				t.Fatal(err)
			}
			ack := alert.Ack{Actor: "@bob", By: "Bob", At: t0.Add(1e9)}
			if ok, err := s.AckGroup(ctx, s.DB(), g.ID, ack); err != nil || !ok {
				t.Fatalf("AckGroup = %v, %v; want true", ok, err)
			}

			// Intake writes back the group it read before all that.
			read.Firing, read.Resolved, read.Status = 3, 1, alert.GroupFiring
			read.CommonLabels = map[string]string{"alertname": "KubePodCrashLooping"}
			read.UpdatedAt = t0.Add(2e9)
			if err := s.UpdateGroup(ctx, s.DB(), read); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetGroup(ctx, nil, g.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := *read
			want.RootMessageID = "101"
			want.Enrichment, want.GroundingMessageID = enriched.Enrichment, enriched.GroundingMessageID
			want.Silence, want.Ack = &sil, &ack
			if diff := cmp.Diff(&want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("group after intake's update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotificationDelivery(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			g := newGroup("g1", "k")
			if err := s.InsertGroup(ctx, s.DB(), g); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, id := range []string{"a1", "a2"} {
				a := newAlert(id, t0)
				a.GroupID = g.ID
				if err := s.InsertAlert(ctx, s.DB(), a); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			seq, err := s.NextSeq(ctx, s.DB(), g.ID)
			if err != nil || seq != 0 {
				t.Fatalf("NextSeq = %d, %v; want 0", seq, err)
			}
			n := &Notification{ID: "n1", GroupID: g.ID, Seq: seq, AlertIDs: ids, Status: alert.StatusReceived, ReceivedAt: t0}
			if err := s.InsertNotification(ctx, s.DB(), n); err != nil {
				t.Fatal(err)
			}
			if seq, _ := s.NextSeq(ctx, s.DB(), g.ID); seq != 1 {
				t.Errorf("NextSeq after the root = %d, want 1", seq)
			}
			if err := s.DeliverNotification(ctx, n, Delivered{Destination: "-100", DeliveryID: "42", Root: true, Message: alert.Message{Text: "x", Plain: "x", ParseMode: "MarkdownV2"}, GroundingMessageID: "gm"}, t0.Add(1e9)); err != nil {
				t.Fatal(err)
			}
			gotN, err := s.GetNotification(ctx, "n1")
			if err != nil {
				t.Fatal(err)
			}
			if gotN.Status != alert.StatusDelivered || gotN.DeliveryID != "42" {
				t.Errorf("notification = %+v, want DELIVERED as 42", gotN)
			}
			gotG, _ := s.GetGroup(ctx, nil, g.ID)
			if gotG.RootMessageID != "42" {
				t.Errorf("root message id = %q, want 42", gotG.RootMessageID)
			}
			alerts, err := s.GroupAlerts(ctx, g.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(alerts) != 2 {
				t.Fatalf("GroupAlerts returned %d alerts, want 2", len(alerts))
			}
			for _, a := range alerts {
				if a.Status != alert.StatusDelivered || !cmp.Equal(a.DeliveryIDs, []string{"42"}) || a.Destination != "-100" || a.Message == nil || a.Message.Plain != "x" || a.GroundingMessageID != "gm" {
					t.Errorf("alert %s: status %s, delivery ids %v, destination %q; want DELIVERED, [42], -100", a.ID, a.Status, a.DeliveryIDs, a.Destination)
				}
			}
		})
	}
}
