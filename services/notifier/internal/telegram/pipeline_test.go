package telegram

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

type immediateRetry struct{}

func (immediateRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// pipelineEnv is a real pipeline on SQLite delivering through a Deliverer
// into the fake Telegram server.
type pipelineEnv struct {
	p     *pipeline.Pipeline
	store *store.Store
}

// newPipeline starts a pipeline whose Deliverer routes everything to chat
// and keeps chat migrations in the store.
func newPipeline(t *testing.T, srv *telegramtest.Server, chat string) pipelineEnv {
	t.Helper()
	return newPipelineLogged(t, srv, chat, discard())
}

// newPipelineLogged is newPipeline logging to logger.
func newPipelineLogged(t *testing.T, srv *telegramtest.Server, chat string, logger *slog.Logger) pipelineEnv {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "telegram"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	d := &Deliverer{Client: newClient(t, srv, 1000), Router: Router{Default: chat}, Logger: logger, Migrations: st}
	p, err := pipeline.New(ctx, pipeline.Deps{Store: st, Deliverer: d, Logger: logger},
		pipeline.Config{RetryPolicy: immediateRetry{}, PollInterval: 20 * time.Millisecond})
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
	return pipelineEnv{p: p, store: st}
}

// deliver ingests one resolved Alertmanager alert named text and returns it
// once DELIVERED or FAILED.
func (e pipelineEnv) deliver(t *testing.T, text string) *alert.Alert {
	t.Helper()
	ctx := context.Background()
	a, err := alert.FromAlertmanager(alert.AlertmanagerPayload{Alerts: []alert.AlertmanagerAlert{{
		Status: "resolved", Labels: map[string]string{"alertname": text}, Fingerprint: text,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	in, err := e.p.Ingest(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return e.wait(t, in[0].ID)
}

// wait returns alert id once DELIVERED or FAILED.
func (e pipelineEnv) wait(t *testing.T, id string) *alert.Alert {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(20 * time.Second); ; <-tick.C {
		got, err := e.p.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == alert.StatusDelivered || got.Status == alert.StatusFailed {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("alert still %s", got.Status)
		}
	}
}

// deliverThroughPipeline runs one alert through a real pipeline on SQLite
// into the fake Telegram server and returns it once DELIVERED or FAILED.
func deliverThroughPipeline(t *testing.T, srv *telegramtest.Server, text string) *alert.Alert {
	t.Helper()
	return newPipeline(t, srv, "-100123").deliver(t, text)
}

func TestPipelineWaitsOutTooManyRequests(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	calls := 0
	srv.Handle(func(telegramtest.Sent) telegramtest.Reply {
		calls++
		if calls == 1 {
			return telegramtest.TooManyRequests(1)
		}
		return telegramtest.Reply{}
	})
	a := deliverThroughPipeline(t, srv, "DiskFull")
	sent := srv.Sent()
	if a.Status != alert.StatusDelivered || len(sent) != 2 {
		t.Fatalf("status %s after %d sends", a.Status, len(sent))
	}
	if len(a.DeliveryIDs) != 1 || a.Destination != "-100123" {
		t.Errorf("alert %+v", a)
	}
}

func TestPipelineFallsBackToPlainText(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	srv.Handle(func(m telegramtest.Sent) telegramtest.Reply {
		if m.ParseMode == "MarkdownV2" {
			return telegramtest.CantParseEntities()
		}
		return telegramtest.Reply{}
	})
	a := deliverThroughPipeline(t, srv, "Disk.Full")
	sent := srv.Delivered()
	if a.Status != alert.StatusDelivered || len(sent) != 1 || sent[0].Text != "[RESOLVED] Disk.Full" || sent[0].ParseMode != "" {
		t.Fatalf("status %s, delivered %+v", a.Status, sent)
	}
}

func TestPipelineFailsOnPermanentError(t *testing.T) {
	srv := telegramtest.NewServer(t.Cleanup)
	srv.Handle(func(telegramtest.Sent) telegramtest.Reply {
		return telegramtest.Reply{ErrorCode: 400, Description: "Bad Request: chat not found"}
	})
	a := deliverThroughPipeline(t, srv, "DiskFull")
	if a.Status != alert.StatusFailed || a.Error != "telegram: 400 Bad Request: chat not found" || len(srv.Sent()) != 1 {
		t.Fatalf("status %s error %q after %d sends", a.Status, a.Error, len(srv.Sent()))
	}
}
