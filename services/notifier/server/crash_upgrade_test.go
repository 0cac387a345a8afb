package server_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/jobqueue"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// The delivery jobs of the previous release, as it stored them: a kind per
// delivery, and these args. This release queues one message job instead,
// and still runs these (pipeline/legacy.go).
type (
	oldAlertJob struct {
		AlertID string `json:"alert_id"`
	}
	oldGroupJob struct {
		NotificationID string `json:"notification_id"`
	}
	oldEditJob struct {
		GroupID string `json:"group_id"`
	}
	oldDigestJob struct {
		DigestID string `json:"digest_id"`
	}
)

func (oldAlertJob) Kind() string  { return "notifier_deliver_alert" }
func (oldGroupJob) Kind() string  { return "notifier_deliver_group_notification" }
func (oldEditJob) Kind() string   { return "notifier_edit_group_root" }
func (oldDigestJob) Kind() string { return "notifier_deliver_digest" }

// notRun registers an old kind with the test's queue, which only inserts:
// River refuses to insert a kind it has no worker for. The notifier under
// test works the jobs.
type notRun[A river.JobArgs] struct{ river.WorkerDefaults[A] }

func (notRun[A]) Work(context.Context, *river.Job[A]) error {
	return errors.New("the notifier under test works this job, not the test")
}

// previousRelease writes what the previous release left in its database
// when it was killed: alerts, groups and notifications as its intake
// stored them, and delivery jobs of its own kinds.
type previousRelease struct {
	t    *testing.T
	db   *sqlstore.DB
	st   *store.Store
	jobs *river.Client[*sql.Tx]
	now  time.Time
}

// upgradeChat is the chat TELEGRAM_CHAT_ID routes every alert to.
const upgradeChat = "-100123"

func openPreviousRelease(t *testing.T, databaseURL, dataDir string) *previousRelease {
	t.Helper()
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlstore.Open(ctx, databaseURL, dataDir, "notifier", logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, notRun[oldAlertJob]{})
	river.AddWorker(workers, notRun[oldGroupJob]{})
	river.AddWorker(workers, notRun[oldEditJob]{})
	river.AddWorker(workers, notRun[oldDigestJob]{})
	q, err := jobqueue.Open(ctx, db, workers, jobqueue.Config{
		Workers: 1, PollInterval: time.Second, JobTimeout: time.Minute, MaxAttempts: pipeline.DefaultMaxAttempts,
	}, logger)
	if err != nil {
		t.Fatal(err)
	}
	return &previousRelease{t: t, db: db, st: store.New(db), jobs: q.Client, now: time.Now().UTC().Truncate(time.Microsecond)}
}

func (r *previousRelease) id() string {
	id, err := uuid.NewV7()
	if err != nil {
		r.t.Fatal(err)
	}
	return id.String()
}

