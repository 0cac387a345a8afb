package pipeline

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// previousIngest stores alerts as Ingest does and queues the job the
// previous release queued for each (notifier_deliver_alert).
func previousIngest(t *testing.T, p *Pipeline, texts ...string) []*alert.Alert {
	t.Helper()
	as := make([]alert.Alert, len(texts))
	for i, text := range texts {
		as[i] = generic(t, text)
	}
	out, err := p.intake(context.Background(), as, func(tx *sql.Tx, out []*alert.Alert, chats []string, now time.Time) ([]river.InsertManyParams, error) {
		var jobs []river.InsertManyParams
		for i, a := range out {
			a.Destination = chats[i]
			if err := p.insertAlert(context.Background(), tx, a, now); err != nil {
				return nil, err
			}
			jobs = append(jobs, river.InsertManyParams{Args: deliverArgs{AlertID: a.ID}})
		}
		return jobs, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestJobsOfThePreviousReleaseDeliverOnce queues jobs of the four kinds the
// previous release queued (an alert, a group notification, a storm digest,
// a root edit), as it queued them, and checks that the pipeline delivers
// each once, as the message job would.
func TestJobsOfThePreviousReleaseDeliverOnce(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "pipeline"), t.TempDir(), "notifier", discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	d := &fakeGroups{}
	p, err := New(ctx, Deps{Store: store.New(db), Enricher: &fakeEnricher{fn: okEnrichment}, Deliverer: d, Logger: discard()},
		Config{RetryPolicy: fastRetry{}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Stop(sctx); err != nil {
			t.Error(err)
		}
		_ = db.Close()
	})

	// Queued while the pipeline does not run, as an upgrade finds them.
	// A storm digest: its alerts' own jobs find them taken.
	digested := previousIngest(t, p, "storm alert one: queue depth high", "storm alert two: queue depth high")
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.store.ClaimForDigest(ctx, tx, "-100123", "digest-1", time.Now()); err != nil || n != 2 {
		t.Fatalf("claimed %d alerts for the digest (%v), want 2", n, err)
	}
	if _, err := p.river.InsertTx(ctx, tx, digestArgs{DigestID: "digest-1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Two alerts by themselves.
	single := previousIngest(t, p, "lone alert one: disk full on db-1", "lone alert two: disk full on db-2")
	// A group's first notification.
	gp, members := crashPayload(t, "{}:{alertname=\"KubePodCrashLooping\"}", 2, alert.Firing)
	grouped, err := p.intake(ctx, members, func(tx *sql.Tx, out []*alert.Alert, chats []string, now time.Time) ([]river.InsertManyParams, error) {
		job, err := p.notify(ctx, tx, gp, chats[0], out, now)
		if err != nil {
			return nil, err
		}
		return []river.InsertManyParams{{Args: groupArgs{NotificationID: job.Args.(messageArgs).NotificationID}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range append(append(digested, single...), grouped...) {
		waitStatus(t, p, a.ID, alert.StatusDelivered)
	}
	perAlert := map[string]int{}
	d.mu.Lock()
	for _, a := range d.sent {
		perAlert[a.ID]++
	}
	d.mu.Unlock()
	for _, a := range single {
		if perAlert[a.ID] != 1 {
			t.Errorf("alert %q sent %d times, want once", a.Text, perAlert[a.ID])
		}
	}
	if perAlert["digest-1-1"] != 1 || len(perAlert) != 3 {
		t.Errorf("deliveries by id %v, want each lone alert and the digest's one page once", perAlert)
	}
	sends, _ := d.snapshot()
	if len(sends) != 1 || sends[0].replyTo != "" {
		t.Fatalf("group messages %+v, want the root once", sends)
	}

	// A root edit the previous release queued on an acknowledgement.
	gid := grouped[0].GroupID
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done, err := p.store.AckGroup(ctx, tx, gid, alert.Ack{Actor: "@ben", At: time.Now().UTC()}); err != nil || !done {
		t.Fatalf("acknowledging: %v, %v", done, err)
	}
	if _, err := p.river.InsertTx(ctx, tx, editArgs{GroupID: gid}, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	waitfor.Cond(t, "the root edited", func() bool {
		_, edits := d.snapshot()
		return len(edits) > 0
	})
	_, edits := d.snapshot()
	if len(edits) != 1 || edits[0].id != sends[0].id || !strings.Contains(edits[0].plain, "acked by @ben") {
		t.Errorf("root edits %+v, want one of root %s showing the ack", edits, sends[0].id)
	}
}
