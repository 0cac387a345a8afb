package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

// DefaultDigestThreshold is the backlog of a chat beyond which its waiting
// alerts are collapsed into one digest message.
const DefaultDigestThreshold = 20

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
	if _, err := p.river.InsertTx(ctx, tx, messageArgs{Type: messageDigest, DigestID: id.String()}, nil); err != nil {
		return fmt.Errorf("queueing a digest: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("collecting a digest: %w", err)
	}
	p.metrics.digested.Add(float64(claimed))
	p.logger.InfoContext(ctx, "storm: alerts collapsed into a digest", "digest_id", id.String(), "alerts", claimed, "backlog", n)
	return nil
}

// digestDelivery is a storm digest: as many messages (pages) as its alerts
// need, each page's alerts marked DELIVERED once that page went out, so an
// alert is DELIVERED only when its own line was sent. A run after a
// failure or a crash sends only the pages whose alerts are not DELIVERED
// yet.
type digestDelivery struct {
	p     *Pipeline
	id    string
	pages []DigestPage
	// next is the page render looks at next; page the one being sent.
	next, page int
	// pending are the ids of the page's alerts not yet delivered, sources
	// their sources.
	pending, sources []string
	msg              alert.Message
}

func (d *digestDelivery) load(ctx context.Context) error {
	alerts, err := d.p.store.DigestAlerts(ctx, d.id)
	if err != nil {
		return err
	}
	// Pages are cut from every alert of the digest, in a fixed order, so a
	// later run cuts the same pages.
	d.pages = DigestPages(alerts, d.p.cfg.Format.Limit)
	return nil
}

func (d *digestDelivery) render(ctx context.Context) (bool, error) {
	for ; d.next < len(d.pages); d.next++ {
		d.pending, d.sources = nil, nil
		for _, a := range d.pages[d.next].Alerts {
			if a.Status != alert.StatusDelivered && a.Status != alert.StatusFailed {
				d.pending = append(d.pending, a.ID)
				d.sources = append(d.sources, a.Source)
			}
		}
		if len(d.pending) > 0 {
			break
		}
	}
	if d.next == len(d.pages) {
		return false, nil
	}
	d.page = d.next
	d.next++
	res := format.Format(d.pages[d.page].Text, nil, d.p.cfg.Format)
	if len(res.Cuts) > 0 {
		// DigestPages measures what Format keeps; a cut is a bug.
		d.p.logger.ErrorContext(ctx, "BUG: a storm digest page was cut", "digest_id", d.id, "page", d.page+1, "cuts", res.Cuts)
	}
	d.msg = toMessage(res)
	return true, nil
}

func (d *digestDelivery) send(ctx context.Context) (Receipt, error) {
	msg := d.msg
	return d.p.deliverer.Deliver(ctx, &alert.Alert{
		ID: d.id + "-" + strconv.Itoa(d.page+1), Source: "digest", Labels: d.pages[d.page].Alerts[0].Labels, Message: &msg,
	})
}

func (d *digestDelivery) delivered(ctx context.Context, r Receipt) error {
	p := d.p
	if err := p.store.DeliverDigestPart(ctx, d.id, d.pending, r.Destination, r.MessageIDs, d.msg, p.now().UTC()); err != nil {
		return err
	}
	for _, src := range d.sources {
		p.metrics.delivered.WithLabelValues(src, destinationKind(r.Destination)).Inc()
	}
	p.logger.InfoContext(ctx, "storm digest page delivered", "digest_id", d.id, "page", d.page+1, "pages", len(d.pages),
		"alerts", len(d.pending), "message_ids", r.MessageIDs)
	return nil
}

// failed marks the digest's alerts not yet delivered FAILED when the job
// ends.
func (d *digestDelivery) failed(ctx context.Context, f failure) error {
	if !f.final {
		return nil
	}
	return d.p.store.FailDigest(ctx, d.id, f.reason(), d.p.now().UTC())
}

// DigestPage is one message of a storm digest and the alerts it lists.
type DigestPage struct {
	Text   string // plain text, within the limit
	Alerts []*alert.Alert
}

// maxDigestLine caps one alert's line in a digest, in characters.
const maxDigestLine = 200

// DigestPages cuts a storm digest into messages of at most limit UTF-16
// units (format.DefaultLimit when 0) that together list every alert, one
// line each, in order. The first opens with how many alerts the digest
// holds and the counts by alertname and severity, and closes with a few of
// their links; the others say which alerts they continue with.
//
//	[DIGEST] 57 alerts during a storm
//	HighCPU (critical): 30
//	DiskFull (warning): 27
//
//	🔥 [FIRING] HighCPU (critical): CPU 97% on web-1
//	…
//	Links:
//	- https://runbooks.example.com/high-cpu
//
//	[DIGEST] continued: alerts 41–57 of 57
//
//	🔥 [FIRING] DiskFull (warning): disk 93% on db-2
//	…
func DigestPages(alerts []*alert.Alert, limit int) []DigestPage {
	if limit <= 0 {
		limit = format.DefaultLimit
	}
	lines := make([]string, len(alerts))
	for i, a := range alerts {
		mark := format.FiringMark
		if a.Resolved() {
			mark = format.ResolvedMark
		}
		first, _, _ := strings.Cut(a.Text, "\n")
		if r := []rune(oneLine(first)); len(r) > maxDigestLine {
			first = string(r[:maxDigestLine-1]) + "…"
		}
		lines[i] = mark + " " + oneLine(first)
	}
	head := digestHead(alerts)
	var links string
	if ls := digestLinks(alerts); len(ls) > 0 {
		links = "\nLinks:\n- " + strings.Join(ls, "\n- ")
	}
	var pages []DigestPage
	for start := 0; start < len(alerts); {
		first := len(pages) == 0
		header := head
		if !first {
			// The widest form of the continuation header, so that the
			// page's real one fits too.
			header = continuation(len(alerts), len(alerts), len(alerts))
		}
		n := markdownv2.UTF16Len(header) + len("\n")
		if first {
			n += markdownv2.UTF16Len(links)
		}
		end := start
		for end < len(alerts) {
			add := len("\n") + markdownv2.UTF16Len(lines[end])
			if n+add > limit && end > start {
				break
			}
			n += add
			end++
		}
		if !first {
			header = continuation(start+1, end, len(alerts))
		}
		text := header + "\n\n" + strings.Join(lines[start:end], "\n")
		if first {
			text += links
		}
		pages = append(pages, DigestPage{Text: text, Alerts: alerts[start:end]})
		start = end
	}
	return pages
}

func continuation(from, to, total int) string {
	return "[DIGEST] continued: alerts " + strconv.Itoa(from) + "–" + strconv.Itoa(to) + " of " + strconv.Itoa(total)
}

// digestHead is the first page's header: the count, and the counts by
// alertname and severity (at most format.MaxGroupLines kinds).
func digestHead(alerts []*alert.Alert) string {
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
		if r := []rune(line); len(r) > maxDigestLine {
			line = string(r[:maxDigestLine-1]) + "…"
		}
		if k.severity != "" {
			line += " (" + oneLine(k.severity) + ")"
		}
		b.WriteString("\n" + line + ": " + strconv.Itoa(counts[k]))
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
