package notifiergrpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/deliverylog"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func serve(t *testing.T, deps Deps) notifierv1.NotifierServiceClient {
	t.Helper()
	conn := grpcservertest.Serve(t, func(srv *grpc.Server) {
		notifierv1.RegisterNotifierServiceServer(srv, NewNotifierService(discard(), deps))
	})
	return notifierv1.NewNotifierServiceClient(conn)
}

type failingEnricher struct{}

func (failingEnricher) Enrich(context.Context, string) (pipeline.Enrichment, error) {
	return pipeline.Enrichment{}, errors.New("grounding down")
}

// withPipeline serves the handlers over a real pipeline on SQLite that
// delivers to the delivery log.
func withPipeline(t *testing.T) notifierv1.NotifierServiceClient {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "notifiergrpc"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(ctx, pipeline.Deps{
		Store: store.New(db), Enricher: failingEnricher{}, Deliverer: &deliverylog.Deliverer{Logger: discard()}, Logger: discard(),
	}, pipeline.Config{PollInterval: 20 * time.Millisecond})
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
	return serve(t, Deps{Alerts: p})
}

func readRequest(t *testing.T, name string, m proto.Message) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "alert", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	// The gateway decodes REST bodies with protojson: the real payloads must
	// decode as they are.
	if err := protojson.Unmarshal(data, m); err != nil {
		t.Fatalf("decoding %s as %T: %v", name, m, err)
	}
}

func waitDelivered(t *testing.T, c notifierv1.NotifierServiceClient, id string) *notifierv1.Alert {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := c.GetAlert(context.Background(), &notifierv1.GetAlertRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetAlert().GetStatus() == notifierv1.Alert_DELIVERED {
			return resp.GetAlert()
		}
		if time.Now().After(deadline) {
			t.Fatalf("alert %s still %s", id, resp.GetAlert().GetStatus())
		}
		<-tick.C
	}
}

