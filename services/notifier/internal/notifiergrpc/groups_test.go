package notifiergrpc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alertmanager"
	"github.com/groundcrew/groundcrew/services/notifier/internal/deliverylog"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// fakeSilencer stands in for Alertmanager's silences API.
type fakeSilencer struct {
	mu      sync.Mutex
	created []alertmanager.Silence
}

func (f *fakeSilencer) CreateSilence(_ context.Context, s alertmanager.Silence) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, s)
	return fmt.Sprintf("sil-%d", len(f.created)), nil
}

func (f *fakeSilencer) ExpireSilence(context.Context, string) error { return nil }

// withGroups serves the handlers over a real pipeline with alert groups
// (delivered to the delivery log); silencer nil is a server without
// ALERTMANAGER_URL.
func withGroups(t *testing.T, silencer pipeline.Silencer) notifierv1.NotifierServiceClient {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "notifiergrpc"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	deps := pipeline.Deps{Store: store.New(db), Enricher: failingEnricher{}, Deliverer: &deliverylog.Deliverer{Logger: discard()}, Logger: discard()}
	if silencer != nil {
		deps.Silencer = silencer
	}
	p, err := pipeline.New(ctx, deps, pipeline.Config{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.Stop(sctx)
		_ = db.Close()
	})
	return serve(t, Deps{Alerts: p, Groups: p})
}

