package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
)

// DefaultDigestThreshold is the backlog of a chat beyond which its waiting
// alerts are collapsed into one digest message.
const DefaultDigestThreshold = 20

// digestArgs is the job that delivers one storm digest.
type digestArgs struct {
	DigestID string `json:"digest_id"`
}

// Kind names the job in River's tables.
func (digestArgs) Kind() string { return "notifier_deliver_digest" }

// digestWorker runs digestArgs jobs.
type digestWorker struct {
	river.WorkerDefaults[digestArgs]
	p *Pipeline
}

// maybeDigest collapses the alerts waiting for chat into one digest when
// there are more than the threshold: they are claimed (only alerts whose
// own job has not started, so none goes out twice) and a digest job is
// queued, in one transaction.
func (p *Pipeline) maybeDigest(ctx context.Context, chat string) error {
	if p.cfg.DigestThreshold <= 0 || p.groups == nil || chat == "" {
		return nil
	}
	n, err := p.store.Backlog(ctx, chat)
	if err != nil || n <= p.cfg.DigestThreshold {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("making a digest id: %w", err)
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("collecting a digest: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	claimed, err := p.store.ClaimForDigest(ctx, tx, chat, id.String(), p.now().UTC())
	if err != nil || claimed == 0 {
		return err
	}
	if _, err := p.river.InsertTx(ctx, tx, digestArgs{DigestID: id.String()}, nil); err != nil {
		return fmt.Errorf("queueing a digest: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("collecting a digest: %w", err)
	}
	p.metrics.digested.Add(float64(claimed))
	p.logger.InfoContext(ctx, "storm: alerts collapsed into a digest", "digest_id", id.String(), "alerts", claimed, "backlog", n)
	return nil
}

// Work sends the digest and marks its alerts DELIVERED with its id.
func (w *digestWorker) Work(ctx context.Context, job *river.Job[digestArgs]) error {
	p := w.p
	alerts, err := p.store.DigestAlerts(ctx, job.Args.DigestID)
	if err != nil {
		return err
	}
	var pending []*alert.Alert
	for _, a := range alerts {
		if a.Status != alert.StatusDelivered && a.Status != alert.StatusFailed {
			pending = append(pending, a)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	msg := toMessage(format.Format(DigestText(pending), nil, p.cfg.Format))
	d := &alert.Alert{ID: job.Args.DigestID, Source: "digest", Labels: pending[0].Labels, Message: &msg}
	receipt, err := p.deliverer.Deliver(ctx, d)
	now := p.now().UTC()
	if err != nil {
		p.metrics.deliveryErrors.WithLabelValues(errorCode(err)).Inc()
		var ra interface{ RetryAfter() time.Duration }
		if errors.As(err, &ra) {
			return river.JobSnooze(ra.RetryAfter())
		}
		var perm interface{ Permanent() bool }
		if (errors.As(err, &perm) && perm.Permanent()) || job.Attempt >= job.MaxAttempts {
			if serr := p.store.FailDigest(ctx, job.Args.DigestID, outbound.PublicError(err), now); serr != nil {
				return errors.Join(err, serr)
			}
			return river.JobCancel(err)
		}
		return err
	}
	if err := p.store.DeliverDigest(ctx, job.Args.DigestID, receipt.Destination, receipt.MessageIDs, msg, now); err != nil {
		return err
	}
	for _, a := range pending {
		p.metrics.delivered.WithLabelValues(a.Source, destinationKind(receipt.Destination)).Inc()
	}
	p.logger.InfoContext(ctx, "storm digest delivered", "digest_id", job.Args.DigestID, "alerts", len(pending), "message_ids", receipt.MessageIDs)
	return nil
}

// DigestText is the plain text of a storm digest: how many alerts it
// holds, the counts by alertname and severity, then the first line of at
// most format.MaxGroupLines alerts.
//
//	[DIGEST] 57 alerts during a storm
//	HighCPU (critical): 30
//	DiskFull (warning): 27
//
//	🔥 [FIRING] HighCPU (critical): CPU 97% on web-1
//	…
//	… and 47 more
//	Links:
//	- https://runbooks.example.com/high-cpu
func DigestText(alerts []*alert.Alert) string {
	type key struct{ name, severity string }
	counts := map[key]int{}
	for _, a := range alerts {
		name := a.Labels["alertname"]
		if name == "" {
			name = "alert"
		}
		counts[key{name, a.Labels["severity"]}]++
	}
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i].name+keys[i].severity < keys[j].name+keys[j].severity
	})
	var b strings.Builder
	b.WriteString("[DIGEST] " + strconv.Itoa(len(alerts)) + " alerts during a storm")
	for i, k := range keys {
		if i == format.MaxGroupLines {
			b.WriteString("\n… and " + strconv.Itoa(len(keys)-i) + " more kinds")
			break
		}
		line := oneLine(k.name)
		if k.severity != "" {
			line += " (" + oneLine(k.severity) + ")"
		}
		b.WriteString("\n" + line + ": " + strconv.Itoa(counts[k]))
	}
	b.WriteString("\n")
	for i, a := range alerts {
		if i == format.MaxGroupLines {
			b.WriteString("\n… and " + strconv.Itoa(len(alerts)-i) + " more")
			break
		}
		mark := format.FiringMark
		if a.Resolved() {
			mark = format.ResolvedMark
		}
		first, _, _ := strings.Cut(a.Text, "\n")
		if r := []rune(first); len(r) > 200 {
			first = string(r[:199]) + "…"
		}
		b.WriteString("\n" + mark + " " + oneLine(first))
	}
	if links := digestLinks(alerts); len(links) > 0 {
		b.WriteString("\nLinks:")
		for _, l := range links {
			b.WriteString("\n- " + l)
		}
	}
	return b.String()
}

// maxDigestLinks is how many links a digest lists.
const maxDigestLinks = 3

// digestLinks are the first distinct runbook and alert links of the
// alerts (runbook_url annotations, then generatorURL), http(s) only.
func digestLinks(alerts []*alert.Alert) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v any) {
		s, _ := v.(string)
		s = strings.TrimSpace(s)
		if len(out) == maxDigestLinks || seen[s] || strings.ContainsAny(s, " \t\r\n") ||
			!(strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) || len(s) > 512 {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	for _, a := range alerts {
		if ann, ok := a.Metadata["annotations"].(map[string]any); ok {
			add(ann["runbook_url"])
		}
	}
	for _, a := range alerts {
		add(a.Metadata["generatorURL"])
	}
	return out
}