// tx runs fn in one transaction, as the previous release's intake did.
func (r *previousRelease) tx(fn func(tx *sql.Tx)) {
	r.t.Helper()
	tx, err := r.db.BeginTx(context.Background(), nil)
	if err != nil {
		r.t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	fn(tx)
	if err := tx.Commit(); err != nil {
		r.t.Fatal(err)
	}
}

// queue inserts a job of an old kind through tx and returns its id.
func (r *previousRelease) queue(tx *sql.Tx, args river.JobArgs) int64 {
	r.t.Helper()
	res, err := r.jobs.InsertTx(context.Background(), tx, args, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return res.Job.ID
}

// alerts stores generic alerts routed to upgradeChat, each with its
// notifier_deliver_alert job, and returns them and their jobs' ids.
func (r *previousRelease) alerts(tx *sql.Tx, texts ...string) ([]*alert.Alert, []int64) {
	r.t.Helper()
	var (
		out []*alert.Alert
		ids []int64
	)
	for _, text := range texts {
		a, err := alert.Generic(text, map[string]any{"severity": "critical"})
		if err != nil {
			r.t.Fatal(err)
		}
		a.ID, a.Status, a.Destination = r.id(), alert.StatusReceived, upgradeChat
		a.ReceivedAt, a.UpdatedAt = r.now, r.now
		if err := r.st.InsertAlert(context.Background(), tx, &a); err != nil {
			r.t.Fatal(err)
		}
		out = append(out, &a)
		ids = append(ids, r.queue(tx, oldAlertJob{AlertID: a.ID}))
	}
	return out, ids
}

// group stores an Alertmanager group named name with its first
// notification, whose alerts' summaries are summaries.
func (r *previousRelease) group(tx *sql.Tx, name string, summaries ...string) (*alert.Group, *store.Notification, []*alert.Alert) {
	r.t.Helper()
	ctx := context.Background()
	p := alert.AlertmanagerPayload{
		Version: "4", GroupKey: `{}:{alertname="` + name + `"}`, Status: alert.Firing, Receiver: "groundcrew",
		GroupLabels:  map[string]string{"alertname": name},
		CommonLabels: map[string]string{"alertname": name, "severity": "warning"},
	}
	for i, s := range summaries {
		p.Alerts = append(p.Alerts, alert.AlertmanagerAlert{
			Status: alert.Firing, Fingerprint: fmt.Sprintf("%s%02d", name, i),
			Labels:      map[string]string{"alertname": name, "severity": "warning", "pod": fmt.Sprintf("web-%d", i)},
			Annotations: map[string]string{"summary": s},
		})
	}
	as, err := alert.FromAlertmanager(p)
	if err != nil {
		r.t.Fatal(err)
	}
	gp, ok := alert.AlertmanagerGroup(p)
	if !ok {
		r.t.Fatal("the payload has no group")
	}
	g := &alert.Group{
		ID: r.id(), GroupKey: gp.GroupKey, Source: gp.Source, Destination: upgradeChat, CreatedAt: r.now, UpdatedAt: r.now,
		GroupLabels: gp.GroupLabels, CommonLabels: gp.CommonLabels, CommonAnnotations: gp.CommonAnnotations, ExternalURL: gp.ExternalURL,
	}
	members := make([]*alert.Alert, len(as))
	for i := range as {
		a := &as[i]
		a.ID, a.Status, a.GroupID = r.id(), alert.StatusReceived, g.ID
		a.ReceivedAt, a.UpdatedAt = r.now, r.now
		members[i] = a
	}
	g.Tally(members)
	if err := r.st.InsertGroup(ctx, tx, g); err != nil {
		r.t.Fatal(err)
	}
	n := &store.Notification{ID: r.id(), GroupID: g.ID, Status: alert.StatusReceived, ReceivedAt: r.now}
	for _, a := range members {
		if err := r.st.InsertAlert(ctx, tx, a); err != nil {
			r.t.Fatal(err)
		}
		n.AlertIDs = append(n.AlertIDs, a.ID)
	}
	if n.Seq, err = r.st.NextSeq(ctx, tx, g.ID); err != nil {
		r.t.Fatal(err)
	}
	if err := r.st.InsertNotification(ctx, tx, n); err != nil {
		r.t.Fatal(err)
	}
	return g, n, members
}

// TestCrashUpgradeDeliversJobsOfThePreviousRelease starts this release on
// the database of a previous release that was killed with its delivery
// jobs queued, one of them running: jobs of the four kinds it queued (an
// alert, a group notification, a storm digest, a root edit). Each is
// delivered once: one Telegram message per alert, one edit of the
// acknowledged group's root.
func TestCrashUpgradeDeliversJobsOfThePreviousRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the notifier binary")
	}
	bin := buildNotifier(t)
	tg := telegramtest.NewServer(t.Cleanup)
	grounding := startGrounding(t, 10*time.Millisecond)
	dataDir, databaseURL := t.TempDir(), sqlstoretest.URL(t, "notifier_upgrade")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	prev := openPreviousRelease(t, databaseURL, dataDir)
	var (
		single, digested []*alert.Alert
		singleJobs       []int64
		grouped          []*alert.Alert
		acked            *alert.Group
	)
	prev.tx(func(tx *sql.Tx) {
		// A storm digest (its alerts' own jobs find them taken), then
		// alerts by themselves, then a group's first notification.
		digested, _ = prev.alerts(tx, "upgrade-digest-01: queue backed up", "upgrade-digest-02: queue backed up", "upgrade-digest-03: queue backed up")
		digestID := prev.id()
		if n, err := prev.st.ClaimForDigest(ctx, tx, upgradeChat, digestID, prev.now); err != nil || n != len(digested) {
			t.Fatalf("claimed %d alerts for the digest (%v), want %d", n, err, len(digested))
		}
		prev.queue(tx, oldDigestJob{DigestID: digestID})
		single, singleJobs = prev.alerts(tx, "upgrade-alert-01: disk full on db-1", "upgrade-alert-02: disk full on db-2", "upgrade-alert-03: disk full on db-3")
		_, n, members := prev.group(tx, "UpgradeRoot", "upgrade-group-01 crash looping", "upgrade-group-02 crash looping")
		prev.queue(tx, oldGroupJob{NotificationID: n.ID})
		grouped = members
	})
	// A group whose root went out before the upgrade, acknowledged since:
	// its root edit is queued.
	var ackedNote *store.Notification
	prev.tx(func(tx *sql.Tx) {
		acked, ackedNote, _ = prev.group(tx, "UpgradeAcked", "upgrade-acked-01 crash looping")
	})
	const ackedRoot = "7001"
	if err := prev.st.DeliverNotification(ctx, ackedNote, store.Delivered{
		Destination: upgradeChat, DeliveryID: ackedRoot, Root: true,
		Message: alert.Message{Text: "UpgradeAcked", Plain: "UpgradeAcked"},
	}, prev.now); err != nil {
		t.Fatal(err)
	}
	prev.tx(func(tx *sql.Tx) {
		if done, err := prev.st.AckGroup(ctx, tx, acked.ID, alert.Ack{Actor: "@ben", At: prev.now}); err != nil || !done {
			t.Fatalf("acknowledging: %v, %v", done, err)
		}
		prev.queue(tx, oldEditJob{GroupID: acked.ID})
	})
	// The killed process was working the first alert's job: claimed, and
	// running since long enough that PostgreSQL's rescuer takes it back
	// at once (SQLite's start makes every running job available).
	if _, err := prev.st.ClaimForDelivery(ctx, single[0].ID, alert.StatusEnriching, prev.now); err != nil {
		t.Fatal(err)
	}
	running := `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = datetime('now', 'subsec', '-1 hour') WHERE id = $1`
	if prev.db.Dialect == sqlstore.Postgres {
		running = `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - interval '1 hour' WHERE id = $1`
	}
	if _, err := prev.db.ExecContext(ctx, running, singleJobs[0]); err != nil {
		t.Fatal(err)
	}
	if err := prev.db.Close(); err != nil {
		t.Fatal(err)
	}

	env := []string{
		"DATA_DIR=" + dataDir, "DATABASE_URL=" + databaseURL,
		"LOG_FORMAT=json", "LOG_LEVEL=info",
		"NOTIFIER_LISTEN_ADDR=127.0.0.1:0", "NOTIFIER_ADMIN_ADDR=127.0.0.1:0",
		"GROUNDING_ADDR=" + grounding,
		"TELEGRAM_BOT_TOKEN=7100000001:AAE-crash-test", "TELEGRAM_WEBHOOK_SECRET=crash-test-secret",
		"TELEGRAM_API_URL=" + tg.URL, "TELEGRAM_CHAT_ID=" + upgradeChat, "TELEGRAM_BOT_USERNAME=groundcrew_bot",
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT=1000", "NOTIFIER_TELEGRAM_RATE_OVERALL=1000",
		"NOTIFIER_POLL_INTERVAL=50ms", "GRACE_PERIOD=1s",
	}
	if sqlstoretest.OnPostgres() {
		env = append(env, "NOTIFIER_ENRICH_TIMEOUT=1s", "NOTIFIER_JOB_TIMEOUT=11s", "NOTIFIER_RESCUE_AFTER=12s")
	}
	c := start(t, bin, env)
	client := dial(t, c.addr)

	all := append(append(append([]*alert.Alert(nil), single...), digested...), grouped...)
	wait := 90 * time.Second
	if sqlstoretest.OnPostgres() {
		wait = 3 * time.Minute // the rescuer runs once this instance leads
	}
	waitfor.Within(t, wait, "every alert the previous release queued DELIVERED and the acknowledged root edited", tg.Changed(), func() bool {
		if len(tg.Calls("editMessageText")) == 0 {
			return false
		}
		for _, a := range all {
			res, err := client.GetAlert(ctx, &notifierv1.GetAlertRequest{Id: a.ID})
			if err != nil {
				t.Fatal(err)
			}
			if res.GetAlert().GetStatus() != notifierv1.Alert_DELIVERED {
				return false
			}
		}
		return true
	})

	msgs := tg.Delivered()
	for _, a := range all {
		marker, _, _ := strings.Cut(a.Text, ":")
		if a.GroupID != "" {
			marker, _, _ = strings.Cut(alert.Summary(a), " ")
		}
		n := 0
		for _, m := range msgs {
			if strings.Contains(plainText(t, m.Text), marker) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s is in %d Telegram messages, want 1", marker, n)
		}
	}
	// The alerts by themselves, the digest's one page, the group's root.
	if want := len(single) + 2; len(msgs) != want {
		t.Errorf("%d Telegram messages, want %d", len(msgs), want)
	}
	edits := tg.Calls("editMessageText")
	if len(edits) != 1 || edits[0].Form["message_id"] != ackedRoot || !strings.Contains(plainText(t, edits[0].Form["text"]), "acked by @ben") {
		t.Errorf("root edits %+v, want one of message %s showing the ack", edits, ackedRoot)
	}
}