// ingestGroup posts an Alertmanager group of one alert and returns its
// group id.
func ingestGroup(t *testing.T, c notifierv1.NotifierServiceClient, key, st string) string {
	t.Helper()
	resp, err := c.IngestAlertmanager(context.Background(), &notifierv1.IngestAlertmanagerRequest{
		Version: "4", GroupKey: key, Status: st, Receiver: "groundcrew",
		GroupLabels:  map[string]string{"alertname": "DiskFull"},
		CommonLabels: map[string]string{"alertname": "DiskFull", "instance": key},
		Alerts: []*notifierv1.AlertmanagerAlert{{
			Status: st, Labels: map[string]string{"alertname": "DiskFull", "instance": key}, Fingerprint: "fp-" + key + st,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetAlerts()[0].GetGroupId()
}

func allowed(t *testing.T, c notifierv1.NotifierServiceClient, id string) []notifierv1.AlertGroup_Action {
	t.Helper()
	resp, err := c.GetAlertGroup(context.Background(), &notifierv1.GetAlertGroupRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetAlertGroup().GetAllowedActions()
}

type actions = []notifierv1.AlertGroup_Action

// TestSilenceOnlyWhereItCanWork: without ALERTMANAGER_URL a group allows
// Ack only, and a Silence answers FailedPrecondition saying what to set,
// not "correct the request".
func TestSilenceOnlyWhereItCanWork(t *testing.T) {
	c, ctx := withGroups(t, nil), context.Background()
	id := ingestGroup(t, c, "db-1", "firing")
	if diff := cmp.Diff(actions{notifierv1.AlertGroup_ACK}, allowed(t, c, id)); diff != "" {
		t.Errorf("allowed actions without ALERTMANAGER_URL (-want +got):\n%s", diff)
	}
	_, err := c.SilenceAlertGroup(ctx, &notifierv1.SilenceAlertGroupRequest{Id: id, Duration: durationpb.New(time.Hour)})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != pipeline.SilenceNotConfigured {
		t.Errorf("Silence without ALERTMANAGER_URL = %v, want FailedPrecondition %q", err, pipeline.SilenceNotConfigured)
	}
	var kinds []string
	for _, d := range status.Convert(err).Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			for _, v := range pf.GetViolations() {
				kinds = append(kinds, v.GetType())
			}
		}
	}
	if diff := cmp.Diff([]string{"SILENCE_UNAVAILABLE"}, kinds); diff != "" {
		t.Errorf("PreconditionFailure types (-want +got):\n%s", diff)
	}
}

// TestAllowedActionsFollowTheGroup: with Alertmanager, a firing group
// allows Silence and Ack; a silence turns Silence into Expire, an ack
// removes Ack, and a resolved group allows nothing.
func TestAllowedActionsFollowTheGroup(t *testing.T) {
	c, ctx := withGroups(t, &fakeSilencer{}), context.Background()
	id := ingestGroup(t, c, "db-2", "firing")
	if diff := cmp.Diff(actions{notifierv1.AlertGroup_SILENCE, notifierv1.AlertGroup_ACK}, allowed(t, c, id)); diff != "" {
		t.Errorf("firing group (-want +got):\n%s", diff)
	}
	if _, err := c.SilenceAlertGroup(ctx, &notifierv1.SilenceAlertGroupRequest{Id: id, Duration: durationpb.New(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AckAlertGroup(ctx, &notifierv1.AckAlertGroupRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(actions{notifierv1.AlertGroup_EXPIRE_SILENCE}, allowed(t, c, id)); diff != "" {
		t.Errorf("silenced and acked group (-want +got):\n%s", diff)
	}
	resolved := ingestGroup(t, c, "db-3", "resolved")
	if got := allowed(t, c, resolved); len(got) != 0 {
		t.Errorf("resolved group allows %v, want nothing", got)
	}
	_, err := c.SilenceAlertGroup(ctx, &notifierv1.SilenceAlertGroupRequest{Id: resolved, Duration: durationpb.New(time.Hour)})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != pipeline.SilenceResolved {
		t.Errorf("Silence of a resolved group = %v, want FailedPrecondition %q", err, pipeline.SilenceResolved)
	}
}

// TestWhoActed: one rule for who acted. Without a key, the by the caller
// gave, marked self-declared; with one, the key's name, by kept beside it.
func TestWhoActed(t *testing.T) {
	c, ctx := withGroups(t, &fakeSilencer{}), context.Background()
	open := ingestGroup(t, c, "web-1", "firing")
	resp, err := c.AckAlertGroup(ctx, &notifierv1.AckAlertGroupRequest{Id: open, By: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	if a := resp.GetAlertGroup().GetAck(); a.GetActor() != "ann"+actor.SelfDeclared || !a.GetSelfDeclared() || a.GetBy() != "ann" {
		t.Errorf("ack without a key = %+v, want actor %q, self-declared", a, "ann"+actor.SelfDeclared)
	}
	keyed := metadata.NewOutgoingContext(ctx, metadata.Pairs(actor.MetadataKey, "oncall-bot"))
	sresp, err := c.SilenceAlertGroup(keyed, &notifierv1.SilenceAlertGroupRequest{Id: open, By: "ann", Duration: durationpb.New(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if s := sresp.GetAlertGroup().GetSilence(); s.GetActor() != "oncall-bot" || s.GetSelfDeclared() || s.GetBy() != "ann" {
		t.Errorf("silence with a key = %+v, want actor oncall-bot, not self-declared, by ann", s)
	}
	nobody := ingestGroup(t, c, "web-2", "firing")
	resp, err = c.AckAlertGroup(ctx, &notifierv1.AckAlertGroupRequest{Id: nobody})
	if err != nil {
		t.Fatal(err)
	}
	if a := resp.GetAlertGroup().GetAck(); a.GetActor() != "api" || a.GetSelfDeclared() {
		t.Errorf("ack without key or by = %+v, want actor api", a)
	}
}

// TestGroupAlertsBounded: a group whose alerts outgrow one response shows
// its latest ones, says it stopped short, and ListAlerts with its id pages
// through every one.
func TestGroupAlertsBounded(t *testing.T) {
	c, ctx := withGroups(t, nil), context.Background()
	const n = 120
	req := &notifierv1.IngestAlertmanagerRequest{
		Version: "4", GroupKey: "big", Status: "firing", Receiver: "groundcrew",
		GroupLabels: map[string]string{"alertname": "LogFlood"}, CommonLabels: map[string]string{"alertname": "LogFlood"},
	}
	for i := range n {
		req.Alerts = append(req.Alerts, &notifierv1.AlertmanagerAlert{
			Status: "firing", Labels: map[string]string{"alertname": "LogFlood", "pod": fmt.Sprintf("web-%d", i)},
			Annotations: map[string]string{"description": strings.Repeat("log line ", 1780)}, Fingerprint: fmt.Sprintf("fp%03d", i),
		})
	}
	resp, err := c.IngestAlertmanager(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetAlerts()[0].GetGroupId()
	g, err := c.GetAlertGroup(ctx, &notifierv1.GetAlertGroupRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(g.GetAlertGroup().GetAlerts()); !g.GetAlertGroup().GetAlertsTruncated() || got == 0 || got >= n {
		t.Errorf("GetAlertGroup: %d alerts, truncated %v; want some, and truncated", got, g.GetAlertGroup().GetAlertsTruncated())
	}
	seen := map[string]bool{}
	list := &notifierv1.ListAlertsRequest{GroupId: id, PageSize: 50}
	for {
		page, err := c.ListAlerts(ctx, list)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page.GetAlerts() {
			if a.GetGroupId() != id {
				t.Fatalf("ListAlerts(group_id) returned an alert of group %q", a.GetGroupId())
			}
			seen[a.GetId()] = true
		}
		if list.PageToken = page.GetNextPageToken(); list.PageToken == "" {
			break
		}
	}
	if len(seen) != n {
		t.Errorf("ListAlerts(group_id) listed %d alerts, want %d", len(seen), n)
	}
	other := ingestGroup(t, c, "db-9", "firing")
	page, err := c.ListAlerts(ctx, &notifierv1.ListAlertsRequest{GroupId: other})
	if err != nil || len(page.GetAlerts()) != 1 {
		t.Errorf("ListAlerts(other group) = %d alerts, %v; want 1", len(page.GetAlerts()), err)
	}
}
