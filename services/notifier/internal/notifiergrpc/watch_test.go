package notifiergrpc

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alertwatch"
	"github.com/groundcrew/groundcrew/services/notifier/internal/deliverylog"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// watchServer runs the handlers with a real pipeline and alert watcher on
// SQLite in a grpcserver (every interceptor, a loopback listener) until the
// returned stop is called, as notifier's Run does: the watcher stops with
// the server's context. stop returns Run's error.
func watchServer(t *testing.T) (notifierv1.NotifierServiceClient, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "notifiergrpc"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	p, err := pipeline.New(ctx, pipeline.Deps{
		Store: st, Enricher: failingEnricher{}, Deliverer: &deliverylog.Deliverer{Logger: discard()}, Logger: discard(),
	}, pipeline.Config{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = p.Stop(sctx)
	})
	// A grace period far longer than the test's deadlines: a watch that
	// held GracefulStop would show.
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0", GracePeriod: time.Minute}, discard())
	if err != nil {
		t.Fatal(err)
	}
	notifierv1.RegisterNotifierServiceServer(srv, NewNotifierService(discard(), Deps{
		Alerts: p, Watcher: alertwatch.New(st, alertwatch.Config{Poll: 50 * time.Millisecond, Stop: ctx.Done()}),
	}))
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("server stopped before it was ready: %v", err)
	}
	conn, err := grpc.NewClient(srv.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	var stopped bool
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("the server did not stop: a watch holds GracefulStop")
			return nil
		}
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return notifierv1.NewNotifierServiceClient(conn), stop
}

// recv reads the stream's next message in the background so a test can
// bound the wait.
func recv(t *testing.T, s notifierv1.NotifierService_WatchAlertsClient) (*notifierv1.WatchAlertsResponse, error) {
	t.Helper()
	type result struct {
		m   *notifierv1.WatchAlertsResponse
		err error
	}
	ch := make(chan result, 1)
	go func() {
		m, err := s.Recv()
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		return r.m, r.err
	case <-time.After(15 * time.Second):
		t.Fatal("no message on the watch before the deadline")
		return nil, nil
	}
}

// listening reads the watch's first message, which carries no alert.
func listening(t *testing.T, s notifierv1.NotifierService_WatchAlertsClient) {
	t.Helper()
	m, err := recv(t, s)
	if err != nil {
		t.Fatalf("watch ended before it listened: %v", err)
	}
	if m.GetAlert() != nil {
		t.Fatalf("first message carries alert %v, want none", m.GetAlert())
	}
}

func TestWatchAlertsStreamsAnAlertUntilDelivered(t *testing.T) {
	c, _ := watchServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.WatchAlerts(ctx, &notifierv1.WatchAlertsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The first message, without an alert, says the watch listens: the
	// alert posted next is seen.
	listening(t, stream)
	posted, err := c.IngestAlert(ctx, &notifierv1.IngestAlertRequest{Text: "disk full on db1"})
	if err != nil {
		t.Fatal(err)
	}
	id := posted.GetAlert().GetId()
	var (
		statuses []notifierv1.Alert_Status
		last     time.Time
	)
	for {
		m, err := recv(t, stream)
		if err != nil {
			t.Fatalf("watch ended before the alert was delivered (saw %v): %v", statuses, err)
		}
		if got := m.GetAlert().GetId(); got != id {
			t.Fatalf("watch sent alert %q, want only %q", got, id)
		}
		statuses = append(statuses, m.GetAlert().GetStatus())
		// Each message is a new change: never one already sent.
		if at := m.GetAlert().GetUpdateTime().AsTime(); !at.After(last) {
			t.Errorf("statuses %v: change at %v sent after one at %v", statuses, at, last)
		} else {
			last = at
		}
		if m.GetAlert().GetStatus() == notifierv1.Alert_DELIVERED {
			if m.GetAlert().GetMessage().GetText() == "" || m.GetAlert().GetUpdateTime() == nil {
				t.Errorf("delivered alert without its message or update time: %v", m.GetAlert())
			}
			break
		}
	}

	cancel()
	for {
		_, err := recv(t, stream)
		if err != nil {
			if status.Code(err) != codes.Canceled {
				t.Errorf("after the client cancelled: %v, want Canceled", err)
			}
			break
		}
	}
}

func TestWatchAlertsEndsAtShutdown(t *testing.T) {
	c, stop := watchServer(t)
	stream, err := c.WatchAlerts(context.Background(), &notifierv1.WatchAlertsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listening(t, stream)
	// stop fails the test when GracefulStop waits for the watch (the grace
	// period is a minute).
	if err := stop(); err != nil {
		t.Fatalf("server: %v", err)
	}
	if _, err := recv(t, stream); status.Code(err) != codes.Unavailable {
		t.Errorf("watch at shutdown ended with %v, want Unavailable", err)
	}
}

func TestWatchAlertsRejectsAnUndefinedStatus(t *testing.T) {
	c, _ := watchServer(t)
	stream, err := c.WatchAlerts(context.Background(), &notifierv1.WatchAlertsRequest{Status: 99})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recv(t, stream); status.Code(err) != codes.InvalidArgument {
		t.Errorf("watch with status 99: %v, want InvalidArgument", err)
	}
}

func TestWatchAlertsUnimplementedWithoutAStore(t *testing.T) {
	c := serve(t, Deps{})
	stream, err := c.WatchAlerts(context.Background(), &notifierv1.WatchAlertsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recv(t, stream); status.Code(err) != codes.Unimplemented {
		t.Errorf("watch without a watcher: %v, want Unimplemented", err)
	}
}