func TestIngestAlertToDelivered(t *testing.T) {
	c := withPipeline(t)
	md, _ := structpb.NewStruct(map[string]any{"severity": "critical", "service": "checkout-api"})
	resp, err := c.IngestAlert(context.Background(), &notifierv1.IngestAlertRequest{Text: "High error rate on checkout-api: 5xx > 10% for 5m", Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.GetAlert()
	if got.GetId() == "" || got.GetStatus() != notifierv1.Alert_RECEIVED || got.GetSource() != "generic" || got.GetReceivedAt() == nil {
		t.Fatalf("accepted alert %v", got)
	}
	a := waitDelivered(t, c, got.GetId())
	want := &notifierv1.Alert{
		Id: got.GetId(), Text: "High error rate on checkout-api: 5xx > 10% for 5m", Metadata: md,
		Status: notifierv1.Alert_DELIVERED, Attempts: 1, Source: "generic", Fingerprint: got.GetFingerprint(),
		EnrichmentError: "grounding failed", DeliveryIds: []string{"log:" + got.GetId()}, Destination: "log",
		Message: &notifierv1.TelegramMessage{
			Text:      "High error rate on checkout\\-api: 5xx \\> 10% for 5m\n\n_Enrichment unavailable: grounding failed_",
			ParseMode: "MarkdownV2", DisableWebPagePreview: true,
		},
	}
	if diff := cmp.Diff(want, a, protocmp.Transform(),
		protocmp.IgnoreFields(&notifierv1.Alert{}, "received_at", "update_time", "deliver_time")); diff != "" {
		t.Errorf("delivered alert (-want +got):\n%s", diff)
	}
	if a.GetDeliverTime() == nil {
		t.Error("no deliver_time")
	}
}

func TestIngestValidation(t *testing.T) {
	c := withPipeline(t)
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"blank text", func() error {
			_, err := c.IngestAlert(context.Background(), &notifierv1.IngestAlertRequest{Text: " \n"})
			return err
		}, "text"},
		{"alertmanager bad status", func() error {
			_, err := c.IngestAlertmanager(context.Background(), &notifierv1.IngestAlertmanagerRequest{
				Alerts: []*notifierv1.AlertmanagerAlert{{Status: "pending"}},
			})
			return err
		}, "alerts[0].status"},
		{"grafana no alerts", func() error {
			_, err := c.IngestGrafana(context.Background(), &notifierv1.IngestGrafanaRequest{})
			return err
		}, "alerts"},
		{"bad page token", func() error {
			_, err := c.ListAlerts(context.Background(), &notifierv1.ListAlertsRequest{PageToken: "nope!"})
			return err
		}, "page_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("code = %v (%v), want InvalidArgument", st.Code(), err)
			}
			var fields []string
			for _, d := range st.Details() {
				if br, ok := d.(*errdetails.BadRequest); ok {
					for _, v := range br.GetFieldViolations() {
						fields = append(fields, v.GetField())
					}
				}
			}
			if diff := cmp.Diff([]string{tt.field}, fields); diff != "" {
				t.Errorf("field violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIngestAlertmanagerAndGrafanaFixtures(t *testing.T) {
	c := withPipeline(t)
	ctx := context.Background()

	var am notifierv1.IngestAlertmanagerRequest
	readRequest(t, "alertmanager_firing.json", &am)
	first, err := c.IngestAlertmanager(ctx, &am)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.GetAlerts()) != 2 {
		t.Fatalf("%d alerts, want 2", len(first.GetAlerts()))
	}
	a := first.GetAlerts()[0]
	if a.GetSource() != "alertmanager" || a.GetAlertStatus() != "firing" || a.GetFingerprint() != "b2a1f0c3d4e5f607" ||
		!strings.HasPrefix(a.GetText(), "[FIRING] HighErrorRate (critical): High error rate on checkout-api") {
		t.Errorf("first alert %v", a)
	}
	if got := a.GetMetadata().GetFields()["startsAt"].GetStringValue(); got != "2025-03-14T09:26:53.123Z" {
		t.Errorf("startsAt in metadata = %q", got)
	}
	// Alertmanager repeats the group: recorded as duplicates.
	again, err := c.IngestAlertmanager(ctx, &am)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range again.GetAlerts() {
		if d.GetStatus() != notifierv1.Alert_DUPLICATE || d.GetDuplicateOf() != first.GetAlerts()[i].GetId() {
			t.Errorf("repeat %d: %s of %q", i, d.GetStatus(), d.GetDuplicateOf())
		}
	}

	var gr notifierv1.IngestGrafanaRequest
	readRequest(t, "grafana_resolved.json", &gr)
	g, err := c.IngestGrafana(ctx, &gr)
	if err != nil {
		t.Fatal(err)
	}
	delivered := waitDelivered(t, c, g.GetAlerts()[0].GetId())
	if delivered.GetEnrichmentError() != "" || !strings.HasPrefix(delivered.GetMessage().GetText(), `\[RESOLVED\] Disk usage above 90%`) {
		t.Errorf("resolved Grafana alert delivered as %q (enrichment error %q)", delivered.GetMessage().GetText(), delivered.GetEnrichmentError())
	}
}

func TestGetAndListAlerts(t *testing.T) {
	c := withPipeline(t)
	ctx := context.Background()
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		resp, err := c.IngestAlert(ctx, &notifierv1.IngestAlertRequest{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{resp.GetAlert().GetId()}, ids...)
	}
	if _, err := c.GetAlert(ctx, &notifierv1.GetAlertRequest{Id: "missing"}); status.Code(err) != codes.NotFound {
		t.Errorf("GetAlert(missing) = %v, want NotFound", err)
	}
	var got []string
	req := &notifierv1.ListAlertsRequest{PageSize: 2}
	for {
		resp, err := c.ListAlerts(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range resp.GetAlerts() {
			got = append(got, a.GetId())
		}
		if resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("listed ids, newest first (-want +got):\n%s", diff)
	}
	for _, id := range ids {
		waitDelivered(t, c, id)
	}
	resp, err := c.ListAlerts(ctx, &notifierv1.ListAlertsRequest{Status: notifierv1.Alert_RECEIVED})
	if err != nil || len(resp.GetAlerts()) != 0 {
		t.Errorf("RECEIVED after delivery: %v, %v", resp.GetAlerts(), err)
	}
}

type brokenAlerts struct{}

func (brokenAlerts) Ingest(context.Context, []alert.Alert) ([]*alert.Alert, error) {
	return nil, errors.New("disk I/O error at /var/lib/secret/notifier.db")
}

func (brokenAlerts) Get(context.Context, string) (*alert.Alert, error) {
	return nil, errors.New("disk I/O error at /var/lib/secret/notifier.db")
}

func (brokenAlerts) List(context.Context, store.ListQuery) (store.Page[*alert.Alert], error) {
	return store.Page[*alert.Alert]{}, errors.New("disk I/O error at /var/lib/secret/notifier.db")
}

func TestInternalErrorsDoNotLeak(t *testing.T) {
	c := serve(t, Deps{Alerts: brokenAlerts{}})
	_, err := c.IngestAlert(context.Background(), &notifierv1.IngestAlertRequest{Text: "x"})
	if st := status.Convert(err); st.Code() != codes.Internal || strings.Contains(st.Message(), "secret") {
		t.Errorf("err = %v, want a bare Internal", err)
	}
}

type recordingUpdates struct {
	got []chat.Update
}

func (r *recordingUpdates) Handle(_ context.Context, u chat.Update) (string, error) {
	r.got = append(r.got, u)
	return chat.Replied, nil
}

func TestTelegramWebhookSecret(t *testing.T) {
	rec := &recordingUpdates{}
	c := serve(t, Deps{Updates: rec, WebhookSecret: "s3cret"})
	req := &notifierv1.HandleTelegramUpdateRequest{Update: &notifierv1.TelegramUpdate{UpdateId: 1}}
	tests := []struct {
		name string
		md   metadata.MD
		want codes.Code
	}{
		{"missing", nil, codes.Unauthenticated},
		{"wrong", metadata.Pairs(SecretTokenKey, "guess"), codes.Unauthenticated},
		{"prefix", metadata.Pairs(SecretTokenKey, "s3cre"), codes.Unauthenticated},
		{"right", metadata.Pairs(SecretTokenKey, "s3cret"), codes.OK},
	}
	for _, tt := range tests {
		ctx := metadata.NewOutgoingContext(context.Background(), tt.md)
		_, err := c.HandleTelegramUpdate(ctx, req)
		if status.Code(err) != tt.want {
			t.Errorf("%s: code %v, want %v", tt.name, status.Code(err), tt.want)
		}
	}
	if len(rec.got) != 1 {
		t.Errorf("%d updates reached the agent, want 1", len(rec.got))
	}
}

func TestToUpdate(t *testing.T) {
	got := toUpdate(readUpdate(t, "group_photo_reply.json"))
	want := chat.Update{
		ID:   824416790,
		Kind: chat.KindMessage,
		Message: &chat.Incoming{
			MessageID:       5121,
			From:            &chat.User{ID: 84211, FirstName: "Ana", LastName: "Silva", Username: "anasilva"},
			Chat:            chat.Chat{ID: -1001987654321, Type: "supergroup", Title: "SRE on-call"},
			Date:            time.Unix(1741947530, 0).UTC(),
			Caption:         "@groundcrew_bot is this the same disk issue as last week?",
			CaptionEntities: []chat.Entity{{Type: "mention", Offset: 0, Length: 15}},
			Entities:        []chat.Entity{},
			Media: []chat.Media{{
				Kind: "photo", UniqueID: "AQADq8IxG3-hUEl9", Width: 1280, Height: 720, Size: 98211,
			}},
			ReplyTo: &chat.Incoming{
				MessageID: 5119,
				From:      &chat.User{ID: 7100000001, IsBot: true, FirstName: "Groundcrew", Username: "groundcrew_bot"},
				Chat:      chat.Chat{ID: -1001987654321, Type: "supergroup", Title: "SRE on-call"},
				Date:      time.Unix(1741947000, 0).UTC(),
				Text:      "[FIRING] Disk usage above 90% (warning): Disk almost full on db-1",
				Entities:  []chat.Entity{}, CaptionEntities: []chat.Entity{},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}
